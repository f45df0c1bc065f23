import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer import plots


def test_new_figure_shapes():
    fig, ax = plots.new_figure()
    assert hasattr(ax, "plot")
    fig2, axes = plots.new_figure(3, 2)
    assert axes.shape == (6,)
    plt.close("all")
    with pytest.raises(ValueError, match="ncols and nrows"):
        plots.new_figure(0)


def test_plot_curves_and_heatmap_and_marks():
    fig, ax = plots.new_figure()
    plots.plot_curves(ax, np.arange(3), {"a": [1, 2, 3], "b": [3, 2, 1]}, logy=True, xlabel="t")
    assert len(ax.lines) == 2 and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="curve 'c' has 2 points"):
        plots.plot_curves(ax, np.arange(3), {"c": [1, 2]})
    plots.mark_steps(ax, {"T1": 1.0, "none": None})
    assert len(ax.lines) == 3
    fig2, ax2 = plots.new_figure()
    plots.heatmap(ax2, np.eye(3), title="I")
    assert len(ax2.texts) == 9
    with pytest.raises(ValueError, match="2-D"):
        plots.heatmap(ax2, np.zeros(3))
    plt.close("all")
