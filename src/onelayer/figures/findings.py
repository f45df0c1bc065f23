"""The Findings page's forest plot: the key rate of each reading with its 95% Wilson interval (drawing only; the
lines come from :func:`onelayer.claims.forest_lines`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..plots import MAX_WIDTH, new_figure

__all__ = ["forest"]

#: Height of one line of the plot, inches (one 12 pt label with its spacing).
LINE = 0.25


def forest(lines: Sequence[Mapping], *, title: str | None = None):
    """One horizontal line per reading: the interval ``[low, high]``, a dot at ``k/n``, coloured by ``colour``, with
    ``k/n`` and the class letter at the right; readings of one claim under its ``group`` heading (a claim with one
    reading is one line, its label the group). A dashed line at 1/2: the rule of the classes."""
    if not lines:
        raise ValueError("lines must hold at least one line")
    rows = []  # (label, line or None for a heading)
    for i, line in enumerate(lines):
        if not line["single"] and (i == 0 or lines[i - 1]["group"] != line["group"]):
            rows.append((line["group"], None))
        rows.append((line["label"] if line["single"] else "  " + line["label"], line))
    fig, ax = new_figure(1, width=MAX_WIDTH, height=LINE * len(rows) + 1.0)
    for y, (label, line) in enumerate(rows):
        if line is None:
            continue
        ax.plot([line["low"], line["high"]], [y, y], color=line["colour"], lw=2.5, solid_capstyle="butt")
        ax.plot([line["k"] / line["n"]], [y], "o", color=line["colour"], ms=5)
    ax.axvline(0.5, color="0.4", lw=0.8, ls="--")
    ax.set_yticks(range(len(rows)), [label for label, _ in rows])
    for tick, (_, line) in zip(ax.get_yticklabels(), rows):
        if line is None:
            tick.set_fontweight("bold")
    right = ax.secondary_yaxis("right")  # k/n and the class letter, inside the layout (tick labels)
    counted = [(y, line) for y, (_, line) in enumerate(rows) if line is not None]
    right.set_yticks([y for y, _ in counted], [f"{line['k']}/{line['n']} {line['letter']}" for _, line in counted])
    right.tick_params(length=0)
    right.spines["right"].set_visible(False)
    for tick, (_, line) in zip(right.get_yticklabels(), counted):
        tick.set_color(line["colour"])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, 1)
    ax.set_xticks([0, 0.5, 1], ["0", "1/2", "1"])
    ax.set_xlabel("share of runs, 95% Wilson interval")
    ax.grid(axis="y", visible=False)
    ax.tick_params(axis="y", length=0)
    if title:
        ax.set_title(title)
    return fig
