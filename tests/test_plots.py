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
    with pytest.raises(ValueError, match="width"):
        plots.new_figure(1, width=-1.0)


def test_new_figure_fits_the_column_and_wraps_long_rows():
    fig, axes = plots.new_figure(4, width=13.0, height=3.2)
    assert axes.shape == (4,) and len(fig.axes) == 4
    assert tuple(fig.get_size_inches()) == pytest.approx((plots.MAX_WIDTH, 6.4))
    # three panels: a 2 x 2 grid with the spare cell removed
    fig, axes = plots.new_figure(3, width=12.0, height=3.4)
    assert axes.shape == (3,) and len(fig.axes) == 3
    assert fig.get_size_inches()[0] == pytest.approx(plots.MAX_WIDTH)
    # two panels asked 9 in wide: narrowed to the column, height scaled no lower than 0.8
    fig, axes = plots.new_figure(2, width=9.0, height=3.2)
    assert tuple(fig.get_size_inches()) == pytest.approx((plots.MAX_WIDTH, 3.2 * 0.8))
    fig, ax = plots.new_figure(1, width=5.0, height=3.0)
    assert tuple(fig.get_size_inches()) == pytest.approx((5.0, 3.0))
    plt.close("all")


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


def test_describe_figure_names_panels_axes_curves_and_settings():
    import numpy as np

    from onelayer.plots import describe_figure, heatmap, new_figure, plot_curves

    fig, axes = new_figure(2)
    plot_curves(axes[0], np.arange(5), {"p=0.5": np.arange(5.0), "p=0.7": np.ones(5)}, xlabel="step t", ylabel="accuracy",
                title="test accuracy")
    heatmap(axes[1], np.eye(3), title="V after 50 steps")
    text = describe_figure(fig, {"p": 0.5})
    plt.close(fig)
    assert text.startswith("Two panels.")
    assert "plot 'test accuracy' of 'accuracy' against 'step t', curves: p=0.5, p=0.7." in text
    assert "heat map 'V after 50 steps'" in text and text.endswith("Settings: p = 0.5.")


def test_describe_figure_rejects_non_figures():
    import pytest

    from onelayer.plots import describe_figure

    with pytest.raises(TypeError, match="fig must be a matplotlib Figure"):
        describe_figure("figure")
