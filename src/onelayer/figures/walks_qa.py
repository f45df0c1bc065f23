"""Figures of Section 6's question answering (:mod:`onelayer.studies.walks.qa`): curves and the explorer widget."""

from __future__ import annotations

import numpy as np

from ..plots import new_figure
from ..widgets import slider_app
from ..studies.walks.qa import explorer_runs

__all__ = ["figure_curves", "explorer_figure", "explorer", "explorer_widget"]


def figure_curves(histories: dict, *, title: str | None = None):
    """Test accuracy (top) and mean KL (bottom) against the GD step, one column per named history (Figures 7, 10)."""
    if not histories:
        raise ValueError("histories must name at least one History")
    n = len(histories)
    fig, axes = new_figure(n, 2, width=min(3.4 * n, 10.0), height=5.0)
    axes = np.asarray(axes).reshape(2, n)
    for j, (name, hist) in enumerate(histories.items()):
        axes[0, j].plot(hist.steps, hist["test_accuracy"])
        axes[0, j].set_ylim(-0.02, 1.02)
        axes[0, j].set_title(name)
        axes[0, j].set_ylabel("test accuracy")
        axes[1, j].plot(hist.steps, hist["kl"], color="C1")
        axes[1, j].set_ylabel("KL (normalised output)")
        axes[1, j].set_xlabel("GD step")
    if title:
        fig.suptitle(title)
    return fig


def explorer_figure(runs: dict, *, sigma: float, lr: float, normalize: str):
    """Test accuracy of both tasks against the GD step (``runs``: task -> history with the record ``"acc"``, as
    :func:`onelayer.studies.walks.qa.explorer_runs` gives), titled by the initial scale, step size and normalisation."""
    fig, ax = new_figure(1, width=6.0, height=3.2)
    for task, hist in runs.items():
        ax.plot(hist.steps, hist["acc"], label=f"Task {task}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("GD step")
    ax.set_ylabel("test accuracy")
    ax.set_title(f"sigma = {sigma:g}, eta = {lr:g}, normalize = {normalize}")
    ax.legend()
    return fig


def explorer(sigma: float = 0.01, lr: float = 0.1, normalize: str = "keys_and_query", steps: int = 100):
    """Widget callback: :func:`explorer_figure` of fresh runs (:func:`onelayer.studies.walks.qa.explorer_runs`)."""
    return explorer_figure(explorer_runs(sigma, lr, normalize, steps), sigma=sigma, lr=lr, normalize=normalize)


def explorer_widget():
    """Sliders for ``sigma`` and ``eta``, a menu for the normalisation, redrawing :func:`explorer`."""
    import ipywidgets as widgets

    controls = {
        "sigma": widgets.SelectionSlider(options=[0.0, 0.001, 0.01, 0.1, 1.0], value=0.01, description="sigma"),
        "lr": widgets.SelectionSlider(options=[0.01, 0.1, 1.0, 10.0], value=0.1, description="eta"),
        "normalize": widgets.Dropdown(options=["keys_and_query", "keys", "none"], value="keys_and_query",
                                      description="normalize"),
    }
    return slider_app(explorer, controls)
