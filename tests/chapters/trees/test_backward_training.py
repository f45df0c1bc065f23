"""Chapter "Theorem 3: gradient descent finds it": its module (onelayer.chapters.trees.backward_training)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from onelayer import store
from onelayer.chapters.trees import backward_training as chapter
from onelayer.studies.runner import compute
from onelayer.studies.trees import backward_training_runs as runs_study, stored_study
from onelayer.verdicts import trees_backward_training as verdicts

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


def test_sgd_run_is_trained_once_and_follows_population_gd():
    sgd = chapter.sgd_run(True)
    assert chapter.sgd_run(True, progress=True) is sgd  # cached: the notebook's progress bar does not retrain
    close = chapter.sgd_vs_population(True)
    pop = chapter.population_run(True)
    assert close["max_relative_h1_gap"] < 0.05 and close["pop_h1"] == pop.final("h1")  # exact: the same record
    assert close["first_residual_step"] == chapter.SETTINGS.record_every


def test_rate_summary_against_an_independent_fit():
    runs = chapter.rate_runs(True)
    assert runs[chapter.SETTINGS.lr] is chapter.phase_run(True)  # the phase run is reused, not run again
    big = runs[128.0]
    et = 128.0 * big.steps
    keep = (et >= et[-1] / 10) & (et > 0)
    slope = np.polyfit(np.log(et[keep]), np.log(big["loss"][keep]), 1)[0]
    summary = chapter.rate_summary(True)
    assert summary["loglog_slope_last_decade"] == pytest.approx(slope, rel=1e-9)  # tol: the same least squares
    assert summary["lr"] == 128.0 and summary["compared_lr"] == 8.0  # exact: the settings' step sizes
    _, numbers = chapter.loss_rate(True)
    assert numbers["final_loss_lr128"] == big.final("loss")  # exact: the same record


def test_phase_figure_marks_the_detected_times():
    _, numbers = chapter.phases(True)
    found = numbers["phases"]
    events = chapter.phase_events(True)["population"]
    assert set(found) == set(events)
    np.testing.assert_array_equal([found[k] for k in sorted(found)], [events[k] for k in sorted(events)])  # exact: one run, detected twice (NaN: not reached)
    assert found["h1_increasing"] and found["loss_decreasing"]
    assert [row["step"] for row in numbers["table"]] == list(range(0, 301, chapter.SETTINGS.record_every))


def _fake(late_residual, T_off, slope, h1_inc=20, below=20):
    from onelayer.rates import rate

    seeds = {"runs": 20, "steps": 1500, "late_residual": (late_residual, late_residual * 0.9, late_residual * 1.1),
             "max_late_residual": late_residual * 1.5, "h1_gap": (1e-4, 5e-5, 2e-4), "max_h1_gap": 3e-4,
             "h1_increasing": rate(h1_inc, 20), "loss_below": rate(below, 20), "final_loss": (0.013, 0.012, 0.014),
             "pop_final_loss": 0.0135}
    events = {"T_offdiag_decreasing": T_off, "T_attention": 680.0, "max_abs_h2_phase1": 0.11,
              "h1_increasing": True, "loss_decreasing": True}
    rate_ = {"final_loss": 1e-5, "final_eta_t": 5e5, "lr": 128.0, "loglog_slope_last_decade": slope,
             "margin_gain_per_doubling": 0.35}
    return seeds, {"population": events, "sgd": events}, rate_


@pytest.mark.parametrize("late,T_off,slope,h1_inc,below,expected", [
    (0.01, 0.0, -1.0, 20, 20, ["holds up to sampling noise", "holds", "bounded holds", "holds"]),
    (0.2, 300.0, -0.5, 20, 20, ["fails", "holds", "two phases seen", "fails"]),
    (0.04, 0.0, -1.0, 20, 9, ["holds on average", "holds for population GD; not on every SGD run", "bounded", "holds"]),
])
def test_verdicts_follow_the_measurement(late, T_off, slope, h1_inc, below, expected):
    seeds, events, rate_ = _fake(late, T_off, slope, h1_inc, below)
    rows = verdicts.rows(chapter.SETTINGS, population=events["population"], late_rate=rate_, seeds=seeds)
    assert all(KEYS <= set(r) <= KEYS | {"rates", "checks"} and r["chapter"] == "backward_training" for r in rows)
    assert [r["verdict"][: len(e)] for r, e in zip(rows, expected)] == expected
    assert "20 seeds" in rows[0]["measurement"] and "20 seeds" in rows[0]["settings"]
    assert f"{below}/20 = " in rows[1]["measurement"]


def test_seed_summary_on_a_small_recomputed_study(tmp_path):
    from onelayer.studies import runner
    from onelayer.studies.trees import backward_seeds as study

    runner.run(study.STUDY, quick=True, out=tmp_path / "s.json")  # 2 runs per family, 100 steps
    data = study.stored(tmp_path / "s.json")
    summary = chapter.seed_summary(data)
    run = data["runs"]["one_hot"]
    residual, loss = np.asarray(run["residual"]), np.asarray(run["loss"])
    assert summary["runs"] == 2 and summary["steps"] == 100 < chapter.SETTINGS.late_from
    assert summary["max_late_residual"] == pytest.approx(residual[-1].max())  # tol: the same numbers
    assert summary["loss_below"].k == int((loss[-1] < chapter.SETTINGS.loss_threshold).sum())  # exact: a count
    assert summary["h1_increasing"].k == int((np.diff(np.asarray(run["h1"]), axis=0) > 0).all(0).sum())  # exact: a count


@pytest.mark.slow
def test_chapter_verdicts_on_the_full_runs():
    words = [r["verdict"] for r in chapter.verdict_rows()]
    assert words[0] == "holds up to sampling noise" and words[3] == "holds"
    assert words[2].startswith("bounded holds")  # our reconstruction: h2 decreases from the first step


@pytest.mark.recompute
def test_stored_runs_are_the_chapters_runs():
    """The stored study ``trees-backward-training-runs`` was made with the chapter's settings and holds every run the
    chapter reads; its cheapest member (population GD over the SGD run's steps) recomputed now is the stored one, bit
    for bit (one float64 computation, stored exactly)."""
    settings = chapter._run_settings(False)
    assert settings == runs_study.STUDY.settings
    member = next(m for m in runs_study.STUDY.member_list(settings) if m.key == "population")
    fresh = stored_study.history(store.from_jsonable(compute(runs_study.STUDY, settings, member)[1]["result"]))
    stored = chapter.population_run()
    for name in stored.records:
        assert np.array_equal(fresh[name], stored[name]), name  # exact: the same float64 computation
    assert list(chapter.sgd_run().steps) == list(range(0, settings.steps + 1, settings.record_every))
    assert {lr: int(r.steps[-1]) for lr, r in chapter.rate_runs().items()} == {lr: n for lr, n in settings.rate_runs}
    assert chapter.rate_runs()[settings.lr] is chapter.phase_run()


def test_the_chapter_refuses_stored_runs_of_other_settings(monkeypatch):
    monkeypatch.setattr(chapter, "SETTINGS", replace(chapter.SETTINGS, phase_steps=2000))
    chapter._stored_runs.cache_clear()
    try:
        with pytest.raises(ValueError, match="other settings"):
            chapter._stored_runs()
    finally:
        chapter._stored_runs.cache_clear()
