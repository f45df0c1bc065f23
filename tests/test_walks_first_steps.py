"""The first GD steps on a sample (issue 13 (a), (b)): what V^(1), V^(2) are and what the model predicts."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.studies.walks import first_steps, experiment
from onelayer.walks import ring, theory
from onelayer.walks.data import walk_data


def test_first_step_by_counting_equals_the_trained_step():
    data = walk_data(6, 0.7, 31, 400, seed=3)
    exp = experiment.setup_experiment(0.7, N=31, M=200)
    trained = exp.model.train(exp.model.init(), data, steps=1, lr=1.0).params["V"].numpy()
    counted = first_steps.first_step_from_counts(data)
    assert np.abs(trained - counted["V1"]).max() < 1e-13
    # rows are scaled by the label frequencies: row y sums to (eta/eps) ((N-1)/N) freq(y)
    freq = np.bincount(data.labels.numpy(), minlength=6) / 400
    assert np.allclose(counted["V1"].sum(axis=1), 10 * 30 / 31 * freq, atol=1e-13)


@pytest.mark.parametrize("p", [0.5, 0.7])
def test_sample_steps_one_to_three(p):
    rows = first_steps.first_steps_table(p, steps=3)
    one, two, three = rows
    # step 1: uniform attention, nearly every input gets the most frequent training label
    assert one["parent_attention"] == pytest.approx(1 / 97, abs=1e-12)
    assert one["predicts_top_label"] > 0.95
    assert one["top_label_columns"] >= 4
    assert one["V_circulant_deviation"] > 0.01
    # step 2: the attention is on the parent and the model predicts argmax of V's parent column,
    # which is still frequency-dominated: far from the Bayes accuracy
    assert two["parent_attention"] > 0.9999
    assert two["predicts_V_column"] == 1.0  # exact: mean of booleans (integer counts)
    assert two["conditional_accuracy"] < ring.bayes_accuracy(p) - 0.2
    # the positional gap beats the token-logit noise by more than an order of magnitude
    assert two["positional_gap"] > 10 * two["token_logit_spread"]
    # step 3: every prediction is Bayes-optimal
    assert three["conditional_accuracy"] == pytest.approx(ring.bayes_accuracy(p), abs=1e-9)


def test_population_is_optimal_one_step_earlier():
    rows = first_steps.first_steps_table(0.7, N=13, M=100, train="population", steps=2)
    assert rows[0]["V_circulant_deviation"] < 1e-14
    assert rows[0]["V_column_max_offsets"] == [1] * 6
    assert rows[1]["conditional_accuracy"] == pytest.approx(0.7, abs=1e-9)


def test_first_steps_validation():
    with pytest.raises(ValueError, match="p"):
        first_steps.first_steps_table(1.0)
    with pytest.raises(ValueError, match="train"):
        first_steps.first_steps_table(0.5, train="all")
    with pytest.raises(ValueError, match="V"):
        first_steps.column_max_offsets(np.ones((2, 3)))
    with pytest.raises(TypeError, match="data"):
        first_steps.first_step_from_counts("walks")


def test_column_max_offsets_ties_never_decided_by_round_off():
    # p = 1/2: the closed form ties at offsets 0, +1, -1 in every column; round-off-sized moves of either sign
    # must not change the answer (the smallest tied offset, 0), while a real gap does
    V = theory.lemma_c1_value(6, 0.5, 13, 1.0, 0.1)
    rng = np.random.default_rng(0)
    for _ in range(5):
        moved = V * (1 + 1e-13 * rng.standard_normal(V.shape))
        assert first_steps.column_max_offsets(moved) == [0] * 6
    shifted = V.copy()
    shifted[1, 0] += 1e-3 * V.max()  # column 0: offset +1 now strictly largest
    assert first_steps.column_max_offsets(shifted)[0] == 1
    with pytest.raises(ValueError, match="square"):
        first_steps.column_max_offsets(np.ones((2, 3)))


def test_maximal_offsets_list_every_tie_and_column_max_offsets_is_the_smallest():
    # the closed form at p = 1/2 ties at offsets 0, +1, -1 in every column, whatever round-off-sized moves it gets
    V = theory.lemma_c1_value(6, 0.5, 13, 1.0, 0.1)
    rng = np.random.default_rng(1)
    for _ in range(3):
        moved = V * (1 + 1e-13 * rng.standard_normal(V.shape))
        assert [first_steps.maximal_offsets(moved, s) for s in range(6)] == [[0, 1, 5]] * 6
    assert first_steps.maximal_offsets(theory.lemma_c1_value(6, 0.7, 13, 1.0, 0.1)) == [1]
    shifted = V.copy()
    shifted[5, 0] += 1e-3 * V.max()  # column 0: offset -1 (row 5) now strictly largest
    assert first_steps.maximal_offsets(shifted) == [5] and first_steps.column_max_offsets(shifted)[0] == 5
    with pytest.raises(ValueError, match="column"):
        first_steps.maximal_offsets(V, 6)


def test_first_steps_samples_members_equal_separate_runs():
    small = dict(N=25, M=100, n_train=200, n_test=200)
    rows = first_steps.first_steps_samples(0.7, seeds=[0, 5], **small)
    for r in rows:
        table = first_steps.first_steps_table(0.7, seed=r["seed"], **small)
        data = walk_data(6, 0.7, 25, 200, seed=r["seed"])
        freq = np.bincount(data.labels.numpy(), minlength=6)
        assert r["top_labels"] == np.flatnonzero(freq == freq.max()).tolist()  # exact: integer counts
        for t, row in enumerate(table, start=1):
            assert r[f"top_label_columns_{t}"] == row["top_label_columns"]
            assert r[f"plus_one_columns_{t}"] == sum(o == 1 for o in row["V_column_max_offsets"])
            assert r[f"conditional_accuracy_{t}"] == pytest.approx(row["conditional_accuracy"], abs=1e-12)  # tol: sums
            assert r[f"optimal_{t}"] == (abs(row["conditional_accuracy"] - 0.7) < 1e-9)
            for key, name in (("circulant_deviation", "V_circulant_deviation"), ("parent_attention", "parent_attention"),
                              ("token_logit_spread", "token_logit_spread"), ("positional_gap", "positional_gap"),
                              ("predicts_top_label", "predicts_top_label")):
                assert r[f"{key}_{t}"] == pytest.approx(row[name], abs=1e-9), key  # tol: batched sums
    with pytest.raises(ValueError, match="seeds"):
        first_steps.first_steps_samples(0.7, seeds=[])
    with pytest.raises(ValueError, match="p"):
        first_steps.first_steps_samples(1.0)
