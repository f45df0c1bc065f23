"""Every figure of the book is legible: at most onelayer.plots.MAX_WIDTH inches wide, no text below FONT_SIZE points.

Python side of issue 23's legibility check (the browser side, the rendered pixel size, is in tests/e2e): every
registered figure (onelayer.registry) is drawn in quick mode, as ``tests/test_registry.py`` draws it, and measured
before it is saved:

* its width, ``fig.get_size_inches()[0] <= MAX_WIDTH`` (the text column at ``savefig.dpi``);
* the smallest font among the visible, non-empty Text artists once the figure is drawn (titles, labels, tick labels,
  legends, annotations, heatmap cells) is at least ``FONT_SIZE``.

The test runs every figure's quick mode once more (tests/test_registry.py runs them to compare their numbers); the
offenders are reported by figure name with their width and their smallest texts. Scrubber frames are checked in the
stored notebooks (tests/test_reader_book.py: their PNGs' dpi).
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.text import Text

from onelayer import plots, registry
from onelayer.seeding import setup

# Figure sizes and font sizes (set, not computed): nothing here moves with another CPU's last bits.
pytestmark = pytest.mark.structural

#: Tolerance on the width, inches (new_figure sets MAX_WIDTH exactly; a float round trip may add 1e-12).
WIDTH_TOL = 1e-6


def measure(fig) -> dict:
    """Width (inches) and the visible texts smaller than FONT_SIZE ((size, text) pairs, smallest first)."""
    fig.canvas.draw()  # lays out ticks and legends, as saving would
    small = []
    for artist in fig.findobj(Text):
        text = artist.get_text().strip()
        if text and artist.get_visible() and artist.get_fontsize() < plots.FONT_SIZE - 1e-9:
            small.append((round(float(artist.get_fontsize()), 2), text[:30]))
    return {"width": float(fig.get_size_inches()[0]), "small": sorted(set(small))}


def offences(name: str, quick: bool = True) -> list[str]:
    """What is wrong with the registered figure ``name`` (empty when it is legible or has no figure)."""
    spec = registry.get(name)
    with plots.book_style():
        setup(0)
        fig, _ = spec.fn(quick)
        if fig is None:
            return []
        try:
            m = measure(fig)
        finally:
            plt.close(fig)
    out = []
    if m["width"] > plots.MAX_WIDTH + WIDTH_TOL:
        out.append(f"{name}: {m['width']:.2f} in wide (> MAX_WIDTH = {plots.MAX_WIDTH} in)")
    if m["small"]:
        shown = ", ".join(f"{size:g} pt {text!r}" for size, text in m["small"][:5])
        out.append(f"{name}: {len(m['small'])} texts below FONT_SIZE = {plots.FONT_SIZE} pt (smallest: {shown})")
    return out


@pytest.mark.parametrize("name", list(registry.available()))
def test_registered_figure_is_legible(name):
    plt.close("all")
    found = offences(name)
    assert not found, "; ".join(found) + " (use onelayer.plots.new_figure, and no fontsize/size/labelsize below FONT_SIZE)"


def test_measure_finds_small_text_and_wide_figures():
    with plots.book_style():
        fig, ax = plt.subplots(figsize=(8, 3))
        ax.set_title("fine")
        ax.text(0.5, 0.5, "tiny", fontsize=8)
        ax.tick_params(labelsize=10)
        ax.text(0.1, 0.1, "hidden", fontsize=6, visible=False)
        m = measure(fig)
        plt.close(fig)
    assert m["width"] == 8.0  # exact: the size we set
    assert (8.0, "tiny") in m["small"] and all(t != "hidden" for _, t in m["small"])
    assert any(size == 10.0 for size, _ in m["small"])  # exact: tick labels set to 10 pt
    assert matplotlib.get_backend().lower() == "agg"
