"""Theorem 3.1 item 3's rate over training samples (onelayer.studies.walks.direction.target_slopes and the stored study
onelayer.studies.walks.direction_slopes): the stored slopes against a recomputation, and validation."""

from __future__ import annotations

import pytest

from dataclasses import asdict

from onelayer.studies import registry, runner
from onelayer.studies.walks import direction, direction_slopes


@pytest.fixture(scope="module")
def stored():
    return registry.load(direction_slopes.STUDY.name)["summary"]


def test_the_stored_study_is_complete(stored):
    c = direction_slopes.STUDY.settings
    assert registry.load(direction_slopes.STUDY.name)["settings"] == asdict(c)
    assert [r["seed"] for r in stored["samples"]] == list(range(c.seeds)) and c.seeds >= 20
    # the distance to the sample's own target falls over the run on every sample
    assert all(r["d_last"] < r["d_first"] and r["slope"] < 0 for r in stored["samples"])


@pytest.mark.recompute
def test_stored_samples_are_recomputed(stored):
    """Samples 5 and 6 recomputed alone (a batch of two instead of the stored member's forty: about 20 s instead of
    two minutes; ``python -m onelayer study verify walks-direction-slopes`` recomputes the whole member)."""
    c = asdict(direction_slopes.STUDY.settings)
    live = direction.target_slopes(c.pop("p"), seeds=(5, 6), **{k: v for k, v in c.items() if k != "seeds"})
    for got, row in zip(live, stored["samples"][5:7]):
        assert got["seed"] == row["seed"] and got["from_step"] == row["from_step"]  # exact: integers
        for key in ("slope", "d_first", "d_last", "d_sqrt_last"):
            assert got[key] == pytest.approx(row[key], rel=1e-9), key  # tol: batched chunks move round-off


def test_the_quick_study_round_trips(tmp_path):
    report = runner.run(direction_slopes.STUDY, quick=True, out=tmp_path / "slopes.json")
    data = registry.load(direction_slopes.STUDY.name, path=report.path)
    assert data["quick"] is True and len(data["summary"]["samples"]) == direction_slopes.QUICK.seeds


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="from_record"):
        direction.target_slopes(seeds=(0,), steps=10, n_records=5, from_record=4, N=13, M=100, n_train=20)
    with pytest.raises(ValueError, match="steps"):
        direction.target_slopes(seeds=(0,), steps=2)
    with pytest.raises(ValueError, match="p"):
        direction.target_slopes(1.0, seeds=(0,))
