"""What a matplotlib figure draws, as JSON-able numbers: the data behind a picture.

:func:`figure_data` walks a :class:`~matplotlib.figure.Figure` and returns, for each of its axes (colour bars
excepted), the title, axis labels, scales and limits, and the data of every artist that carries numbers:

* ``lines``: each :class:`~matplotlib.lines.Line2D` (``plot``, ``axhline``, ...): ``label``, ``x``, ``y``;
* ``images``: each ``imshow`` image or ``pcolormesh`` mesh: ``array`` (rows of values), ``clim`` and, for an
  image, its ``extent``;
* ``bars``: each bar container (``bar``, ``barh``): ``label``, ``x``, ``y`` (lower-left corners), ``width``,
  ``height`` of every bar;
* ``collections``: each other collection with offsets (``scatter``, ``fill_between`` has none): ``label``
  and ``offsets`` (one ``[x, y]`` per point);
* ``texts``: the strings written in the axes (annotations, marks such as ``WRONG``).

Floats are rounded to ``digits`` significant digits (default 8: a rounding flip then moves a value by at most
1e-7 relative, well inside the 1e-6 with which the book's numbers are compared), NaN and infinities are kept
(``onelayer.store`` writes them as strings). The scrubbers' numbers (:func:`onelayer.scrubber.frame_numbers`)
are this, once per frame.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.collections import Collection, QuadMesh
from matplotlib.container import BarContainer
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.lines import Line2D

from .validation import check_int

__all__ = ["figure_data", "round_significant"]


def round_significant(values, digits: int = 8):
    """``values`` (a number or an array-like of numbers) rounded to ``digits`` significant digits, as plain floats
    (nested lists for an array); NaN and infinities pass through."""
    digits = check_int("digits", digits, low=1, high=17)
    arr = np.asarray(values)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"values must be numbers, got an array of {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError("values must be real numbers, got complex ones")
    arr = np.ma.filled(arr.astype(np.float64), np.nan) if np.ma.isMaskedArray(arr) else arr.astype(np.float64)

    def one(x: float) -> float:
        return float(f"{x:.{digits}g}") if math.isfinite(x) else x

    if arr.ndim == 0:
        return one(float(arr))
    return np.vectorize(one, otypes=[np.float64])(arr).tolist() if arr.size else arr.tolist()


def _label(artist) -> str | None:
    label = artist.get_label()
    return None if not label or label.startswith("_") else str(label)


def _line(line: Line2D, digits: int) -> dict:
    x, y = (np.ma.filled(np.ma.asarray(v, dtype=np.float64), np.nan) for v in (line.get_xdata(), line.get_ydata()))
    return {"label": _label(line), "x": round_significant(x, digits), "y": round_significant(y, digits)}


def _image(image, digits: int) -> dict:
    array = np.ma.filled(np.ma.asarray(image.get_array(), dtype=np.float64), np.nan)
    out = {"array": round_significant(array, digits), "clim": round_significant(image.get_clim(), digits)}
    if isinstance(image, AxesImage):
        out["extent"] = round_significant(image.get_extent(), digits)
    return out


def _bars(container: BarContainer, digits: int) -> dict:
    rects = container.patches
    return {"label": _label(container),
            "x": round_significant([r.get_x() for r in rects], digits),
            "y": round_significant([r.get_y() for r in rects], digits),
            "width": round_significant([r.get_width() for r in rects], digits),
            "height": round_significant([r.get_height() for r in rects], digits)}


def _axes(ax, digits: int) -> dict:
    images = [a for a in ax.get_children() if isinstance(a, (AxesImage, QuadMesh))]
    collections = [c for c in ax.collections if isinstance(c, Collection) and not isinstance(c, QuadMesh)
                   and len(c.get_offsets())]
    return {
        "title": ax.get_title() or None,
        "xlabel": ax.get_xlabel() or None,
        "ylabel": ax.get_ylabel() or None,
        "xscale": ax.get_xscale(),
        "yscale": ax.get_yscale(),
        "xlim": round_significant(ax.get_xlim(), digits),
        "ylim": round_significant(ax.get_ylim(), digits),
        "lines": [_line(line, digits) for line in ax.get_lines()],
        "images": [_image(im, digits) for im in images],
        "bars": [_bars(c, digits) for c in ax.containers if isinstance(c, BarContainer)],
        "collections": [{"label": _label(c), "offsets": round_significant(np.asarray(c.get_offsets(), dtype=np.float64), digits)}
                        for c in collections],
        "texts": [t.get_text() for t in ax.texts if t.get_text()],
    }


def figure_data(fig, *, digits: int = 8) -> dict:
    """The plotted data of ``fig`` (see the module docstring): ``{"suptitle", "axes": [...]}``, JSON-able.

    Parameters
    ----------
    fig:
        A matplotlib :class:`~matplotlib.figure.Figure` (it is read, not closed).
    digits:
        Significant digits kept of every float (1 to 17).
    """
    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure, got {type(fig).__name__}")
    digits = check_int("digits", digits, low=1, high=17)
    suptitle = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    axes = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is None and ax.get_label() != "<colorbar>"]
    return {"suptitle": suptitle or None, "axes": [_axes(ax, digits) for ax in axes]}
