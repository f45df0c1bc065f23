"""Direction of V under each loss, and the remainder of Lemma C.7 (issue 13, item 3)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.studies.walks import direction
from onelayer.walks import ring


def test_each_loss_has_its_own_direction():
    rows = {r["loss"]: r for r in direction.direction_by_loss(0.7, steps=200)}
    log, sq, ce = rows["log"], rows["squared"], rows["cross_entropy"]
    for r in rows.values():  # the accuracy is optimal under every loss
        assert r["conditional_accuracy"] == pytest.approx(0.7, abs=1e-9)
    # log-loss: the square root (ratio sqrt(7/3) = 1.53, not 7/3 = 2.33)
    assert log["d_sqrt"] < log["d_Pi"] and 0.35 <= log["best_power"] <= 0.6
    assert abs(log["ratio"] - np.sqrt(7 / 3)) < abs(log["ratio"] - 7 / 3)
    # squared loss: Pi^T itself
    assert sq["d_Pi"] < sq["d_sqrt"] and 0.85 <= sq["best_power"] <= 1.1
    assert abs(sq["ratio"] - 7 / 3) < abs(sq["ratio"] - np.sqrt(7 / 3))
    # cross-entropy: negative entries off the support, far from both
    assert ce["off_support"] < -0.1 and min(ce["d_Pi"], ce["d_sqrt"]) > 0.3


def test_best_power_and_residual_helpers_on_known_matrices():
    PiT = ring.transition_matrix(6, 0.8).T
    assert direction.best_power(3.0 * np.sqrt(PiT), PiT)[0] == pytest.approx(0.5)
    assert direction.best_power(PiT, PiT)[0] == pytest.approx(1.0)
    beta, rf, rm = direction.residual_to_line(2.5 * PiT, PiT)
    assert beta == pytest.approx(2.5) and rf < 1e-12 and rm < 1e-12


def test_lemma_c7_remainder_grows_for_p_not_one_half():
    r = direction.lemma_c7_remainder(0.7, steps=300, n_records=8)
    assert r["residual_F"][-1] > 2.0 * r["residual_F"][2]
    assert r["slope"] > 0.25
    assert np.all(np.diff(r["residual_F"][2:]) > 0)


def test_direction_validation():
    with pytest.raises(ValueError, match="loss"):
        direction.direction_by_loss(0.7, loss_names=("hinge",))
    with pytest.raises(ValueError, match="p"):
        direction.lemma_c7_remainder(0.0)


def test_direction_samples_members_equal_separate_runs():
    rows = direction.direction_samples(0.7, seeds=[0, 3], direction_steps=20, remainder_steps=40, n_records=6)
    assert [r["seed"] for r in rows] == [0, 3]
    for r in rows:
        by_loss = {x["loss"]: x for x in direction.direction_by_loss(0.7, loss_names=("log", "squared"), steps=20,
                                                                      seed=r["seed"])}
        for name in ("log", "squared"):
            assert r[f"{name}_best_power"] == pytest.approx(by_loss[name]["best_power"], abs=1e-12)  # tol: grid value
            assert r[f"{name}_d_Pi"] == pytest.approx(by_loss[name]["d_Pi"], abs=1e-10)  # tol: batched sums
            assert r[f"{name}_d_sqrt"] == pytest.approx(by_loss[name]["d_sqrt"], abs=1e-10)  # tol: batched sums
    c7 = direction.lemma_c7_remainder(0.7, steps=40, n_records=6, seed=3)
    assert rows[1]["residual_first"] == pytest.approx(c7["residual_F"][0], rel=1e-10)  # tol: batched sums
    assert rows[1]["residual_last"] == pytest.approx(c7["residual_F"][-1], rel=1e-10)  # tol: batched sums
    assert rows[1]["slope"] == pytest.approx(c7["slope"], abs=1e-8)  # tol: batched sums
    with pytest.raises(ValueError, match="remainder_steps"):
        direction.direction_samples(0.7, seeds=[0], direction_steps=50, remainder_steps=40)
    with pytest.raises(ValueError, match="loss"):
        direction.direction_samples(0.7, seeds=[0], loss_names=("hinge",))
