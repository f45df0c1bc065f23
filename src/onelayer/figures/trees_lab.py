"""Figures of the chapter "Trees lab": the lab's four panels for one trained setting.

Drawing only: every function takes a run's record (:meth:`onelayer.studies.trees.lab_runs.TreesLabResult.record`, live
or loaded from the stored study ``trees-lab-variations``) and returns a figure or its title.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..plots import new_figure, plot_curves

__all__ = ["lab_title", "lab_panels", "shared_limits"]

#: The lab's default loss normalisation (named in the title only when another is used).
DEFAULT_LOSS_NORM = "mean, 1/2"


def lab_title(record: Mapping) -> str:
    """Three short lines describing the setting and what the run reached (the figure's title)."""
    s, r = record["settings"], record["summary"]
    line1 = f"{s['layout']}, m={s['m']}, S={record['S']}"
    extras = ([f"loss {s['loss_norm']}"] if s["loss_norm"] != DEFAULT_LOSS_NORM else []) + \
             ([f"init {s['init_scale']:g}"] if s["init_scale"] > 0 else [])
    line2 = ", ".join([record["model"], f"lr {s['lr']:g}", f"{s['steps']} steps", *extras])
    line3 = f"loss {r['initial_loss']:.3g} -> {r['final_loss']:.3g}; whole-path accuracy {r['path_accuracy']:.3f}"
    return "\n".join((line1, line2, line3))


def _legend_below(ax, ncol: int = 2):
    """The panel's legend under its x-axis label (12 pt text would cover the curves inside the panel)."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=ncol, frameon=False, handlelength=1.2,
              columnspacing=0.8)


def lab_panels(record: Mapping, limits: Mapping | None = None):
    """(a) the loss, (b) the accuracy by step type, (c) the node-block scalars and (d) the stage-block scalars
    (forward) or the attention on the correct edge (backward, ``record["correct_weight"]`` not ``None``);
    ``limits``: fixed axis limits (``"x"``, ``"loss"``, ``"node"``, ``"stage"``, each a ``(low, high)`` pair), as a
    player over settings needs."""
    from matplotlib.ticker import NullFormatter

    steps, loss = np.asarray(record["steps"]), np.asarray(record["loss"], dtype=float)
    acc, sc = np.asarray(record["accuracy"], dtype=float), np.asarray(record["scalars"], dtype=float)
    acc_names, node_names, stage_names = record["accuracy_names"], record["node_names"], record["stage_names"]
    backward = record["correct_weight"] is not None
    fig, axes = new_figure(2, 2, width=6.5, height=7.6)
    logy = bool(np.all(loss > 0))
    plot_curves(axes[0], steps, {"training loss": loss}, xlabel="step t", ylabel="loss", logy=logy,
                title="(a) training loss")
    if logy:
        axes[0].yaxis.set_minor_formatter(NullFormatter())
    plot_curves(axes[1], steps, {n.replace(" steps", "").replace(" (greedy)", ""): acc[:, i]
                                 for i, n in enumerate(acc_names)},
                xlabel="step t", ylabel="accuracy", title="(b) accuracy by step")
    axes[1].set_ylim(-0.03, 1.03)
    plot_curves(axes[2], steps, {n: sc[:, i] for i, n in enumerate(node_names)}, xlabel="step t",
                title="(c) node blocks")
    if backward:
        plot_curves(axes[3], steps, {"weight on the correct edge": np.asarray(record["correct_weight"], dtype=float)},
                    xlabel="step t", title="(d) correct-edge weight")
        axes[3].set_ylim(-0.03, 1.03)
    else:
        plot_curves(axes[3], steps, {n: sc[:, len(node_names) + i] for i, n in enumerate(stage_names)},
                    xlabel="step t", title="(d) stage blocks V_l")
    for ax in axes[2:]:
        ax.axhline(0, color="0.5", lw=0.6)
    for ax in axes[1:]:
        if ax.get_legend() is not None:
            _legend_below(ax, ncol=3 if ax is axes[1] and len(acc_names) <= 3 else 2)
    if limits is not None:
        for ax in axes:
            ax.set_xlim(*limits["x"])
        axes[0].set_ylim(*limits["loss"])
        axes[2].set_ylim(*limits["node"])
        if not backward:
            axes[3].set_ylim(*limits["stage"])
    fig.suptitle(lab_title(record))
    return fig


def shared_limits(records: Sequence[Mapping]) -> dict:
    """Axis limits shared by every frame of a player over ``records``: steps, loss (log scale), node and stage
    scalars."""
    def span(values, pad=0.05):
        low, high = float(min(values)), float(max(values))
        return low - pad * (high - low), high + pad * (high - low)

    loss = np.concatenate([np.asarray(r["loss"], dtype=float) for r in records])
    node = [v for r in records for v in np.asarray(r["scalars"])[:, :len(r["node_names"])].ravel()]
    stage = [v for r in records for v in np.asarray(r["scalars"])[:, len(r["node_names"]):].ravel()] or [0.0, 1.0]
    last = max(int(r["steps"][-1]) for r in records)
    return {"x": (-0.03 * last, 1.03 * last), "loss": (loss.min() / 1.5, loss.max() * 1.5), "node": span(node + [0.0]),
            "stage": span(stage + [0.0])}
