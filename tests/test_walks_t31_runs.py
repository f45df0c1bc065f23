"""The Theorem 3.1 chapter's long single-sample runs, stored (onelayer.studies.walks.theorem31_runs): what the file
holds, and a recomputed member."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.studies import runner
from onelayer.studies.walks import theorem31_runs


def test_the_stored_runs_hold_every_setting_with_arrays_back():
    data = theorem31_runs.load()
    s = data["settings"]
    assert s == theorem31_runs.STUDY.settings
    assert [r["p"] for r in data["direction"]] == list(s.direction_ps)
    for run in data["direction"]:
        assert run["steps"].dtype.kind == "i" and int(run["steps"][-1]) == s.direction_steps
        assert run["d_Pi"].dtype == np.float64 and run["V_final"].shape == (6, 6)
    assert [r["loss"] for r in data["loss_direction"]] == ["log", "squared", "cross_entropy"]
    assert data["lemma_c7"]["steps"].dtype == np.float64 and data["lemma_c7"]["steps"][-1] == s.remainder_steps
    for rule, res in data["log_odds"].items():
        assert res["N"].tolist() == list(s.log_odds_Ns) and res["M"].dtype.kind == "i"
    assert data["log_odds"]["fixed"]["M"].tolist() == [1000] * len(s.log_odds_Ns)


def test_the_quick_study_runs_every_kind_of_member(tmp_path):
    runner.run(theorem31_runs.STUDY, quick=True, out=tmp_path / "quick.json")
    data = theorem31_runs.load(tmp_path / "quick.json")
    assert data["settings"] == theorem31_runs.QUICK and len(data["direction"]) == 1


@pytest.mark.recompute
def test_a_stored_member_is_recomputed():
    assert runner.verify(theorem31_runs.STUDY, sample=1, echo=None)


def test_the_steps_to_optimal_rows_are_one_per_size():
    data = theorem31_runs.load()
    rows, s = data["steps_to_optimal"], data["settings"]
    assert [(r["K"], r["N"]) for r in rows] == [tuple(size) for size in s.steps_table_sizes]
    assert all(r["T0"] <= s.steps_table_steps for r in rows)


def test_the_figure8_run_is_a_history_with_every_record():
    data = theorem31_runs.load()
    hist, s = data["fig8"], data["settings"]
    assert hist.steps.tolist() == list(range(s.fig8_steps + 1))
    assert hist.at("V", s.fig8_steps).shape == (s.fig8_K, s.fig8_K)
    assert hist["attention_profile"].shape == (s.fig8_steps + 1, s.fig8_N)
    assert {"test_accuracy", "conditional_accuracy", "parent_attention", "train_accuracy", "loss"} <= set(hist.records)
