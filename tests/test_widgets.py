import matplotlib.pyplot as plt
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
