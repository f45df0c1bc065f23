"""The recorded Figure 9 runs of the Theorem 4.1 chapter, stored (onelayer.studies.walks.t41_fig9): the file's runs,
a quick member against the live run, and a recomputed member."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.studies import runner
from onelayer.studies.walks import experiment, t41_fig9, theorem41


def test_the_stored_runs_hold_every_record_of_both_recipes():
    data = t41_fig9.load()
    s = data["settings"]
    assert s == t41_fig9.STUDY.settings and set(data["runs"]) == set(s.recipes)
    N = s.r * s.K + 1
    for hist in data["runs"].values():
        assert hist.steps.tolist() == list(range(s.steps + 1))
        assert hist["V"].shape == (s.steps + 1, s.K, s.K) and hist["attention_profile"].shape == (s.steps + 1, N)
    population = data["runs"]["population"]
    assert np.ptp(population.final("V")) < 1e-12  # tol: the theorem's symmetric state, up to round-off


def test_a_quick_member_is_the_live_run():
    q = t41_fig9.QUICK
    stored = t41_fig9.run_member(q, t41_fig9.members(q)[1])
    live = experiment.run(theorem41.deterministic_setup(q.K, q.r, **t41_fig9.RECIPES["sin"]), steps=q.steps)
    assert set(stored["records"]) == set(live.records)
    assert all(np.array_equal(stored["records"][k], live.records[k]) for k in live.records)  # exact: the same computation twice


@pytest.mark.recompute
def test_a_stored_member_is_recomputed():
    assert runner.verify(t41_fig9.STUDY, sample=1, echo=None)
