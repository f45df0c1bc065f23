"""Chapter "Theorem 3: gradient descent finds it": its module (onelayer.chapters.trees.backward_training)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.chapters.trees import backward_training as chapter

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}


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


def _fake(late_residual, T_off, slope):
    close = {"max_late_residual": late_residual, "max_relative_h1_gap": 1e-4}
    events = {"T_offdiag_decreasing": T_off, "T_attention": 680.0, "max_abs_h2_phase1": 0.11,
              "h1_increasing": True, "loss_decreasing": True}
    rate = {"final_loss": 1e-5, "final_eta_t": 5e5, "lr": 128.0, "loglog_slope_last_decade": slope,
            "margin_gain_per_doubling": 0.35}
    return close, {"population": events, "sgd": events}, rate


@pytest.mark.parametrize("late,T_off,slope,expected", [
    (0.01, 0.0, -1.0, ["holds up to sampling noise", "holds", "bounded holds", "holds"]),
    (0.2, 300.0, -0.5, ["fails", "holds", "two phases seen", "fails"]),
])
def test_verdicts_follow_the_measurement(monkeypatch, late, T_off, slope, expected):
    close, events, rate = _fake(late, T_off, slope)
    monkeypatch.setattr(chapter, "sgd_vs_population", lambda quick=False: close)
    monkeypatch.setattr(chapter, "phase_events", lambda quick=False: events)
    monkeypatch.setattr(chapter, "rate_summary", lambda quick=False: rate)
    rows = chapter.verdict_rows()
    assert all(set(r) == KEYS and r["chapter"] == "backward_training" for r in rows)
    assert [r["verdict"][: len(e)] for r, e in zip(rows, expected)] == expected
    assert "one seed" in rows[0]["measurement"] and "one seed" in rows[0]["settings"]


@pytest.mark.slow
def test_chapter_verdicts_on_the_full_runs():
    verdicts = [r["verdict"] for r in chapter.verdict_rows()]
    assert verdicts[0] == "holds up to sampling noise" and verdicts[1] == verdicts[3] == "holds"
    assert verdicts[2].startswith("bounded holds")  # our reconstruction: h2 decreases from the first step
