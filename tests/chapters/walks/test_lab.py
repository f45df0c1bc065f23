"""Chapter "Walks lab" (``onelayer.chapters.walks.lab``): callbacks, validation, caching, and what a default run reaches."""

import math
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

import onelayer
from onelayer.chapters.walks import lab
from onelayer.verdicts import walks_lab as lab_verdicts
from onelayer.widgets import timed


@pytest.fixture(autouse=True)
def _seed_and_close_figures():
    onelayer.setup(0)
    yield
    plt.close("all")


def test_default_callback_draws_the_figure():
    fig, elapsed = timed(lab.lab_figure)  # the seconds are shown to the reader of the lab, not judged here
    assert elapsed > 0
    assert len(fig.axes) >= 4
    title = fig._suptitle.get_text()
    assert "p=0.7, K=6, N=25, M=125" in title and "test accuracy" in title


def test_default_run_reaches_the_bayes_rule():
    res = lab.lab_run()
    s = res.summary()
    assert res.experiment.model.config.M == lab.M_for(25) == 125
    assert res.history.steps[-1] == lab.DEFAULTS["steps"]
    # Theorem 3.1 in the lab's small setting: Bayes-optimal on every test walk, attention on the parent
    assert s["test_accuracy"] == pytest.approx(s["bayes_test_accuracy"], abs=1e-12)
    assert s["conditional_accuracy"] == pytest.approx(0.7, abs=1e-9)
    assert s["parent_attention"] > 0.99
    assert math.isnan(s["first_nonfinite_step"])
    assert res.seconds > 0


def test_deterministic_walk_with_exact_positions_stays_symmetric():
    # Theorem 4.1 (N = 4K + 1, exact positions): the columns of V stay equal, so every walk gets the same prediction
    res = lab.lab_run(p=1.0, positions="exact", steps=20)
    V = res.history.final("V")
    assert np.abs(V - V[:, :1]).max() < 1e-12
    pred = res.experiment.model.predict(res.history.params, res.experiment.test)
    assert torch.unique(pred).numel() == 1
    assert res.summary()["test_accuracy"] < 0.3


def test_runs_are_reproducible_and_options_matter():
    a, b = lab.lab_run(steps=5), lab.lab_run(steps=5)
    assert np.array_equal(a.history["loss"], b.history["loss"])  # exact: the same computation twice in one process
    g = lab.lab_run(steps=5, sigma=0.01)
    assert not np.allclose(a.history["loss"], g.history["loss"], rtol=1e-6, atol=0)  # tol: far more than round-off
    sq = lab.lab_run(steps=5, loss="squared", reduction="sum")
    assert sq.experiment.model.config.loss == "squared" and sq.experiment.model.config.reduction == "sum"
    assert sq.history["loss"][0] == pytest.approx(0.5 * 400)  # f = 0: 1/2 ||e_y||^2 summed over 400 walks


def test_diverging_setting_is_reported_not_raised():
    res = lab.lab_run(sigma=1.0, steps=5)
    assert res.summary()["first_nonfinite_step"] == 0.0  # exact: a step index
    assert "loss not finite from step 0" in lab.lab_title(res)
    guarded = lab._guarded({"test_accuracy": lambda prm: 1.0, "V": lambda prm: prm["V"]})
    bad = {"V": torch.tensor([[float("nan")]]), "q": torch.zeros(2)}
    assert math.isnan(guarded["test_accuracy"](bad))
    assert guarded["test_accuracy"]({"V": torch.zeros(1, 1), "q": torch.zeros(2)}) == 1.0  # exact: the record function's constant


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"p": 1.5}, ValueError, "p must be"),
        ({"K": 2}, ValueError, "K must be"),
        ({"K": 6.0}, TypeError, "K must be an integer"),
        ({"N": 200}, ValueError, "N must be"),
        ({"lr": 0.0}, ValueError, "lr must be"),
        ({"sigma": -0.1}, ValueError, "sigma must be"),
        ({"loss": "hinge"}, ValueError, "loss must be one of"),
        ({"reduction": "max"}, ValueError, "reduction must be one of"),
        ({"positions": "none"}, ValueError, "positions must be one of"),
        ({"steps": 0}, ValueError, "steps must be"),
        ({"n_train": 0}, ValueError, "n_train must be"),
    ],
)
def test_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        lab.lab_run(**kwargs)


