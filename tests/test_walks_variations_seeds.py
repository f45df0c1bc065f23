"""The logit scale and the lag-2 parent over seeds (onelayer.studies.walks.variations.seeds): the stored study against a
recomputation, the batched runs against the chapter's single runs, and validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from onelayer.studies import registry, runner
from onelayer.studies.walks.variations import lag, logit_scale
from onelayer.studies.walks.variations import seeds as vs

FULL = vs.STUDY.settings


@pytest.fixture(scope="module")
def stored():
    return registry.load(vs.STUDY.name)["summary"]


def test_the_stored_study_is_complete(stored):
    content = registry.load(vs.STUDY.name)
    assert content["quick"] is False and content["settings"]["seeds"] == FULL.seeds >= 20
    n = FULL.seeds
    assert len(stored["logit_scale"]) == n * len(FULL.scale_ps) and len(stored["lag"]) == n * len(FULL.lag_ps)
    for r in stored["logit_scale"]:
        assert r["T0_one"] == 3  # exact: an integer step; scale 1 selects the parent at step 2 on every stored seed
        assert math.isnan(r["T0_inv_sqrt_d"]) or r["T0_inv_sqrt_d"] > r["T0_one"]


@pytest.mark.recompute
def test_a_stored_point_is_recomputed(stored):
    """Seed 3 at p = 0.7 of both experiments, recomputed alone (the batch of one member)."""
    (live,) = vs.logit_scale_seeds((0.7,), seeds=(3,), steps=FULL.scale_steps)
    (row,) = [r for r in stored["logit_scale"] if r["p"] == 0.7 and r["seed"] == 3]
    for key in ("T0_one", "T0_inv_sqrt_d"):
        assert live[key] == row[key] or (math.isnan(live[key]) and math.isnan(row[key])), key  # exact: integer steps
    for key in ("optimal_one", "optimal_inv_sqrt_d", "parent_one", "parent_inv_sqrt_d"):
        assert live[key] == pytest.approx(row[key], rel=1e-9, abs=1e-12), key  # tol: batched chunks move round-off
    (live,) = vs.lag_seeds((0.7,), seeds=(3,), steps=FULL.lag_steps)
    (row,) = [r for r in stored["lag"] if r["p"] == 0.7 and r["seed"] == 3]
    assert live["T0"] == row["T0"] and live["top_lag_end"] == row["top_lag_end"]  # exact: integers
    assert np.allclose(live["lag_attention"], row["lag_attention"], rtol=1e-9, atol=1e-12)  # tol: as above


def test_seed_zero_is_the_chapters_single_run():
    """The batched runs of seed 0 give the steps and attentions of the chapter's separate runs."""
    single = {r["logit_scale"]: r for r in logit_scale.logit_scale_table((0.7,), steps=30)}
    (batched,) = vs.logit_scale_seeds((0.7,), seeds=(0,), steps=30)
    for scale in vs.SCALES:
        assert batched[f"T0_{scale}"] == single[scale]["T0"]  # exact: integer steps
        assert batched[f"parent_{scale}"] == pytest.approx(single[scale]["parent_attention"], rel=1e-9)  # tol: round-off
    check = lag.lag_check(0.7, steps=3)
    (seeded,) = vs.lag_seeds((0.7,), seeds=(0,), steps=3)
    assert np.allclose(seeded["lag_attention"], check["lag_attention"][1:4], rtol=1e-9, atol=1e-12)  # tol: round-off


@pytest.mark.recompute
def test_the_cheapest_stored_member_is_recomputed():
    """The cheapest member (a lag-2 block of 20 seeds, a few seconds), recomputed by the runner, equals its record."""
    assert runner.verify(vs.STUDY, sample=1, echo=None)


def test_the_quick_study_round_trips(tmp_path):
    path = tmp_path / "variations_seeds.json"
    report = runner.run(vs.STUDY, quick=True, out=path)
    data = registry.load(vs.STUDY.name, path=report.path)
    assert data["quick"] is True and len(data["summary"]["logit_scale"]) == vs.QUICK.seeds
    assert {r["seed"] for r in data["summary"]["lag"]} == set(range(vs.QUICK.seeds))


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="seeds"):
        vs.logit_scale_seeds((0.7,), seeds=())
    with pytest.raises(ValueError, match="ps"):
        vs.lag_seeds((), seeds=(0,))
    with pytest.raises(ValueError, match="steps"):
        vs.logit_scale_seeds((0.7,), seeds=(0,), steps=1)
    with pytest.raises(ValueError, match=r"ps\[0\]"):
        vs.logit_scale_seeds((1.0,), seeds=(0,))
    with pytest.raises(ValueError, match="lag"):
        vs.lag_seeds((0.7,), seeds=(0,), lag=0)
