"""The book's shared figure style and a few figure helpers.

Every chapter draws through these helpers so that the figures look alike and
so that a chapter stays a handful of calls. Figures are returned, never shown
here; in a notebook the last expression displays them (as PNG, see
:func:`use_book_style`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager

import matplotlib

import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "describe_figure",
    "BOOK_STYLE",
    "MAX_WIDTH",
    "FONT_SIZE",
    "PALETTE",
    "use_book_style",
    "book_style",
    "new_figure",
    "plot_curves",
    "heatmap",
    "mark_steps",
]

#: Colours used across the book (colour-blind safe, after Okabe and Ito).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: The widest figure, in inches. Saved with a tight bounding box (0.1 in of padding a side) it is at most 6.5 in,
#: about the text column (784 px) at 110 dpi, so a figure is shown at its own size on a wide screen and at about
#: half on a 400 px phone.
MAX_WIDTH = 6.3

#: The one font size of every text in a figure, in points. With :data:`MAX_WIDTH` it gives at least 9 px
#: on screen at the column width of a 1400 px and of a 400 px window: a figure shown narrower than its pixels
#: has text of ``12 / 72 * shown width / saved width in inches`` px, and the 400 px window's column is 352 px wide,
#: so 12 / 72 * 352 / 6.5 = 9.0 px. No figure sets a smaller one.
FONT_SIZE = 12

#: Matplotlib rc parameters of the book.
BOOK_STYLE = {
    "figure.figsize": (6.0, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "font.size": FONT_SIZE,
    "axes.titlesize": "medium",
    "axes.labelsize": "medium",
    "xtick.labelsize": "medium",
    "ytick.labelsize": "medium",
    "legend.fontsize": "medium",
    "legend.title_fontsize": "medium",
    "figure.titlesize": "medium",
    "legend.frameon": False,
    "image.cmap": "viridis",
}


def use_book_style() -> None:
    """Apply the book style globally and ask IPython for PNG figures.

    PNG output matters for testing: nbval skips PNG images, while an SVG would be
    compared as text and would differ between machines.
    """
    plt.rcParams.update(BOOK_STYLE)
    try:  # only inside IPython
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            from matplotlib_inline.backend_inline import set_matplotlib_formats

            set_matplotlib_formats("png")
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        pass


@contextmanager
def book_style():
    """Context manager form of :func:`use_book_style` (for scripts and tests)."""
    with plt.rc_context(BOOK_STYLE):
        yield


def new_figure(ncols: int = 1, nrows: int = 1, *, width: float | None = None, height: float | None = None, **kwargs):
    """A figure with ``nrows x ncols`` panels sized for the book's text column.

    Returns ``(fig, axes)``; ``axes`` is a single Axes when there is one panel,
    otherwise a flat array of exactly ``nrows * ncols`` panels.

    The figure is at most :data:`MAX_WIDTH` inches wide, so its text stays legible at the
    column width. A single row of three or more panels is laid out two panels a row instead
    (a spare fourth cell is removed), each row as tall as the requested row; a wider request
    is narrowed to :data:`MAX_WIDTH`, and its height scaled by the same factor (not below 0.8).
    """
    if not (isinstance(ncols, int) and isinstance(nrows, int)) or ncols < 1 or nrows < 1:
        raise ValueError(f"ncols and nrows must be positive integers, got ncols={ncols!r}, nrows={nrows!r}")
    for name, value in (("width", width), ("height", height)):
        if value is not None and not (isinstance(value, (int, float)) and value > 0):
            raise ValueError(f"{name} must be a positive number of inches, got {value!r}")
    panels = ncols * nrows
    row_height = height / nrows if height is not None else 3.0
    w = width if width is not None else 3.4 * ncols
    if nrows == 1 and ncols >= 3:
        grid_rows, grid_cols = -(-ncols // 2), 2
        w, h = MAX_WIDTH, row_height * grid_rows
    else:
        grid_rows, grid_cols = nrows, ncols
        scale = min(1.0, MAX_WIDTH / w)
        w, h = w * scale, row_height * nrows * max(scale, 0.8)
    fig, axes = plt.subplots(grid_rows, grid_cols, figsize=(w, h), squeeze=False, **kwargs)
    fig.set_layout_engine("constrained")
    flat = axes.ravel()
    for spare in flat[panels:]:
        fig.delaxes(spare)
    flat = flat[:panels]
    return fig, (flat[0] if flat.size == 1 else flat)


def plot_curves(
    ax,
    x,
    curves: Mapping[str, Sequence[float]],
    *,
    xlabel: str = "",
    ylabel: str = "",
    logx: bool = False,
    logy: bool = False,
    title: str | None = None,
    styles: Mapping[str, Mapping] | None = None,
):
    """Draw several named curves against a shared ``x`` on ``ax`` and label them."""
    x = np.asarray(x)
    for name, y in curves.items():
        y = np.asarray(y)
        if y.shape[0] != x.shape[0]:
            raise ValueError(f"curve {name!r} has {y.shape[0]} points but x has {x.shape[0]}")
        ax.plot(x, y, label=name, **dict((styles or {}).get(name, {})))
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if len(curves) > 1:
        ax.legend()
    return ax


def heatmap(ax, matrix, *, title: str | None = None, annotate: bool | None = None, fmt: str = "{:.2f}",
            xlabel: str = "", ylabel: str = "", ticklabels: Sequence | None = None, cmap: str = "viridis", colorbar: bool = True):
    """Show ``matrix`` as an image with optional value annotations (by default for matrices up to 5 x 5).

    Annotations are set in the book's one font size (:data:`FONT_SIZE`); a larger matrix's values belong in a
    table or the caption, not in cells too small for legible text.
    """
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {m.shape}")
    im = ax.imshow(m, cmap=cmap, aspect="equal")
    ax.grid(False)
    if annotate is None:
        annotate = max(m.shape) <= 5
    if annotate:
        mid = (np.nanmax(m) + np.nanmin(m)) / 2
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, fmt.format(v), ha="center", va="center", color="white" if v < mid else "black")
    if ticklabels is not None:
        ax.set_xticks(range(m.shape[1]), ticklabels[: m.shape[1]])
        ax.set_yticks(range(m.shape[0]), ticklabels[: m.shape[0]])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if colorbar:
        ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return im


def mark_steps(ax, steps: Mapping[str, float], *, color: str = "0.4") -> None:
    """Draw labelled vertical lines (phase boundaries, turning points) on ``ax``."""
    for label, x in steps.items():
        if x is None or not np.isfinite(x):
            continue
        ax.axvline(x, color=color, linestyle="--", linewidth=1)
        ax.annotate(label, (x, 1.0), xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right", color=color)


def describe_figure(fig, settings: Mapping[str, object] | None = None) -> str:
    """A text alternative for ``fig`` built from what it draws: each panel's title and what it plots against what.

    For example ``"Two panels. 1: 'attention on x_{N-1}' (y) against 'step t' (x), curves: p=0.5, p=0.7.
    2: heat map 'V' ... Settings: p = 0.5."`` It names the quantities on the axes, the curves of each
    legend and the heat maps, so a reader who cannot see the picture knows what it shows; a chapter
    adds what the reader should notice in the prose around it. ``settings`` (e.g. a widget's current
    values) are appended.
    """
    if not hasattr(fig, "get_axes"):
        raise TypeError(f"fig must be a matplotlib Figure, not {type(fig).__name__}")
    axes = [ax for ax in fig.get_axes() if ax.get_visible() and (ax.has_data() or ax.get_title())]
    axes = [ax for ax in axes if not getattr(ax, "_colorbar", None) and ax.get_label() != "<colorbar>"]
    parts = []
    sup = fig._suptitle.get_text() if getattr(fig, "_suptitle", None) is not None else ""
    if sup:
        parts.append(f"'{sup}'.")
    count = {1: "One panel", 2: "Two panels", 3: "Three panels", 4: "Four panels"}.get(len(axes), f"{len(axes)} panels")
    parts.append(f"{count}.")
    for i, ax in enumerate(axes, 1):
        title, xl, yl = ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
        kind = "heat map" if ax.images else ("bars" if ax.patches and not ax.lines else "plot")
        text = f"{i}: {kind}" + (f" '{title}'" if title else "")
        if yl or xl:
            text += f" of '{yl or 'value'}' against '{xl or 'index'}'"
        legend = ax.get_legend()
        if legend is not None:
            labels = [t.get_text() for t in legend.get_texts() if t.get_text()]
            if labels:
                text += ", curves: " + ", ".join(labels[:8]) + (" ..." if len(labels) > 8 else "")
        parts.append(text + ".")
    if settings:
        parts.append("Settings: " + ", ".join(f"{k} = {v}" for k, v in settings.items()) + ".")
    return " ".join(parts)