def test_widget_caches_settings_and_shows_a_progress_area():
    box = lab.lab_widget(steps=5)
    assert len(box.cache) == 1
    assert len(box.children) == len(box.controls) + 2  # controls, progress bar output, figure output
    box.controls["p"].value = 0.5
    assert len(box.cache) == 2
    box.controls["p"].value = 0.7  # back to a drawn setting: served from the cache
    assert len(box.cache) == 2
    titles = {dict(key)["p"]: fig._suptitle.get_text() for key, fig in box.cache.items()}
    assert "p=0.5" in titles[0.5] and "p=0.7" in titles[0.7]
    with pytest.raises(ValueError, match="unknown settings"):
        lab.lab_widget(temperature=1.0)
    with pytest.raises(ValueError, match="p must be"):
        lab.lab_widget(p=2.0)
    assert lab.selection_slider((1.0, 2.0), 1.5, "x").options == (1.0, 1.5, 2.0)


def test_compare_rows_and_timed_validation():
    rows = lab.compare({"short": {"steps": 3}, "p=0.9": {"steps": 3, "p": 0.9}})
    assert [r["name"] for r in rows] == ["short", "p=0.9"]
    assert rows[1]["bayes_test_accuracy"] > rows[0]["bayes_test_accuracy"]
    with pytest.raises(TypeError, match="variations"):
        lab.compare({})
    with pytest.raises(TypeError, match="figure_fn"):
        timed(None)


def test_chapter_verdict_holds_and_fails_when_the_step_is_not_scaled(monkeypatch):
    (row,) = lab.verdict_rows()
    assert row["verdict"] == "holds in one run (an identity of the loss)" and row["chapter"] == "lab"
    assert row["reading"] == "loss reduction" and "one run" in row["settings"]
    real = lab.lab_run

    def unscaled(*args, **kw):  # the sum run with twice the step it needs: V differs
        if kw.get("reduction") == "sum":
            kw["lr"] = 2 * kw["lr"]
        return real(*args, **kw)

    monkeypatch.setattr(lab, "lab_run", unscaled)
    assert lab.verdict_rows()[0]["verdict"] == "fails"


def test_verdict_words_follow_the_difference_of_v():
    run = {"p": 0.7, "K": 6, "N": 25, "n_train": 400, "steps": 30}
    (same,) = lab_verdicts.rows(run=run, difference=0.0)
    (other,) = lab_verdicts.rows(run=run, difference=1e-6)
    assert same["class"] == "exact" and (other["verdict"], other["class"]) == ("fails", "fails")
    assert "n = 400 walks" in same["settings"] and "over 30 steps" in same["measurement"]


def test_settings_variations_and_player_grid():
    assert dict(lab.SETTINGS.variations)["default (p=0.7)"] == ()
    _, frames = lab.p_eta_frames(quick=True)
    assert len(frames["frames"]) == 2


def test_player_frames_share_one_colour_scale_for_v():
    import matplotlib.pyplot as plt

    ps, lrs = lab.SETTINGS.scrub_ps[:2], lab.SETTINGS.scrub_lrs[:2]
    limits = lab.p_eta_v_limits(ps, lrs, 5)
    clims = []
    for p in ps:
        for lr in lrs:
            fig = lab._p_eta_frame(p, lr, 5, (ps, lrs))
            clims.append(fig.axes[1].images[0].get_clim())
            plt.close(fig)
    assert all(c == limits for c in clims)  # exact: every frame is given the same two floats
    assert limits[0] < limits[1]
