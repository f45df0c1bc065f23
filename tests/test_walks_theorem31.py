"""Theorem 3.1 (a random walk is learned): Lemma C.5, optimal accuracy after a constant number of steps,
attention on the parent, and the direction and growth of V (where our runs differ from the paper's item 3)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.studies.walks import analysis, experiment
from onelayer.walks import theory
from onelayer.walks.data import walk_population


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


def test_lemma_c5_on_the_exact_population():
    exp = experiment.setup_experiment(0.7, N=13, M=100, n_train=10, n_test=10)
    check = theory.lemma_c5_check(exp.model, walk_population(6, 0.7, 13))
    assert check["q_tok_rel_spread"] < 1e-10  # W_12 proportional to 1 p_N^T
    assert check["max_abs_W11_W21"] == 0.0  # exact: product with the zero token part of x~_N
    assert check["parent_attention_min"] > 0.9999
    assert check["min_log_odds"] > 8


@pytest.mark.parametrize("p", [0.5, 0.7])
def test_optimal_after_a_constant_number_of_steps_at_paper_size(p):
    exp = experiment.setup_experiment(p)
    hist = experiment.run(exp, steps=12, keep_V=False, keep_profile=False)
    optimal = np.abs(hist["conditional_accuracy"] - exp.bayes_accuracy) < experiment.OPTIMAL_TOL
    assert analysis.steps_to_optimal(optimal) <= 4
    assert not optimal[0]  # zero init is not optimal: there is something to learn
    assert hist.final("parent_attention") > 1 - 1e-6
    if p == 0.7:  # unique optimum: predictions coincide with the Bayes rule's
        assert hist.final("test_accuracy") == pytest.approx(exp.bayes_test_accuracy, abs=1e-12)


def test_steps_to_optimal_does_not_grow_with_the_size():
    rows = experiment.steps_to_optimal_table(0.7, [(5, 25), (8, 97)], steps=8, n_train=500, n_test=300)
    assert all(r["T0"] <= 4 for r in rows)


def test_log_odds_grow_with_N_only_when_M_grows_like_N_to_three_halves():
    power = experiment.log_odds_vs_N(0.7, [25, 73, 145], M_rule="power", n=4000)
    fixed = experiment.log_odds_vs_N(0.7, [49, 97, 193], M_rule="fixed", n=4000)
    assert np.all(np.diff(power["median_min_log_odds"]) > 0)
    assert np.all(np.diff(fixed["median_min_log_odds"]) < 0)
    assert fixed["parent_attention"][-1] < 0.99 < power["parent_attention"][-1]


def test_direction_of_V_is_sqrt_of_Pi_transpose_not_Pi_transpose():
    res = experiment.direction_run(0.7, steps=400, n_records=12)
    assert res["d_sqrt"][-1] < 0.5 * res["d_Pi"][-1]
    assert res["d_Pi"][-1] > 0.15  # the paper's target is not approached
    assert res["ratio"][-1] == pytest.approx(np.sqrt(0.7 / 0.3), rel=0.1)
    assert res["ratio"][-1] < 0.75 * (0.7 / 0.3)
    assert res["norm"][-1] / np.sqrt(2 * res["steps"][-1]) == pytest.approx(1.0, abs=0.03)
    assert res["out_sqrt"][-1] < 0.5 * res["out_Pi"][-1]
    slope = np.polyfit(np.log(res["steps"][-6:]), np.log(res["d_empirical"][-6:]), 1)[0]
    assert slope == pytest.approx(-0.5, abs=0.1)


def test_at_p_one_half_both_targets_coincide():
    targets = theory.value_targets(6, 0.5)
    assert theory.direction_distance(targets["Pi^T"], targets["sqrt(Pi^T)"]) < 1e-15
    assert theory.direction_distance(theory.value_targets(6, 0.7)["Pi^T"], theory.value_targets(6, 0.7)["sqrt(Pi^T)"]) > 0.1


def test_reduced_dynamics_grow_like_square_roots():
    hi = theory.reduced_value_dynamics(0.9, 6, 100_000)
    lo = theory.reduced_value_dynamics(0.1, 6, 100_000)
    assert hi[-1] / lo[-1] == pytest.approx(3.0, rel=0.02)
    assert hi[-1] == pytest.approx(np.sqrt(2 * 0.9 * 100_000 / 6), rel=0.02)


def test_steps_to_optimal_helper():
    assert analysis.steps_to_optimal([False, False, True, True]) == 2
    assert analysis.steps_to_optimal([True, False, True]) == 2
    assert np.isnan(analysis.steps_to_optimal([True, False]))
