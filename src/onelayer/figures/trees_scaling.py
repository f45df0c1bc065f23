"""The figure of the trees scaling study (:func:`scaling_figure`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from matplotlib.ticker import LogFormatterSciNotation, NullFormatter

from ..plots import new_figure
from ..power_laws import loglog_panel
from ..studies.trees.scaling.fits import linear_model

__all__ = ["scaling_figure"]


def _ticks(ax, x) -> None:
    """x ticks at the measured sizes; plain numbers on both axes (minor y labels at 2 and 5 only)."""
    from matplotlib.ticker import FormatStrFormatter, FuncFormatter, NullFormatter

    ax.set_xticks(sorted(set(float(v) for v in x)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())

    def minor(value, _pos):
        lead = value / 10 ** math.floor(math.log10(value) + 1e-9) if value > 0 else 0
        return f"{value:g}" if round(lead, 6) in (2.0, 5.0) else ""

    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FuncFormatter(minor))


def _panel(ax, x, y, **kwargs):
    """:func:`onelayer.power_laws.loglog_panel`, fitting only when two sizes have a value."""
    y = np.asarray(y, dtype=float)
    x = np.asarray(x, dtype=float)
    fit = np.unique(x[~np.isnan(y)]).size >= 2
    return loglog_panel(ax, x, y, fit=fit, **kwargs)


def scaling_figure(depth_rows: Sequence[Mapping], label_rows: Sequence[Mapping] = (),
                   forward_rows: Sequence[Mapping] = (), time_rows: Sequence[Mapping] = ()):
    """Log-log panels: steps against nodes (depth grid), against ``S`` (labels), forward two-head, seconds per step.

    Each series carries its fitted power law (slope in the legend); the depth
    panel also shows the model ``S (c1 N + c0)`` of :func:`~onelayer.studies.trees.scaling.fits.linear_model`
    (dashed). Panels without rows are left out. Returns the figure.
    """
    panels = [p for p, rows in (("depth", depth_rows), ("labels", label_rows), ("forward", forward_rows),
                                ("time", time_rows)) if rows]
    if not panels:
        raise ValueError("scaling_figure needs at least one non-empty list of rows")
    # one panel a row: two a row leave no room for 12 pt legends
    fig, axes = new_figure(1, len(panels), width=6.5, height=2.6 * len(panels))
    axes = np.atleast_1d(axes)
    for ax, panel in zip(axes, panels):
        if panel in ("depth", "labels"):
            rows = depth_rows if panel == "depth" else label_rows
            x = np.array([r["n_nodes" if panel == "depth" else "S"] for r in rows], dtype=float)
            _panel(ax, x, [r["population_steps"] for r in rows], label="population", marker="s")
            if any("sampled_median" in r for r in rows):
                have = [r for r in rows if "sampled_median" in r]
                xs = np.array([r["n_nodes" if panel == "depth" else "S"] for r in have], dtype=float)
                med = np.array([r["sampled_median"] for r in have])
                _panel(ax, xs, med, label="SGD median", marker="o",
                             spread=(np.array([r["sampled_min"] for r in have]), np.array([r["sampled_max"] for r in have])))
            if panel == "depth" and len({r["tokens"] for r in rows}) >= 2:
                fit = linear_model(rows)
                N = np.array([r["tokens"] for r in rows], dtype=float)
                S_ = np.array([r["S"] for r in rows], dtype=float)
                ax.plot(x, S_ * (fit["c1"] * N + fit["c0"]), "--", color="0.5",
                        label=f"S({fit['c1']:.2f}N+{fit['c0']:.0f})")
            _ticks(ax, x)
            if panel == "depth":
                ax.set(xlabel="nodes n = S (m = 2, 3, ...)", ylabel="steps to converge", title="backward: depth")
            else:
                ax.set(xlabel=f"labels S (depth {rows[0]['m']})", ylabel="steps to converge", title="backward: labels")
        elif panel == "forward":
            x = np.array([r["n_nodes"] for r in forward_rows], dtype=float)
            y = np.array([r["steps_to_converge"] for r in forward_rows])
            _panel(ax, x, y, label="two heads", marker="^")
            lb = np.array([r["lower_bound"] for r in forward_rows])
            if np.any(~np.isnan(lb)):
                ax.plot(x[~np.isnan(lb)], lb[~np.isnan(lb)], "^", mfc="none", color="0.4", label="budget, not converged")
            _ticks(ax, x)
            ax.set(xlabel="nodes n (m = 2, 3, ...)", ylabel="steps to converge", title="forward: depth")
        else:
            x = np.array([r["n_nodes"] for r in time_rows], dtype=float)
            _panel(ax, x, [r["sampled_s_per_step"] for r in time_rows],
                         label=f"{time_rows[0]['members']} SGD runs", marker="o")
            _panel(ax, x, [r["population_s_per_step"] for r in time_rows], label="population", marker="s")
            _ticks(ax, x)
            ax.yaxis.set_minor_formatter(NullFormatter())  # a decade per label: the minor ones crowd at 12 pt
            ax.yaxis.set_major_formatter(LogFormatterSciNotation())
            ax.set(xlabel="nodes n = S", ylabel="seconds per step", title="wall time per step")
        if panel == "time":
            ax.legend(loc="center")  # the two timings lie decades apart: the middle is free
        else:
            low, high = ax.get_ylim()
            ax.set_ylim(low, high * 3)  # the steps rise to the right: headroom on the upper left for a 12 pt legend
            ax.legend(loc="upper left")
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    return fig
