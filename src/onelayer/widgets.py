"""Interactive controls for the chapters (ipywidgets), with their callbacks here.

The callbacks are plain functions that return a matplotlib figure, so they are
unit-tested without a browser and the chapters can show a static figure of the
default state for readers of the HTML book (widgets need a live kernel).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import time

import matplotlib.pyplot as plt
import numpy as np

from . import attention
from .plots import describe_figure, new_figure, plot_curves
from .validation import check_float

__all__ = ["FigureWithAlt", "selector_figure", "selection_error_figure", "slider_app", "selector_widget", "progress_app", "selection_slider", "merged_settings", "timed"]


def selector_figure(z, lam: float):
    """Bar chart of ``softmax(lam * z)`` beside its ``lam -> infinity`` limit.

    The title reports the L1 distance to the limit and the bound
    ``2 (n - k) exp(-lam * gap) / k`` from :mod:`onelayer.attention`.
    """
    lam = check_float("lam", lam, low=0.0)
    z = np.asarray(z, dtype=np.float64)
    weights = attention.softmax(z, lam)
    limit = attention.selection_limit(z)
    fig, ax = new_figure(1, width=6.5, height=3.2)
    idx = np.arange(z.size)
    ax.bar(idx - 0.2, weights, width=0.4, label=f"softmax({lam:g} z)")
    ax.bar(idx + 0.2, limit, width=0.4, label="limit", alpha=0.6)
    ax.set_xticks(idx, [f"{v:g}" for v in z])
    ax.set_xlabel("logit z_j")
    ax.set_ylabel("attention weight")
    ax.set_ylim(0, 1.05)
    err = attention.selection_error(z, lam)
    bound = attention.selection_bound(z, lam)
    ax.set_title(f"lambda = {lam:g}: L1 distance {err:.3g} (bound {bound:.3g})")
    ax.legend(loc="upper right")
    return fig


def selection_error_figure(z, lams):
    """The exact L1 distance of ``softmax(lam * z)`` to its limit and the bound, against ``lam`` (log scale)."""
    z = np.asarray(z, dtype=np.float64)
    lams = np.asarray(lams, dtype=np.float64)
    if lams.ndim != 1 or lams.size < 2:
        raise ValueError("lams must be a 1-d grid of at least two scales")
    if np.any(lams < 0) or not np.all(np.isfinite(lams)):
        raise ValueError("lams must be finite and >= 0")
    fig, ax = new_figure(1, width=5.5, height=3.2)
    bound_name = "bound 2(n-k)/k exp(-lambda gap)"
    plot_curves(ax, lams, {"exact L1 distance": attention.selection_error(z, lams),
                           bound_name: attention.selection_bound(z, lams)},
                xlabel="scale lambda", ylabel="distance to the limit", logy=True,
                styles={bound_name: {"linestyle": "--"}})
    ax.legend(loc="lower left")  # the curves fall from the upper left: the lower left is empty
    return fig


class FigureWithAlt:
    """A matplotlib figure shown as a PNG ``<img>`` with a text alternative (``alt``)."""

    def __init__(self, fig, alt: str):
        if not hasattr(fig, "savefig"):
            raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
        if not isinstance(alt, str) or not alt.strip():
            raise ValueError("alt must be a non-empty sentence saying what the figure shows")
        self.fig, self.alt = fig, alt

    def _repr_html_(self) -> str:
        import base64
        import html
        import io

        buf = io.BytesIO()
        self.fig.savefig(buf, format="png", metadata={"Software": None})
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        return f'<img src="data:image/png;base64,{data}" alt="{html.escape(self.alt, quote=True)}" style="max-width: 100%">'

    def __repr__(self) -> str:
        return f"<figure: {self.alt}>"


def slider_app(callback: Callable[..., object], controls: Mapping[str, object]):
    """A small app: the ``controls`` (ipywidgets) above an output area.

    Every change of a control calls ``callback(**values)``; the figure it returns
    is drawn in the output area as an image whose text alternative
    (:func:`onelayer.plots.describe_figure`) names its panels, axes, curves and
    the current settings, so the saved widget state in the HTML book is accessible too. Results are cached per setting, so moving a
    control back to an earlier value redraws at once.
    """
    import ipywidgets as widgets

    if not callable(callback):
        raise TypeError("callback must be callable")
    if not controls:
        raise ValueError("controls must name at least one widget")
    out = widgets.Output()
    cache: dict[tuple, object] = {}

    def redraw(_change=None):
        values = {name: w.value for name, w in controls.items()}
        key = tuple(sorted(values.items()))
        if key not in cache:
            fig = callback(**values)
            cache[key] = fig
            plt.close(fig)
        with out:
            out.clear_output(wait=True)
            from IPython.display import display

            display(FigureWithAlt(cache[key], describe_figure(cache[key], values)))

    for w in controls.values():
        w.observe(redraw, names="value")
    redraw()
    box = widgets.VBox([*controls.values(), out])
    box.redraw = redraw  # exposed for tests
    box.cache = cache
    return box


def selector_widget(z, *, lam: float = 1.0, lam_max: float = 20.0):
    """A slider for the scale ``lam`` that redraws :func:`selector_figure`."""
    import ipywidgets as widgets

    lam_max = check_float("lam_max", lam_max, low=0.0, low_open=True)
    lam = check_float("lam", lam, low=0.0, high=lam_max)
    z = np.asarray(z, dtype=np.float64)
    slider = widgets.FloatSlider(value=lam, min=0.0, max=lam_max, step=0.25, description="lambda")
    return slider_app(lambda lam: selector_figure(z, lam), {"lam": slider})


def timed(figure_fn, **settings):
    """Call ``figure_fn(**settings)``, render the figure, and return ``(figure, seconds)`` (wall clock, both steps)."""
    if not callable(figure_fn):
        raise TypeError("figure_fn must be callable")
    start = time.perf_counter()
    fig = figure_fn(**settings)
    fig.canvas.draw()
    return fig, time.perf_counter() - start


def selection_slider(options, value, description: str):
    """A ``SelectionSlider`` over ``options`` (``value`` is added if missing) that redraws on release."""
    import ipywidgets as widgets

    if value not in options:
        options = tuple(sorted({*options, value}))
    return widgets.SelectionSlider(options=list(options), value=value, description=description, continuous_update=False)


def merged_settings(defaults: dict, overrides: dict) -> dict:
    """``defaults`` updated by ``overrides``; a ``ValueError`` names any override that is not a setting."""
    unknown = set(overrides) - set(defaults)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}; the lab's settings are {sorted(defaults)}")
    return {**defaults, **overrides}


def progress_app(figure_fn, controls: dict):
    """:func:`onelayer.widgets.slider_app` around ``figure_fn(**values, progress=True)``.

    The ``tqdm`` bar of a training run is captured in an output area placed
    between the controls and the figure. The box gets a ``controls`` attribute.
    """
    import ipywidgets as widgets

    bar = widgets.Output()

    def callback(**values):
        with bar:
            bar.clear_output()
            return figure_fn(**values, progress=True)

    box = slider_app(callback, controls)
    box.children = (*box.children[:-1], bar, box.children[-1])
    box.controls = controls
    return box
