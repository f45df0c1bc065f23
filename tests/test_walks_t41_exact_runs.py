"""The Theorem 4.1 chapter's runs on the exact population, stored (onelayer.studies.walks.t41_exact_runs): the file's
rows, a quick member against the function it stores, and a recomputed member."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.studies import runner
from onelayer.studies.walks import t41_exact_runs, theorem41


def test_the_stored_rows_cover_every_loss_and_schedule_and_stay_symmetric():
    data = t41_exact_runs.load()
    s = data["settings"]
    assert s == t41_exact_runs.STUDY.settings
    assert [(r["loss"], r["schedule"]) for r in data["symmetry"]] == [(loss, name) for loss in s.losses
                                                                      for name in theorem41.SCHEDULES]
    assert max(r["max_logit_spread"] for r in data["symmetry"]) < 1e-12  # tol: round-off of exactly symmetric sums
    pert = data["perturbation"]
    assert pert["delta"].tolist() == list(s.perturbations)  # exact: the settings, stored as written
    assert pert["escape_step"].dtype == np.float64


def test_a_quick_symmetry_member_is_the_symmetry_table():
    q = t41_exact_runs.QUICK
    result = t41_exact_runs.run_member(q, t41_exact_runs.members(q)[0])
    found, _ = runner.differences(result["rows"], theorem41.symmetry_table(loss_names=q.losses[:1], steps=q.symmetry_steps),
                                  rtol=0.0)
    assert not found, found[:3]


@pytest.mark.recompute
def test_a_stored_member_is_recomputed():
    assert runner.verify(t41_exact_runs.STUDY, sample=1, echo=None)
