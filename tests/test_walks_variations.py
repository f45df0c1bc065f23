"""Variations of the walks model and task (book/walks/variations.ipynb)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from onelayer.walks.model import WalkTransformer
from onelayer.walks import ring, theory
from onelayer.figures import walks_variations as variation_figures
from onelayer.studies.walks.variations import lag, logit_scale, no_positions, non_circulant, residual


# -- residual, logit scale, no positions -----------------------------------------------------------------------------------

def test_residual_is_exactly_a_no_op():
    res = residual.residual_check(steps=3)
    for key in ("output_diff", "grad_V_diff", "grad_W_diff", "V_diff", "W_diff"):
        assert res[key] == 0.0, key  # exact: the residual adds an exact zero, all else is the same ops
    assert res["output_scale"] > 0 and res["V_scale"] > 0.1 and res["W_scale"] > 0


def test_logit_scale_lemma_exact_reparametrisation():
    eq = logit_scale.logit_scale_equivalence(0.7, steps=15)
    assert eq["c2"] == pytest.approx(1 / 1006)
    assert eq["max_V_diff"] < 1e-10
    assert eq["max_logit_diff"] < 1e-8 * max(1.0, eq["max_logit"])
    assert eq["max_logit"] > 1.0  # the attention did move: the check is not vacuous


def test_logit_scale_delays_but_reaches_the_same_end_state():
    rows = {r["logit_scale"]: r for r in logit_scale.logit_scale_table((0.7,), steps=40)}
    plain, scaled = rows["one"], rows["inv_sqrt_d"]
    assert plain["T0"] <= 3
    assert 10 <= scaled["T0"] <= 40
    assert scaled["final_accuracy"] == pytest.approx(plain["final_accuracy"])
    assert scaled["parent_attention"] > 0.99


def test_no_positions_attention_never_moves():
    (row,) = no_positions.no_position_table((0.7,), steps=40)
    assert row["max_uniform_dev"] <= 1e-15  # tol: q stays 0, S = 1/97 up to the softmax's rounding; a moved S differs by > 0.01
    assert abs(row["accuracy"] - 1 / 6) < 0.05 and row["bayes"] == 0.7


# -- lag 2 ----------------------------------------------------------------------------------------------------------------

def test_lag_walks_structure_and_population():
    s = lag.lag_walks(6, 0.7, 20, 200, lag=2, seed=1)
    d = torch.remainder(s[:, 2:] - s[:, :-2], 6)
    assert set(d.unique().tolist()) <= {1, 5}
    assert abs(float((d == 1).double().mean()) - 0.7) < 0.05
    pop = lag.lag_population(6, 0.7, 8, lag=2)
    assert pop.B == 36 * 2**6 and float(pop.weights.sum()) == pytest.approx(1.0)


def test_lag_formula_reduces_to_lemma_c1():
    assert np.allclose(lag.lag_c1_value(6, 0.7, 20, lag=1), theory.lemma_c1_value(6, 0.7, 20), atol=1e-15)


def test_lag2_authors_prediction():
    r = lag.lag_check(0.7, steps=4)
    assert r["V1_error"] < 1e-14 and r["closed_form_circulant"] and r["closed_form_offsets"] == [1]
    # measured on the exact population: circulant, every column at offset +1
    assert r["population_V1_circulant_deviation"] < 1e-14
    assert r["population_V1_column_max_offsets"] == [1] * 6
    # measured on the 1000 sampled sequences: not circulant, and the columns do not all peak at +1
    assert r["sample_V1_circulant_deviation"] > 0.01
    assert r["sample_V1_column_max_offsets"] != [1] * 6
    assert r["lag_attention"][2] > 0.999 and r["parent_attention"][2] < 1e-3
    assert r["optimal_fraction"][3] == pytest.approx(1.0)


# -- general Markov chains --------------------------------------------------------------------------------------------------

def test_chain_helpers():
    Pi = non_circulant.random_transition_matrix(5, seed=3, concentration=0.5)
    assert np.allclose(Pi.sum(axis=1), 1.0) and (Pi >= 0).all()
    mu = non_circulant.stationary_distribution(Pi)
    assert np.allclose(mu @ Pi, mu, atol=1e-12) and mu.sum() == pytest.approx(1.0)
    D = non_circulant.random_doubly_stochastic(6, seed=1)
    assert np.allclose(D.sum(axis=0), 1.0) and np.allclose(D.sum(axis=1), 1.0)
    assert np.allclose(non_circulant.stationary_distribution(D), 1 / 6)
    assert not ring.is_circulant(D, tol=1e-12)
    s = non_circulant.markov_walks(Pi, 30, 4000, seed=0)
    counts = np.zeros((5, 5))
    np.add.at(counts, (s[:, :-1].numpy().ravel(), s[:, 1:].numpy().ravel()), 1)
    assert np.abs(counts / counts.sum(axis=1, keepdims=True) - Pi).max() < 0.03


def test_chain_first_step_formula_exact_on_population():
    Pi = non_circulant.random_transition_matrix(4, seed=2)
    pop = non_circulant.markov_population(Pi, 6)
    assert float(pop.weights.sum()) == pytest.approx(1.0)
    m = WalkTransformer(K=4, N=6, M=40)
    V1 = m.train(m.init(), pop, steps=1).params["V"].numpy()
    assert np.abs(V1 - non_circulant.chain_c1_value(Pi, 6)).max() < 1e-14
    ringPi = ring.transition_matrix(6, 0.7)
    assert np.allclose(non_circulant.chain_c1_value(ringPi, 30), theory.lemma_c1_value(6, 0.7, 30), atol=1e-14)


def test_non_uniform_stationary_law_breaks_parent_selection():
    Pi = non_circulant.random_transition_matrix(6, seed=0)
    res = non_circulant.chain_run(Pi, steps=40, record_every=20)
    assert res["token_spread_step2"] > 10 and res["parent_attention"][-1] < 0.5
    assert res["test_accuracy"][-1] < res["bayes_test"] - 0.05


def test_doubly_stochastic_chain_is_learned():
    Pi = non_circulant.random_doubly_stochastic(6, seed=1)
    res = non_circulant.chain_run(Pi, steps=60, record_every=20)
    assert res["parent_step2"] > 0.999 and res["T0"] <= 3
    assert res["test_accuracy"][-1] == pytest.approx(res["bayes_test"])
    assert res["d"]["sqrt(Pi^T)"][-1] < res["d"]["Pi^T"][-1]


# -- figures, widget, validation ---------------------------------------------------------------------------------------------

def test_figures_and_widget_callback():
    fig = variation_figures.chain_explorer(seed=1, steps=3)
    assert len(fig.axes) >= 3
    plt.close(fig)
    fig = variation_figures.figure_lag(lag.lag_check(0.7, steps=2))
    assert len(fig.axes) >= 3
    plt.close("all")


def test_variations_validation_errors():
    with pytest.raises(ValueError, match="lag"):
        lag.lag_walks(6, 0.7, 10, 5, lag=0)
    with pytest.raises(ValueError, match="N must"):
        lag.lag_population(6, 0.7, 40)
    with pytest.raises(ValueError, match="p must"):
        lag.lag_population(6, 1.0, 8)
    with pytest.raises(ValueError, match="concentration"):
        non_circulant.random_transition_matrix(6, concentration=0.0)
    with pytest.raises(ValueError, match="weights"):
        non_circulant.random_doubly_stochastic(6, weights=(0.5, 0.6))
    with pytest.raises(ValueError, match="row-stochastic"):
        non_circulant.markov_walks(np.ones((3, 3)), 5, 2)
    with pytest.raises(ValueError, match="start"):
        non_circulant.markov_walks(np.eye(3), 5, 2, start="first")
    with pytest.raises(ValueError, match="N must"):
        non_circulant.markov_population(np.full((6, 6), 1 / 6), 9)
    with pytest.raises(ValueError, match="steps"):
        logit_scale.logit_scale_table(steps=0)


def test_the_chain_first_step_and_the_logit_scale_speed_of_small_cases():
    Pi = non_circulant.random_transition_matrix(4, seed=2)
    first = non_circulant.chain_first_step(Pi, small=(4, 6, 40), seed=2, N=30)
    assert first["B"] == 4 ** 6 and first["small_error"] < 1e-14  # tol: one float64 GD step against the closed form
    mu = non_circulant.stationary_distribution(Pi)
    assert np.array_equal(first["mu"], mu) and first["full_N"] == 30  # exact: the same function on the same matrix
    assert first["closed_max"] == pytest.approx(float(non_circulant.chain_c1_value(Pi, 30).max()), abs=0)
    assert logit_scale.logit_scale_speed(0.7, steps=3) < 1e-12  # tol: round-off of 3 steps
