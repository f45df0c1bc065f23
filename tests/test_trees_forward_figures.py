"""Figures, tables and the widget callback of the forward chapters (onelayer.figures.trees_forward)."""

from __future__ import annotations

import ipywidgets
import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer.studies.trees.analysis import scale_grid
from onelayer.trees.forward.construction import constructed_params
from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.figures.trees_forward import accuracy_by_type_figure, attention_by_step_figure, construction_attention_figure, example_batch, heads_depth_figure, loss_table_figure, rescaling_figure, roles_figure, scalars_figure, scale_grid_figure, step_labels
from onelayer.tables import text_table
from onelayer.trees.forward.dynamics import ROLE_METRICS, SCALAR_NAMES
from onelayer.trees.forward.model import full_heads, init_params
from onelayer.studies.trees.forward_limits import AUTHORS_TABLE, TABLE_STEPS, table_rows
from onelayer.widgets import slider_app


def _close(fig):
    assert fig.axes
    plt.close(fig)


def test_text_table():
    text = text_table([{"a": 1, "b": 0.123456, "c": None}, {"a": 10, "b": True}], ["a", "b", "c"], digits=3)
    lines = text.splitlines()
    assert lines[0].split() == ["a", "b", "c"] and set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["1", "0.123", "-"] and lines[3].split() == ["10", "True", "-"]
    with pytest.raises(ValueError, match="columns"):
        text_table([], [])


def test_attention_figures_and_widget_callback():
    A = one_hot_embeddings(9)
    ex = example_batch()
    assert step_labels(ex) == ["[7;3;b] backward", "[3;5;b] backward", "[5;5;f] turning",
                               "[5;3;f] forward", "[3;7;f] forward"]
    fig = attention_by_step_figure(constructed_params(A, 4.0, 2.0, 2.0), A, ex)
    assert len(fig.axes) == 4  # two heads, two colour bars
    assert fig.get_size_inches()[0] <= 6.5 and all(im.get_clim() == (0, 1) for ax in fig.axes for im in ax.images)
    _close(fig)
    _close(attention_by_step_figure(init_params(full_heads(1), A), A, ex, arch=full_heads(1)))
    _close(construction_attention_figure(1.0, 3, 2))
    with pytest.raises(ValueError, match="scale must be"):
        construction_attention_figure(0.0)
    app = slider_app(construction_attention_figure, {"scale": ipywidgets.FloatSlider(value=2.0, min=0.5, max=5)})
    assert len(app.cache) == 1


def test_training_figures():
    T = 6
    steps = np.arange(T) * 10
    _close(scalars_figure(steps, np.linspace(1, 0.1, T), np.random.default_rng(0).normal(size=(T, len(SCALAR_NAMES))),
                          {"x": 20.0}))
    _close(accuracy_by_type_figure(steps, np.zeros((T, 3)), {"y": float("nan")}))
    _close(roles_figure(steps, np.zeros((T, len(ROLE_METRICS)))))
    _close(rescaling_figure({"a": (steps, np.linspace(1, 0.5, T), 2.0, 1.0), "b": (steps, np.linspace(7, 3, T), 1.4, 7.0)}))
    with pytest.raises(ValueError, match="scalars must have shape"):
        scalars_figure(steps, np.ones(T), np.zeros((T, 3)))
    with pytest.raises(ValueError, match="roles must have shape"):
        roles_figure(steps, np.zeros((T, 2)))


def test_construction_and_limits_figures():
    A = one_hot_embeddings(9)
    _close(scale_grid_figure(scale_grid(A, example_batch(), [0.5, 5.0])))
    runs = [
        {"arch": a, "label": a, "norm": n, "steps": [0, 1, 5], "loss": [3.0, 2.0, 1.0], "test_path_accuracy": 0.5}
        for a in ("two_head", "full1") for n in ("mean, 1/2", "sum, 1")
    ]
    _close(loss_table_figure(runs, AUTHORS_TABLE, TABLE_STEPS))
    rows = table_rows(runs)
    assert rows[0]["t=1"] == 2.0 and rows[0]["t=10"] is None and rows[-1]["model"] == "authors: single head"
    hd = [{"label": "x", "m": m, "steps_to_converge": c, "budget": 100, "test_path_accuracy": 1.0}
          for m, c in ((2, 10), (3, None))]
    _close(heads_depth_figure(hd))
