"""Theorem 4.1 (a deterministic walk is not learned): exact invariants for several losses and schedules,
and the instability of the symmetric state under round-off and perturbations."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.walks import failure, walk_population
from onelayer.walks.model import rowwise_matmul, batch_sum


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


def test_token_average_is_constant_only_when_N_is_rK_plus_1():
    assert float((walk_population(6, 1.0, 97).token_average() - 1 / 6).abs().max()) == 0.0
    assert float((walk_population(5, 0.0, 51).token_average() - 1 / 5).abs().max()) == 0.0
    other = walk_population(6, 1.0, 98).token_average()
    assert float((other.max(0).values - other.min(0).values).max()) > 0.005


def test_invariants_hold_exactly_for_every_loss_and_schedule():
    rows = failure.symmetry_table(steps=40)
    assert len(rows) == 12
    for r in rows:
        assert r["max_logit_spread"] == 0.0, r
        assert r["min_accuracy"] == r["max_accuracy"] == pytest.approx(1 / 6, abs=1e-15), r
        assert r["max_V_dev"] <= 1e-15 * max(1.0, r["max_abs_V_mean"]), r


@pytest.mark.parametrize("K,r", [(20, 5), (5, 19)])
def test_symmetry_is_exact_for_other_ring_sizes(K, r):
    exp = failure.deterministic_setup(K, r)
    hist = exp.model.train(exp.model.init(), exp.train, steps=30, lr=1.0, record=failure.symmetry_records(exp.model, exp.train))
    rec = failure.unpack_symmetry(hist)
    assert np.all(rec["logit_spread"] == 0.0)
    assert np.all(rec["V_dev"] == 0.0)
    assert np.all(np.abs(rec["accuracy"] - 1 / K) < 1e-15)


def test_symmetric_arithmetic_helpers_are_bit_identical():
    u = torch.full((7, 20), 1 / 101)
    V = torch.full((20, 20), 0.1234567)
    f = rowwise_matmul(u, V.T)
    assert float(f.max() - f.min()) == 0.0
    X = torch.rand(11, 3, 5)
    assert torch.allclose(batch_sum(X), X.sum(0), atol=1e-14)
    same = torch.full((13, 101), 1 / 3)
    assert float(batch_sum(same).max() - batch_sum(same).min()) == 0.0


def test_sinusoidal_round_off_breaks_the_symmetry_and_the_model_then_learns():
    exp = failure.deterministic_setup(6, 16, train="sample", positions="sin")
    hist = failure.escape_run(exp, steps=30)
    step = failure.escape_step(hist["logit_spread"])
    assert 5 <= step <= 25
    assert 0 < hist.at("logit_spread", 3) < 1e-8  # starts at round-off level
    assert hist.final("test_accuracy") == pytest.approx(1.0)
    assert hist.final("class_mass") > 0.99  # all attention on one residue class of positions

    exact = failure.escape_run(failure.deterministic_setup(6, 16, train="sample", positions="exact"), steps=30)
    assert np.all(exact["logit_spread"] == 0.0)
    assert exact.final("test_accuracy") < 0.25


def test_escape_time_grows_logarithmically_with_the_perturbation():
    res = failure.perturbation_escape([1e-14, 1e-8, 1e-2], steps=30)
    assert np.all(np.diff(res["escape_step"]) < 0)
    assert res["escape_step"][0] <= 20
    assert np.allclose(res["final_accuracy"], 1.0)


def test_failure_validation():
    with pytest.raises(ValueError, match="p"):
        failure.deterministic_setup(6, 16, p=0.5)
    with pytest.raises(ValueError, match="train"):
        failure.deterministic_setup(6, 16, train="both")
    with pytest.raises(ValueError, match="threshold"):
        failure.escape_step([0.0, 2.0], threshold=0.0)
    assert np.isnan(failure.escape_step([0.0, 0.5]))
