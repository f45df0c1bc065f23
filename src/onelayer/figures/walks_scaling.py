"""Figures of a scaling study: steps against ``N`` and ``M``, time per step, critical ``M``."""

from __future__ import annotations

import numpy as np

from ..plots import PALETTE, new_figure
from ..power_laws import loglog_panel
from ..studies.walks.scaling.runs import M_FIXED, N_FIXED
from ..studies.walks.scaling.summary import _x_of

#: the wall-time legend's series names (short enough for 12 pt beside the panel)
_SHORT = {"N": f"M={M_FIXED}, N varies", "M": f"N={N_FIXED}, M varies", "curve": "M=N^1.5, N varies",
          "N_more_walks": f"M={M_FIXED}, more walks"}


def _spread(rows, q):
    y = np.array([r[q] for r in rows], dtype=float)
    lo = np.array([r[q + "_min"] for r in rows], dtype=float)
    hi = np.array([r[q + "_max"] for r in rows], dtype=float)
    return y, (np.where(np.isnan(y), np.nan, np.fmin(lo, y)), np.where(np.isnan(y), np.nan, np.fmax(hi, y)))


def _plain_ticks(ax, xticks=None, yticks=None) -> None:
    """Log axes with plain numbers at the given ticks and no minor labels."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, ScalarFormatter

    for axis, ticks in ((ax.xaxis, xticks), (ax.yaxis, yticks)):
        if ticks is None:
            continue
        axis.set_major_locator(FixedLocator(sorted(set(ticks))))
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())


def _steps_series(ax, rows, axis, q, label, color, marker, shift=1.0):
    """One series of steps (upper median over seeds, min-max bars, fitted slope); ``x`` marks lost seeds."""
    x = np.array([r[_x_of(axis)] for r in rows], dtype=float)
    y, spread = _spread(rows, q)
    good = np.isfinite(y)
    if good.any():
        fit = good.sum() >= 2 and np.unique(x[good]).size >= 2
        loglog_panel(ax, x * shift, y, label=label, spread=spread, fit=fit, color=color, marker=marker)
    lost = np.array([r[q + "_converged"] < r["seeds"] for r in rows])
    if lost.any():
        label = "x: some seeds never converge"
        ax.plot(x[lost] * shift, np.full(lost.sum(), 1.5), "x", color=color,
                label=None if label in ax.get_legend_handles_labels()[1] else label)
    return x


_STEP_TICKS = (2, 3, 4, 6, 8, 12, 16)


def _finish_steps_axes(ax, x, xlabel, title, ymax, *, legend_loc="upper left", headroom=1.25):
    """Log axes with plain ticks; the legend at ``legend_loc`` inside the axes, above the points when ``headroom``
    (the top of the y axis over the largest step shown) leaves room for it."""
    top = max(ymax, 4) * headroom
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1.35, top)
    _plain_ticks(ax, xticks=x, yticks=[t for t in _STEP_TICKS if t <= top])
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GD steps to converge")
    ax.set_title(title)
    ax.legend(loc=legend_loc)


def _ymax(*row_sets) -> float:
    values = [r[k] for rows in row_sets for r in rows for k in ("T_parent_max", "T_optimal_max")]
    values = [v for v in values if np.isfinite(v)]
    return max(values) if values else 4.0


def figure(study: dict, *, wall: bool = True):
    """Log-log panels: steps against ``N`` (``M = 1000`` and ``M = ceil(N^{3/2})``), steps against ``M``
    (``N = 97``) and the wall time of a GD step against ``N (n + M)``.

    Points are upper medians over seeds with min-max bars and the fitted slope
    in the legend; series at the same ``N`` are shifted slightly sideways so that
    they do not hide each other; an ``x`` at the bottom marks a size where some
    seeds never converged. ``wall=False`` leaves out the (machine-dependent)
    timing panel.
    """
    panels = 3 if wall else 2
    fig, axes = new_figure(1, panels, width=6.5, height=3.0 * panels)  # one panel a row: room for 12 pt legends inside
    axes = np.atleast_1d(axes)
    ax = axes[0]
    xs = []
    styles = {"N": (0.96, f"M={M_FIXED}", ((PALETTE[0], "o"), (PALETTE[1], "s"))),
              "curve": (1.04, "M=N^1.5", ((PALETTE[2], "^"), (PALETTE[3], "D"))),
              "N_more_walks": (0.92, f"M = {M_FIXED}, more walks", ((PALETTE[4], "v"),))}
    for axis, (shift, tag, looks) in styles.items():
        if axis in study and study[axis]:
            for q, (color, marker) in zip(("T_parent", "T_optimal"), looks):
                xs.extend(_steps_series(ax, study[axis], axis, q, f"{q}, {tag}", color, marker, shift))
    if xs:
        # the steps hardly change with N: the headroom above them holds the legend
        _finish_steps_axes(ax, xs, "N", "steps against N", _ymax(*(study[a] for a in styles if a in study)), headroom=3.0)
    ax = axes[1]
    if "M" in study and study["M"]:
        x = []
        for q, color, marker in (("T_parent", PALETTE[0], "o"), ("T_optimal", PALETTE[1], "s")):
            x = _steps_series(ax, study["M"], "M", q, q, color, marker)
        _finish_steps_axes(ax, x, "M", f"steps against M (N = {N_FIXED})", _ymax(study["M"]), legend_loc="upper right")
    if wall:
        ax = axes[2]
        for (axis, rows), color in zip(study.items(), PALETTE):
            x = np.array([r["N"] * (r["n_train"] + r["M"]) for r in rows], dtype=float)
            y = np.array([1e3 * r["seconds_per_step"] for r in rows], dtype=float)
            if np.isfinite(y).sum() >= 2:
                loglog_panel(ax, x, y, label=_SHORT.get(axis, axis), color=color)
        from matplotlib.ticker import NullFormatter

        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("N (n + M), n = training walks per seed")
        ax.set_ylabel("ms per GD step")
        ax.set_title("wall time per step (all seeds)")
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * 6)  # headroom for the legend above the points (the times differ from run to run)
        ax.legend(loc="upper left")
    return fig


def critical_figure(critical_sets: dict[str, list[dict]]):
    """``M_crit`` against ``N`` on log axes, one series per criterion (``label -> critical_M rows``), with ``N^1.5``."""
    fig, ax = new_figure(width=6.5, height=4.6)
    allN = []
    for (label, rows), color in zip(critical_sets.items(), PALETTE):
        x = np.array([r["N"] for r in rows], dtype=float)
        y = np.array([r["M_crit"] for r in rows], dtype=float)
        lo = np.array([r["M_crit_min"] for r in rows], dtype=float)
        hi = np.array([r["M_crit_max"] for r in rows], dtype=float)
        good = np.isfinite(y)
        loglog_panel(ax, x[good], y[good], label=label, spread=(np.fmin(lo, y)[good], np.fmax(hi, y)[good]),
                     color=color, fit=good.sum() >= 2)
        allN.extend(x)
    xs = np.geomspace(min(allN), max(allN), 50)
    ax.plot(xs, xs**1.5, "--", color="0.5", label="N^1.5")
    ax.plot(xs, xs + 1, ":", color="0.5", label="N + 1 (smallest M allowed)")
    _plain_ticks(ax, xticks=allN)
    ax.set_xlabel("N")
    ax.set_ylabel("smallest M that selects\nthe parent at step 2")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncols=1)  # below the axes: inside it covers the points
    return fig
