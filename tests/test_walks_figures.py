"""The walks figures and the ring widget callback draw without a browser and validate their inputs."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from onelayer.figures import walks as figures
from onelayer.studies.walks import experiment, theorem41  # noqa: E402


def _close(fig):
    assert fig.axes
    plt.close(fig)


def test_ring_figures_and_callback():
    _close(figures.transition_heatmaps(5, (0.3, 1.0)))
    _close(figures.mixing_figure((5, 6), p=0.6, R_max=20))
    fig = figures.ring_explorer(7, 0.4)
    assert "K = 7" in fig.axes[0].get_title()
    _close(fig)
    with pytest.raises(ValueError, match="p"):
        figures.ring_explorer(6, 1.5)
    with pytest.raises(ValueError, match="K"):
        figures.ring_explorer(2, 0.5)


def test_ring_widget_builds_and_redraws():
    app = figures.ring_widget(K=5, p=0.5)
    sliders = app.children[:2]
    sliders[1].value = 0.8
    assert len(app.cache) == 2
    plt.close("all")


def test_training_and_experiment_figures_draw_their_numbers():
    from onelayer.plotted import figure_data

    exp = experiment.setup_experiment(0.7, N=25, M=200, n_train=100, n_test=50)
    hist = experiment.run(exp, steps=4)
    drawn = figure_data(figures.training_figure(hist, exp, title="t"))
    numbers = experiment.training_numbers(hist, exp)["table"]
    accuracy = next(line for line in drawn["axes"][0]["lines"] if line["label"] == "conditional accuracy")
    assert accuracy["y"] == pytest.approx([row["conditional_accuracy"] for row in numbers], abs=1e-6)
    assert np.allclose(drawn["axes"][1]["images"][0]["array"], np.asarray(hist.at("V", 4)), atol=1e-6)
    plt.close("all")

    drawn = figure_data(figures.value_heatmaps({"a": np.eye(3), "b": np.ones((3, 3))}))
    assert [ax["title"] for ax in drawn["axes"][:2]] == ["a", "b"]
    assert drawn["axes"][0]["images"][0]["array"] == np.eye(3).tolist()
    assert drawn["axes"][1]["images"][0]["array"] == np.ones((3, 3)).tolist()
    plt.close("all")

    drawn = figure_data(figures.perturbation_figure({"delta": np.array([1e-9, 1e-3]), "escape_step": np.array([8.0, 3.0])}))
    points = drawn["axes"][0]["lines"][0]
    assert points["x"] == pytest.approx([-9.0, -3.0]) and points["y"] == pytest.approx([8.0, 3.0])  # log10(delta)
    plt.close("all")

    odds = experiment.log_odds_vs_N(0.7, [13, 25], n=200)
    _close(figures.log_odds_figure({"x": odds}))
    _close(figures.direction_figure([experiment.direction_run(0.7, steps=20, N=25, M=200, n_train=100, n_test=50, n_records=5)]))
    det = theorem41.deterministic_setup(6, 4, M=100, train="sample", positions="sin", n_train=50, n_test=50)
    _close(figures.escape_figure({"sin": theorem41.escape_run(det, steps=5)}))
