"""Figures of the walks chapters and the ring widget.

Every function returns a matplotlib figure (nothing is shown here), so the
chapters stay a few calls and the callbacks are unit-tested.

* Ring: :func:`transition_heatmaps` (the paper's Figure 2), :func:`mixing_figure`,
  :func:`ring_explorer` (the widget callback) and :func:`ring_widget`.
* Theorem 3.1: :func:`value_heatmaps`, :func:`training_figure` (Figures 4 and 8), :func:`log_odds_figure`,
  :func:`direction_figure`.
* Theorem 4.1: :func:`training_figure` again (Figures 5 and 9),
  :func:`escape_figure`, :func:`perturbation_figure`.
"""

from __future__ import annotations

import math

import numpy as np

from ..plots import PALETTE, heatmap, new_figure, plot_curves
from ..validation import check_int, check_probability
from ..widgets import slider_app
from ..walks import ring

__all__ = [
    "figure45_figure",
    "error_tick",
    "training_frame",
    "gram_error_figure",
    "transition_heatmaps",
    "mixing_figure",
    "ring_explorer",
    "ring_widget",
    "value_heatmaps",
    "training_figure",
    "mark_player_frame",
    "log_odds_figure",
    "direction_figure",
    "escape_figure",
    "perturbation_figure",
]


