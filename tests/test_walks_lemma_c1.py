"""Lemma C.1 (first GD step from zero) and Lemma D.1 (its deterministic-walk analogue), checked with the
functions the chapters call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.walks import ring, theory
from onelayer.walks.data import walk_population
from onelayer.studies.walks import experiment
from onelayer.studies.walks.theorem41 import deterministic_setup


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


@pytest.mark.parametrize("K,p", [(5, 0.7), (6, 0.5), (6, 0.3), (7, 0.9)])
def test_first_step_equals_closed_form_on_the_exact_population(K, p):
    N = 11
    exp = experiment.setup_experiment(p, K=K, N=N, M=60)
    check = experiment.lemma_c1_check(exp.model, walk_population(K, p, N), p)
    assert check["max_error"] < 1e-13 * check["max_entry"] * 100  # round-off only
    assert check["max_abs_q1"] == 0.0  # exact: every q gradient is a product with V^(0) = 0
    # Lemma C.2 on the matrix measured on the population (not on the formula)
    assert check["V1_circulant"] and check["V1_circulant_deviation"] < 1e-14
    # Lemma C.3 on the measured matrix: every column peaks at offset +1 (p > 1/2) or -1 (p < 1/2)
    if p != 0.5:
        assert check["V1_column_max_offsets"] == [1 if p > 0.5 else K - 1] * K


def test_closed_form_scales_with_eta_and_epsilon():
    base = theory.lemma_c1_value(6, 0.7, 21, 1.0, 0.1)
    assert np.allclose(theory.lemma_c1_value(6, 0.7, 21, 2.0, 0.1), 2 * base, rtol=1e-14)
    assert np.allclose(theory.lemma_c1_value(6, 0.7, 21, 1.0, 0.2), base / 2, rtol=1e-14)
    # row/column sums: each power of Pi^T is stochastic, so every column sums to eta (N-1)/(eps N K)
    assert np.allclose(base.sum(axis=0), (21 - 1) / (0.1 * 21 * 6))


@pytest.mark.parametrize("p,expected", [(0.7, [1]), (0.3, [5]), (0.5, [0, 1, 5])])
def test_location_of_the_maximum_lemma_c3_closed_form(p, expected):
    # a property of the population formula only; the measured V(1) on 50 walks is another object
    exp = experiment.setup_experiment(p, N=97, n_train=50, n_test=10)
    check = experiment.lemma_c1_check(exp.model, exp.train, p)
    assert check["closed_form_max_offsets"] == expected
    assert check["closed_form_circulant"]
    assert not {"circulant", "max_offsets"} & set(check)  # no alias keys that describe the formula under data's name


@pytest.mark.parametrize("p", [0.5, 0.7])
def test_on_the_paper_sample_v1_is_not_circulant_and_columns_follow_label_frequencies(p):
    exp = experiment.setup_experiment(p)
    check = experiment.lemma_c1_check(exp.model, exp.train, p)
    assert not check["V1_circulant"]
    assert check["V1_circulant_deviation"] > 0.01  # of entries about 0.28
    freq = np.bincount(exp.train.labels.numpy(), minlength=6)
    frequent = set(np.argsort(-freq)[:2].tolist())  # the two most frequent training labels
    rows = [(s + o) % 6 for s, o in enumerate(check["V1_column_max_offsets"])]
    assert sum(r in frequent for r in rows) >= 5
    assert check["V1_column_max_offsets"] != [1] * 6  # Lemma C.3 does not hold on this sample


@pytest.mark.parametrize("p", [0.5, 0.7])
def test_first_step_on_the_paper_sample_is_close_to_the_population(p):
    exp = experiment.setup_experiment(p)
    check = experiment.lemma_c1_check(exp.model, exp.train, p)
    assert check["max_abs_q1"] == 0.0  # exact: every q gradient is a product with V^(0) = 0
    assert check["max_error"] < 0.05  # sampling noise of 1000 walks; the largest entry is about 0.28
    assert check["max_error"] > 1e-6  # and it *is* sampling noise, not an exact identity


@pytest.mark.parametrize("loss", ["log", "squared", "cross_entropy"])
def test_lemma_d1_all_entries_equal(loss):
    exp = deterministic_setup(6, 16, loss=loss)
    V1 = exp.model.train(exp.model.init(), exp.train, steps=1, lr=1.0).params["V"]
    if loss == "cross_entropy":  # the expected gradient vanishes: V(1) is round-off
        assert float(V1.abs().max()) < 1e-16
    else:
        assert float(V1.max() - V1.min()) <= 1e-14 * float(V1.abs().max())  # tol: rotated sums, equal only by op order
    assert float(V1[0, 0]) == pytest.approx(theory.lemma_d1_entry(6, 97, 1.0, loss, 0.1), abs=1e-15)
    if loss == "log":
        assert theory.lemma_d1_entry(6, 97, 1.0, "log", 0.1) == pytest.approx(0.27491, abs=1e-5)


def test_theory_validation():
    with pytest.raises(ValueError, match="eta"):
        theory.lemma_c1_value(6, 0.5, 10, eta=0.0)
    with pytest.raises(ValueError, match="loss"):
        theory.lemma_d1_entry(6, 97, loss="hinge")
    with pytest.raises(ValueError, match="shape"):
        theory.direction_distance(np.ones((2, 2)), np.ones((3, 3)))
    assert ring.bayes_accuracy(0.5) == 0.5
