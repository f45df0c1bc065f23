"""The variations chapter's stored single runs (onelayer.studies.walks.variations.runs, the study walks-variations-runs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from onelayer.chapters.walks import variations as chapter
from onelayer.studies import runner
from onelayer.studies.walks.variations import logit_scale, runs


def test_members_and_the_loaded_layout():
    keys = [m.key for m in runs.members(runs.STUDY.settings)]
    assert keys == ["equivalence", "logit-scale-p0.5", "logit-scale-p0.7", "no-position-p0.5", "no-position-p0.7",
                    "no-position-p1", "chain-random", "chain-doubly-stochastic"]
    data = chapter.stored_runs()
    assert [(r["p"], r["logit_scale"]) for r in data["logit_scale"]] == [(0.5, "one"), (0.5, "inv_sqrt_d"),
                                                                        (0.7, "one"), (0.7, "inv_sqrt_d")]
    assert [r["p"] for r in data["no_position"]] == [0.5, 0.7, 1.0]
    assert all(isinstance(data["chains"][k]["V_final"], np.ndarray) for k in runs.CHAINS)


def test_a_member_is_the_rows_of_the_table_it_splits():
    settings = dataclasses.replace(runs.QUICK, logit_scale_ps=(0.7,))
    member = next(m for m in runs.members(settings) if m.key == "logit-scale-p0.7")
    rows = runs.run_member(settings, member)["rows"]
    table = logit_scale.logit_scale_table((0.7,), steps=settings.logit_scale_steps)
    assert [r["logit_scale"] for r in rows] == ["one", "inv_sqrt_d"]
    for a, b in zip(rows, table):
        np.testing.assert_equal(a["T0"], b["T0"])  # exact: an integer step, or nan when never all optimal
        np.testing.assert_allclose(a["optimal_fraction"], b["optimal_fraction"], rtol=0, atol=1e-12)  # tol: round-off


def test_the_loader_refuses_other_settings():
    with pytest.raises(ValueError, match="walks-variations-runs"):
        runs.load(dataclasses.replace(runs.STUDY.settings, chain_steps=100))
    with pytest.raises(ValueError, match="kind"):
        runs.transition_matrix(runs.STUDY.settings, "circulant")


@pytest.mark.recompute
def test_the_cheapest_stored_member_is_recomputed():
    assert runner.verify(runs.STUDY, sample=1, echo=None)
