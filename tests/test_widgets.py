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


def test_widget_figures_are_shown_with_alt_text(monkeypatch):
    """The output area gets an <img> whose alt names the panels and the current settings (saved state in the HTML)."""
    import re

    import IPython.display
    import numpy as np

    from onelayer.widgets import FigureWithAlt, selector_widget

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    box = selector_widget(np.array([1.0, 0.5, 0.0]), lam=2.0)
    assert len(shown) == 1 and isinstance(shown[0], FigureWithAlt)
    html_text = shown[0]._repr_html_()
    alt = re.search(r'alt="([^"]*)"', html_text).group(1)
    assert "Settings: lam = 2.0." in alt and "panel" in alt.lower()
    assert html_text.startswith('<img src="data:image/png;base64,')
    with pytest.raises(ValueError, match="alt"):
        FigureWithAlt(next(iter(box.cache.values())), " ")
    with pytest.raises(TypeError, match="fig"):
        FigureWithAlt("x", "a figure")