def _label(ax, xlabel: str, ylabel: str, title: str, *, legend: float | None = None) -> None:
    """Axis labels, a title and optionally a legend (every text at the book's one font size)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if legend:
        ax.legend()


def transition_heatmaps(K: int = 6, ps=(0.5, 0.7, 1.0)):
    """Heat-maps of ``Pi`` for several ``p`` (rows: current node ``s_t``, columns: next node)."""
    fig, axes = new_figure(len(ps), width=3.3 * len(ps), height=3.0)
    axes = np.atleast_1d(axes)
    for ax, p in zip(axes, ps):
        heatmap(ax, ring.transition_matrix(K, p), title=f"Pi, p = {p:g}", xlabel="next node", ylabel="current node",
                colorbar=False, annotate=False)
    return fig


def _eigen_axes(ax, K: int, p: float) -> None:
    lam = ring.eigenvalues(K, p)
    theta = np.linspace(0, 2 * np.pi, 200)
    ax.plot(np.cos(theta), np.sin(theta), color="0.7", linewidth=1)
    ax.scatter(lam.real, lam.imag, color=PALETTE[1], zorder=3, s=18)
    ax.set_aspect("equal")
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-1.15, 1.15)
    ax.set_title(f"eigenvalues, K = {K}")


def mixing_figure(Ks=(5, 6), p: float = 0.7, R_max: int = 60):
    """``max |Pi^R - limit|`` against ``R`` for each ``K`` (log scale), with the rate ``|lambda_2|^R``."""
    fig, ax = new_figure(1, width=5.5, height=3.2)
    R = np.arange(R_max + 1)
    for i, K in enumerate(Ks):
        dist = ring.mixing_distance(K, p, R_max)
        moduli = np.sort(np.abs(ring.eigenvalues(K, p)))
        second = moduli[moduli < 1 - 1e-12].max() if np.any(moduli < 1 - 1e-12) else 1.0
        ax.semilogy(R, np.maximum(dist, 1e-300), color=PALETTE[i], label=f"K = {K} ({'odd' if K % 2 else 'even'})")
        ax.semilogy(R, second**R, color=PALETTE[i], linestyle=":", label=f"|lambda_2|^R = {second:.3f}^R")
    ax.set_xlabel("power R")
    ax.set_ylabel("max |Pi^R - limit|")
    ax.set_ylim(1e-16, 2)
    ax.legend(loc="lower left")
    return fig


def ring_explorer(K: int = 6, p: float = 0.7):
    """Widget callback: ``Pi``, its eigenvalues on the unit circle, and the mixing of ``Pi^R``."""
    K = check_int("K", K, low=3, high=40)
    p = check_probability("p", p)
    fig, axes = new_figure(3, width=10.0, height=3.2)
    heatmap(axes[0], ring.transition_matrix(K, p), title=f"Pi (K = {K}, p = {p:.2f})", colorbar=False,
            annotate=False)
    axes[0].images[0].set_clim(0.0, 1.0)  # the same colour scale in every frame of the player
    _eigen_axes(axes[1], K, p)
    R_max = 40
    dist = ring.mixing_distance(K, p, R_max)
    axes[2].semilogy(np.arange(R_max + 1), np.maximum(dist, 1e-17))
    axes[2].set_ylim(1e-17, 2)
    axes[2].set_xlabel("power R")
    axes[2].set_ylabel("max |Pi^R - limit|")
    axes[2].set_title(f"mixing; Bayes acc. {ring.bayes_accuracy(p):.2f}")
    return fig


def ring_widget(K: int = 6, p: float = 0.7):
    """Sliders for ``K`` and ``p`` that redraw :func:`ring_explorer`."""
    import ipywidgets as widgets

    K = check_int("K", K, low=3, high=40)
    p = check_probability("p", p)
    controls = {
        "K": widgets.IntSlider(value=K, min=3, max=20, step=1, description="K"),
        "p": widgets.FloatSlider(value=p, min=0.0, max=1.0, step=0.05, description="p"),
    }
    return slider_app(ring_explorer, controls)


def value_heatmaps(matrices: dict, *, fmt: str = "{:.3f}"):
    """Side-by-side heat-maps of named matrices (e.g. a measured ``V`` and its closed form)."""
    fig, axes = new_figure(len(matrices), width=4.2 * len(matrices), height=3.6)
    axes = np.atleast_1d(axes)
    for ax, (name, M) in zip(axes, matrices.items()):
        M = np.asarray(M, dtype=float)
        heatmap(ax, M, title=name, annotate=False, fmt=fmt, xlabel="input node s", ylabel="output node y",
                colorbar=True)
    return fig


def training_figure(hist, exp, *, step: int | None = None, zoom: int = 10, title: str | None = None):
    """Figure 4 layout: (a) accuracies against steps, (b) ``V`` at ``step``, (c) attention averaged over the
    test set at ``step``, (d) the last ``zoom`` positions of (c).

    ``hist`` must carry the records of :func:`onelayer.studies.walks.experiment.standard_records`.
    """
    step = int(hist.steps[-1]) if step is None else step
    K = exp.model.config.K
    fig, axes = new_figure(4, width=13.0, height=3.2)
    plot_curves(axes[0], hist.steps, {"test accuracy": hist["test_accuracy"], "conditional accuracy": hist["conditional_accuracy"]},
                xlabel="GD step", ylabel="accuracy")
    axes[0].get_legend().remove()
    axes[0].axhline(exp.bayes_accuracy, color="0.3", linestyle="--", linewidth=1, label="Bayes")
    axes[0].axhline(1.0 / K, color="0.6", linestyle=":", linewidth=1, label="1/K")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_title("(a) accuracy")
    V = hist.at("V", step)
    heatmap(axes[1], V, title=f"(b) V at step {step}", annotate=False, xlabel="input node", ylabel="output node")
    profile = hist.at("attention_profile", step)
    N = profile.shape[0]
    pos = np.arange(1, N + 1)
    axes[2].bar(pos, profile, width=1.0, color=PALETTE[0])
    axes[2].set_xlabel("position j")
    axes[2].set_ylabel("mean attention")
    axes[2].set_title(f"(c) attention, step {step}")
    axes[2].set_ylim(0, 1.05)
    axes[3].bar(pos[-zoom:], profile[-zoom:], color=PALETTE[0])
    ticks = pos[-2::-2][: (zoom + 1) // 2]
    axes[3].set_xticks(ticks, [f"N-{N - j}" for j in ticks], rotation=45)
    axes[3].set_title("(d) last positions")
    axes[3].set_ylim(0, 1.05)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    if title:
        fig.suptitle(title)
    return fig


def mark_player_frame(fig, step: int, vlim: tuple[float, float]):
    """A frame of a player over GD steps drawn by :func:`training_figure`: the colour scale of ``V`` (panel (b)) fixed
    to ``vlim`` (the range over all frames) and the current step marked on the accuracy curves (panel (a))."""
    fig.axes[1].images[0].set_clim(*vlim)
    fig.axes[0].axvline(step, color="0.3", linewidth=0.8)
    return fig


def log_odds_figure(results: dict):
    """Step-2 ``min_j log(S_{N-1}/S_j)`` against ``N``; ``results`` maps a label to a
    :func:`onelayer.studies.walks.experiment.log_odds_vs_N` result."""
    fig, axes = new_figure(2, width=9.0, height=3.2)
    for i, (label, res) in enumerate(results.items()):
        axes[0].plot(res["N"], res["median_min_log_odds"], marker="o", color=PALETTE[i], label=label)
        axes[1].plot(res["N"], res["parent_attention"], marker="o", color=PALETTE[i], label=label)
    axes[0].set_yscale("log")
    _label(axes[0], "N", "median min. log-odds", "(a) parent log-odds, step 2")
    axes[1].set_ylim(0, 1.05)
    _label(axes[1], "N", "parent attention", "(b) attention on x_{N-1}, step 2")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def direction_figure(runs):
    """For each :func:`onelayer.studies.walks.experiment.direction_run` result: (a) direction distances of ``V``
    (solid: to ``Pi^T``, dashed: to ``sqrt(Pi^T)``, dotted: to the training set's square-root target),
    (b) clockwise / counter-clockwise ratio with ``p/(1-p)`` and ``sqrt(p/(1-p))``, (c) ``||V||_F / sqrt(2t)``.
    Colour is ``p`` and line style the target, in one legend below the panels."""
    from matplotlib.lines import Line2D

    fig, axes = new_figure(3, width=12.0, height=3.4)
    for i, res in enumerate(runs):
        c = PALETTE[i]
        t = res["steps"]
        axes[0].loglog(t, res["d_Pi"], color=c)
        axes[0].loglog(t, res["d_sqrt"], color=c, linestyle="--")
        axes[0].loglog(t, res["d_empirical"], color=c, linestyle=":")
        axes[1].semilogx(t, res["ratio"], color=c)
        p = res["p"]
        axes[1].axhline(p / (1 - p), color=c, linestyle="-.", linewidth=0.8)
        axes[1].axhline(np.sqrt(p / (1 - p)), color=c, linestyle="--", linewidth=0.8)
        axes[2].semilogx(t, res["norm"] / np.sqrt(2 * t), color=c)
    t = runs[0]["steps"]
    axes[0].loglog(t, 1.0 / np.sqrt(t), color="0.5", linewidth=0.8)
    _label(axes[0], "GD step t", "distance of directions", "(a) direction of V")
    axes[1].set_yscale("log")
    _label(axes[1], "GD step t", "clockwise / counter", "(b) ratio")
    axes[2].axhline(1.0, color="0.5", linestyle="--", linewidth=0.8)
    _label(axes[2], "GD step t", "||V||_F / sqrt(2 eta t)", "(c) norm growth")
    handles = [Line2D([], [], color=PALETTE[i], label=f"p = {res['p']:g}") for i, res in enumerate(runs)]
    handles += [Line2D([], [], color="0.2", label="(a) to Pi^T"),
                Line2D([], [], color="0.2", linestyle="--", label="(a) to sqrt(Pi^T); (b) sqrt(p/(1-p))"),
                Line2D([], [], color="0.2", linestyle=":", label="(a) to the sample's sqrt target"),
                Line2D([], [], color="0.2", linestyle="-.", label="(b) p/(1-p)"),
                Line2D([], [], color="0.5", linewidth=0.8, label="(a) t^(-1/2)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=2)
    return fig


def escape_figure(hists: dict, *, threshold: float = 1.0):
    """(a) real-token logit spread (log scale) and (b) test accuracy against GD steps, one curve per run
    (``hists`` maps labels to :func:`onelayer.studies.walks.theorem41.escape_run` histories)."""
    fig, axes = new_figure(2, width=10.0, height=3.4)
    for i, (label, h) in enumerate(hists.items()):
        spread = np.asarray(h["logit_spread"], dtype=float)
        shown = np.where(spread > 0, spread, np.nan)
        axes[0].semilogy(h.steps, shown, color=PALETTE[i % len(PALETTE)], marker=".", label=label)
        axes[1].plot(h.steps, h["test_accuracy"], color=PALETTE[i % len(PALETTE)], label=label)
    axes[0].axhline(threshold, color="0.5", linestyle="--", linewidth=0.8)
    _label(axes[0], "GD step", "real-token logit spread", "(a) spread (gap = exactly 0)")
    axes[1].set_ylim(0, 1.05)
    _label(axes[1], "GD step", "test accuracy", "(b) accuracy")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2)
    return fig


def perturbation_figure(result: dict):
    """Escape step against ``log10`` of the size of the initial perturbation of ``q``."""
    fig, ax = new_figure(1, width=5.0, height=3.2)
    x = np.log10(result["delta"])
    ax.plot(x, result["escape_step"], marker="o")
    slope, intercept = np.polyfit(x, result["escape_step"], 1)
    ax.plot(x, slope * x + intercept, color="0.5", linestyle="--", linewidth=1, label=f"fit: {slope:.2f} steps per decade")
    ax.set_xlabel("log10 of the perturbation size delta")
    ax.set_ylabel("escape step (spread > 1)")
    ax.legend()
    return fig


def rate_by_level_figure(levels: list[str], series: dict, panels: dict, *, xlabel: str, legend_title: str | None = None):
    """Shares of samples with their 95% intervals against a categorical level, one panel per entry of ``panels``
    (title -> key of the rates) and one line per entry of ``series`` (label -> one dict per level holding
    :class:`onelayer.rates.Rate` values under the panels' keys)."""
    fig, axes = new_figure(len(panels), width=6.3, height=3.6)
    axes = np.atleast_1d(axes)
    x = np.arange(len(levels))
    for ax, (title, key) in zip(axes, panels.items()):
        for i, (label, per_level) in enumerate(series.items()):
            rates = [r[key] for r in per_level]
            mid = np.array([r.value for r in rates])
            err = [mid - np.array([r.low for r in rates]), np.array([r.high for r in rates]) - mid]
            ax.errorbar(x + 0.06 * (i - (len(series) - 1) / 2), mid, yerr=err, marker="o", capsize=3,
                        color=PALETTE[i % len(PALETTE)], label=label)
        ax.set_xticks(x, levels)
        ax.set_ylim(-0.05, 1.05)
        _label(ax, xlabel, "share of samples", title)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=min(len(series), 5),
               title=legend_title)
    return fig


def figure45_figure(rows: list[dict]):
    """Fig. 4 parent attention and Fig. 5 escape step against ``||p_i||^2`` (one line per precision)."""
    if not rows:
        raise ValueError("rows must not be empty")
    fig, axes = new_figure(2, 1)
    for i, dtype in enumerate(sorted({r["dtype"] for r in rows})):
        sub = sorted((r for r in rows if r["dtype"] == dtype), key=lambda r: r["norm2"])
        x = [r["norm2"] for r in sub]
        color = PALETTE[i % len(PALETTE)]
        axes[0].plot(x, [r["fig4_parent"] for r in sub], "o-", color=color, label=dtype)
        esc = [r["fig5_escape_step"] if not math.isnan(r["fig5_escape_step"]) else np.nan for r in sub]
        axes[1].plot(x, esc, "o-", color=color, label=dtype)
    axes[0].set(xscale="log", xlabel=r"$\|p_i\|^2$", ylabel="attention on parent at step 50",
                title="Figure 4 (p = 1/2)")
    axes[1].set(xscale="log", xlabel=r"$\|p_i\|^2$", ylabel="escape step (missing: none in 50)",
                title="Figure 5 (p = 1)")
    for ax in axes:
        ax.legend()
    return fig


def error_tick(error: float) -> str:
    """``0``, ``10^-15`` or ``2*10^-12`` as a figure's tick label (mathtext)."""
    if error == 0:
        return "0"
    mantissa, exponent = f"{error:.0e}".split("e")
    return (f"${mantissa}\\cdot" if mantissa != "1" else "$") + f"10^{{{int(exponent)}}}$"


def gram_error_figure(exact: list[dict], norm_name):
    """(a) Figure 5 and (b) both figures reproduced against the relative Gram error, one line per squared norm:
    ``exact`` holds the rates of exactly orthogonal positions per error and norm (in the order of the norms), and
    ``norm_name`` names a norm (its legend label is the part before the equals sign)."""
    errors = sorted({r["gram_error"] for r in exact})
    series = {}
    for norm in dict.fromkeys(str(r["norm"]) for r in exact):  # in the rates' order: by squared norm
        sub = {r["gram_error"]: r for r in exact if str(r["norm"]) == norm}
        series[norm_name(sub[errors[0]]["norm"]).split(" = ")[0]] = [sub[e] for e in errors]
    return rate_by_level_figure([error_tick(e) for e in errors], series,
                                {"(a) Figure 5 reproduced": "fig5_rate", "(b) both figures": "both_rate"},
                                xlabel="relative Gram error", legend_title="squared norm |p_i|^2")


def training_frame(hist, exp, step: int, steps):
    """One frame of a player over the GD steps ``steps`` of a run: :func:`training_figure` at ``step``, marked with
    the step and the range of ``V`` over all of ``steps`` (:func:`mark_player_frame`), so every frame shares a scale."""
    V = np.stack([np.asarray(hist.at("V", t)) for t in steps])
    return mark_player_frame(training_figure(hist, exp, step=step), step, (float(V.min()), float(V.max())))
