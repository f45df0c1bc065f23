"""Figures of the variations (:mod:`onelayer.studies.walks.variations`): logit scale, lag 2, non-circulant chains."""

from __future__ import annotations

import numpy as np

from ..plots import PALETTE, heatmap, new_figure
from ..widgets import slider_app
from ..studies.walks.variations.non_circulant import chain_explorer_run

__all__ = ["figure_logit_scale", "figure_lag", "figure_chain", "chain_explorer", "chain_widget"]


def figure_logit_scale(rows: list[dict]):
    """Fraction of optimal test predictions (a) and attention on the parent (b) against the step, for every
    row of :func:`onelayer.studies.walks.variations.logit_scale.logit_scale_table` (solid: scale 1, dashed: ``1/sqrt(d)``)."""
    fig, axes = new_figure(2, width=6.5, height=4.0)
    ps = list(dict.fromkeys(r["p"] for r in rows))
    for r in rows:
        c = PALETTE[ps.index(r["p"]) % len(PALETTE)]
        ls = "-" if r["logit_scale"] == "one" else "--"
        lab = f"p = {r['p']:g}, {'scale 1' if r['logit_scale'] == 'one' else '1/sqrt(d)'}"
        axes[0].plot(r["steps"], r["optimal_fraction"], color=c, linestyle=ls, label=lab)
        axes[1].plot(r["steps"], r["parent_curve"], color=c, linestyle=ls, label=lab)
    for ax, yl in zip(axes, ("fraction of optimal predictions", "attention on x_{N-1}")):
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("GD step")
        ax.set_ylabel(yl)
        ax.set_ylim(-0.02, 1.02)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def figure_lag(res: dict):
    """(a) Closed-form ``V^(1)`` of the lag chain, (b) attention over the last positions after step 2,
    (c) attention on ``x_{N-2}`` and ``x_{N-1}`` and the optimal fraction over the run."""
    fig, axes = new_figure(3, width=11.5, height=3.3)
    heatmap(axes[0], res["V1_closed"], title="(a) V(1), closed form", annotate=False,
            xlabel="input node", ylabel="output node")
    prof = np.asarray(res["attention_step2"])
    N = prof.size
    last = np.arange(N - 8, N + 1)
    axes[1].bar(last, prof[-9:], color=PALETTE[0])
    axes[1].set_xticks(last[::2], [f"N-{N - j}" if j < N else "N" for j in last[::2]], rotation=60)
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title("(b) attention after step 2")
    axes[2].plot(res["steps"], res["lag_attention"], label="on x_{N-2}")
    axes[2].plot(res["steps"], res["parent_attention"], label="on x_{N-1}")
    axes[2].plot(res["steps"], res["optimal_fraction"], linestyle="--", label="optimal predictions")
    axes[2].set_ylim(-0.02, 1.02)
    axes[2].set_xlabel("GD step")
    axes[2].set_title("(c) over the run")
    fig.legend(*axes[2].get_legend_handles_labels(), loc="center", bbox_to_anchor=(0.75, 0.25))
    return fig


def figure_chain(res: dict):
    """(a) ``Pi``, (b) the final ``V`` (rows: outputs), (c) direction distances of ``V`` to the candidate targets."""
    fig, axes = new_figure(3, width=12.0, height=3.4)
    heatmap(axes[0], res["Pi"], title="(a) Pi (rows: current)", annotate=False)
    heatmap(axes[1], res["V_final"], title="(b) V at the last step", annotate=False,
            xlabel="input node", ylabel="output node")
    for name, d in res["d"].items():
        axes[2].loglog(res["d_steps"], d, label=name)
    axes[2].set_xlabel("GD step")
    axes[2].set_ylabel("|| V/||V|| - T/||T|| ||_F")
    axes[2].set_title("(c) direction of V")
    fig.legend(*axes[2].get_legend_handles_labels(), loc="center", bbox_to_anchor=(0.75, 0.25))
    return fig


def chain_explorer(seed: int = 0, concentration: float = 1.0, steps: int = 100):
    """Widget callback: :func:`onelayer.studies.walks.variations.non_circulant.chain_run` on a random chain (``K = 6``, ``N = 49``, ``M = 400``, 500 walks; :func:`onelayer.studies.walks.variations.non_circulant.chain_explorer_run`)."""
    res = chain_explorer_run(seed, concentration, steps)
    fig = figure_chain(res)
    fig.suptitle(f"seed {seed}, concentration {concentration:g}: parent attention after step 2 "
                 f"{res['parent_step2']:.3f},\noptimal fraction at the end {res['optimal_fraction'][-1]:.3f}")
    return fig


def chain_widget():
    """Controls for the chain's seed and Dirichlet concentration, redrawing :func:`chain_explorer`."""
    import ipywidgets as widgets

    controls = {
        "seed": widgets.IntSlider(value=0, min=0, max=9, description="seed"),
        "concentration": widgets.SelectionSlider(options=[0.2, 0.5, 1.0, 2.0, 5.0], value=1.0, description="Dirichlet"),
    }
    return slider_app(chain_explorer, controls)
