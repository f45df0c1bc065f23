import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer import widgets


def test_selector_figure_reports_error_and_bound():
    fig = widgets.selector_figure([1.0, 0.0, -1.0], 2.0)
    title = fig.axes[0].get_title()
    assert "L1 distance" in title and "bound" in title
    plt.close(fig)
    with pytest.raises(ValueError, match="lam must be"):
        widgets.selector_figure([1.0, 0.0], -1.0)


def test_selector_widget_redraws_and_caches():
    box = widgets.selector_widget([1.0, 0.0, -1.0], lam=1.0, lam_max=5.0)
    slider = box.children[0]
    assert len(box.cache) == 1
    slider.value = 3.0
    assert len(box.cache) == 2
    slider.value = 1.0  # back to a cached setting: no new figure
    assert len(box.cache) == 2
    titles = {key: fig.axes[0].get_title() for key, fig in box.cache.items()}
    assert titles[(("lam", 1.0),)] != titles[(("lam", 3.0),)]
    with pytest.raises(ValueError, match="lam must be in"):
        widgets.selector_widget([1.0], lam=9.0, lam_max=5.0)


def test_slider_app_validates():
    with pytest.raises(TypeError):
        widgets.slider_app(3, {"a": None})
    with pytest.raises(ValueError):
        widgets.slider_app(lambda: None, {})


def test_selection_error_figure_plots_error_below_bound():
    import matplotlib.pyplot as plt

    grid = np.linspace(0.0, 10.0, 11)
    fig = widgets.selection_error_figure([1.0, 0.0, -1.0], grid)
    ax = fig.axes[0]
    exact, bound = (line.get_ydata() for line in ax.get_lines()[:2])
    assert np.all(exact <= bound + 1e-15) and exact[-1] < exact[0]
    assert ax.get_yscale() == "log"
    plt.close(fig)
    with pytest.raises(ValueError, match="lams"):
        widgets.selection_error_figure([1.0, 0.0], [-1.0, 1.0])


def test_selector_scrubber_has_one_frame_per_scale():
    s = widgets.selector_scrubber([1.0, 0.0, -1.0], [0.0, 1.0, 5.0], name="t-sel", dpi=30)
    assert len(s) == 3 and s.knobs[0].texts == ("0", "1", "5")
    assert "lambda = 5" in s.alt_texts[-1]
    assert s.frames[0] != s.frames[-1]
