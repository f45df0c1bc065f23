"""onelayer.plotted.figure_data (the data a figure draws) and onelayer.scrubber.frame_numbers (a scrubber's numbers)."""

from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer.plots import new_figure
from onelayer.plotted import figure_data, round_significant
from onelayer.scrubber import frame_numbers


def test_a_line_is_returned_with_its_label_data_and_axes():
    fig, ax = new_figure(1, width=3.0, height=2.0)
    ax.plot([0, 1, 2], [1.0, 0.5, math.nan], label="decay")
    ax.plot([0, 2], [0.25, 0.25], label="_hidden")
    ax.set(title="t", xlabel="step", ylabel="value", yscale="log", xlim=(0, 2), ylim=(0.1, 2))
    fig.suptitle("whole")
    data = figure_data(fig)
    plt.close(fig)
    (axes,) = data["axes"]
    assert data["suptitle"] == "whole"
    assert (axes["title"], axes["xlabel"], axes["ylabel"], axes["xscale"], axes["yscale"]) == ("t", "step", "value", "linear", "log")
    assert axes["xlim"] == [0.0, 2.0] and axes["ylim"] == [0.1, 2.0]
    first, second = axes["lines"]
    assert first["label"] == "decay" and first["x"] == [0.0, 1.0, 2.0] and first["y"][:2] == [1.0, 0.5]
    assert math.isnan(first["y"][2])
    assert second == {"label": None, "x": [0.0, 2.0], "y": [0.25, 0.25]}
    assert axes["images"] == axes["bars"] == axes["collections"] == axes["texts"] == []


def test_images_bars_scatter_and_texts_are_read_and_colour_bars_skipped():
    fig, (a, b) = plt.subplots(1, 2)
    image = a.imshow(np.arange(6.0).reshape(2, 3), vmin=0, vmax=10)
    fig.colorbar(image, ax=a)
    a.text(0, 0, "WRONG")
    b.bar([1, 2], [3.0, 4.0], width=0.5, label="weights")
    b.scatter([0.5, 1.5], [2.0, 1.0], label="points")
    data = figure_data(fig)
    plt.close(fig)
    assert len(data["axes"]) == 2  # the colour bar's axes are not a panel
    (im,) = data["axes"][0]["images"]
    assert im["array"] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and im["clim"] == [0.0, 10.0]
    assert data["axes"][0]["texts"] == ["WRONG"]
    (bars,) = data["axes"][1]["bars"]
    assert bars == {"label": "weights", "x": [0.75, 1.75], "y": [0.0, 0.0], "width": [0.5, 0.5], "height": [3.0, 4.0]}
    (points,) = data["axes"][1]["collections"]
    assert points == {"label": "points", "offsets": [[0.5, 2.0], [1.5, 1.0]]}
    json.dumps(data)  # JSON-able as it is


def test_pcolormesh_is_an_image():
    fig, ax = plt.subplots()
    ax.pcolormesh(np.array([[1.0, 2.0], [3.0, 4.0]]))
    (im,) = figure_data(fig)["axes"][0]["images"]
    plt.close(fig)
    assert im["array"] == [[1.0, 2.0], [3.0, 4.0]] and "extent" not in im


def test_round_significant_keeps_digits_and_non_finite_values():
    assert round_significant(1 / 3, 3) == 0.333
    assert round_significant([123456.789, -0.000123456789], 4) == [123500.0, -0.0001235]
    out = round_significant([[math.inf, math.nan]], 2)
    assert out[0][0] == math.inf and math.isnan(out[0][1])
    assert round_significant(np.float32(0.1), 8) == 0.1
    assert round_significant([], 3) == []


def test_inputs_are_validated():
    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        figure_data("not a figure")
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="digits"):
        figure_data(fig, digits=0)
    plt.close(fig)
    with pytest.raises(TypeError, match="values must be numbers"):
        round_significant(["a"])
    with pytest.raises(TypeError, match="values must be real numbers"):
        round_significant([1j])
    with pytest.raises(TypeError, match="digits"):
        round_significant(1.0, 2.5)


def slope_figure(slope, offset=0.0):
    fig, ax = new_figure(1, width=3.0, height=2.0)
    ax.plot([0, 1], [offset, offset + slope])
    return fig


def test_frame_numbers_hold_every_setting_and_what_its_figure_plots():
    open_before = len(plt.get_fignums())
    one = frame_numbers(slope_figure, [1, 2], labels="slope", fmt="{:d}")
    assert one["knobs"] == [{"label": "slope", "values": [1, 2], "texts": ["1", "2"]}]
    assert [f["setting"] for f in one["frames"]] == [[1], [2]] and [f["texts"] for f in one["frames"]] == [["1"], ["2"]]
    assert one["frames"][1]["figure"]["axes"][0]["lines"][0]["y"] == [0.0, 2.0]
    two = frame_numbers(slope_figure, [1, 2], [0.0, 0.5], labels=("slope", "offset"), fmt=("{:d}", "{:.1f}"))
    assert [f["texts"] for f in two["frames"]] == [["1", "0.0"], ["1", "0.5"], ["2", "0.0"], ["2", "0.5"]]  # row-major
    assert two["frames"][3]["figure"]["axes"][0]["lines"][0]["y"] == [0.5, 2.5]
    assert len(plt.get_fignums()) == open_before  # every frame's figure is closed


def test_frame_numbers_validate_their_inputs():
    with pytest.raises(TypeError, match="draw must be a callable"):
        frame_numbers([slope_figure(1)], [1], labels="slope")
    plt.close("all")
    with pytest.raises(ValueError, match="values must contain at least one setting"):
        frame_numbers(slope_figure, [], labels="slope")
    with pytest.raises(TypeError, match="labels must be a pair"):
        frame_numbers(slope_figure, [1], [0.0], labels="slope")
    with pytest.raises(ValueError, match="at most 400"):
        frame_numbers(slope_figure, range(30), range(30), labels=("a", "b"))
    with pytest.raises(TypeError, match="draw must return a matplotlib Figure"):
        frame_numbers(lambda v: None, [1], labels="slope")
    with pytest.raises(ValueError, match="digits"):
        frame_numbers(slope_figure, [1], labels="slope", digits=30)
