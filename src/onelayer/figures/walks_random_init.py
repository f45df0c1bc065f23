"""Figures of the random-initialisation runs and the widget over a stored study."""

from __future__ import annotations

import numpy as np

from ..plots import PALETTE, heatmap, new_figure
from ..widgets import slider_app
from ..studies.walks.random_init.readings import find_run
from ..studies.walks.random_init.runs import AUTHORS_TABLE


def figure_curves(runs: dict, *, title: str | None = None):
    """Figure 6 layout for named runs of both ``p``: (a) optimal-prediction fraction, (b) KL, (c) attention on
    ``x_{N-1}`` (solid) and ``x_{N-2}`` (dashed). ``runs`` maps a label to a :func:`~onelayer.studies.walks.random_init.runs.run_config` result."""
    fig, axes = new_figure(3, width=11.0, height=3.3)
    for i, (label, r) in enumerate(runs.items()):
        c = PALETTE[i % len(PALETTE)]
        t = np.asarray(r["steps"])
        axes[0].plot(t, r["curves"]["optimal_fraction"], color=c, label=label)
        axes[1].plot(t, r["curves"]["kl"], color=c, label=label)
        axes[2].plot(t, r["curves"]["parent_attention"], color=c, label=label)
        axes[2].plot(t, r["curves"]["lag2_attention"], color=c, linestyle="--")
    axes[0].set_ylabel("fraction of Bayes-optimal predictions")
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].set_title("(a) optimal predictions")
    axes[1].set_ylabel("mean KL (test)")
    axes[1].set_yscale("log")
    axes[1].set_title("(b) KL divergence")
    axes[2].set_ylabel("mean attention")
    axes[2].set_ylim(-0.02, 1.02)
    axes[2].set_title("(c) on x_{N-1} (solid), x_{N-2} (dashed)")
    for ax in axes:
        ax.set_xlabel("GD step")
    axes[0].set_ylabel("optimal fraction (test)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower right", bbox_to_anchor=(0.95, 0.15))
    if title:
        fig.suptitle(title)
    return fig


def figure_value_snapshots(run: dict, *, profile: bool = True):
    """``V`` at the stored snapshot steps (the paper's Figure 12), and the final attention profile (Figure 11)."""
    steps = sorted(run["V"], key=int)
    n = len(steps) + (1 if profile else 0)
    fig, axes = new_figure(n, width=min(3.0 * n, 13.0), height=3.0)
    axes = np.atleast_1d(axes)
    for ax, s in zip(axes, steps):
        heatmap(ax, np.asarray(run["V"][s]), title=f"V at step {s}", annotate=False,
                xlabel="input node", ylabel="output node")
    if profile:
        prof = np.asarray(run["profile"])
        axes[-1].bar(np.arange(1, prof.size + 1), prof, width=1.0, color=PALETTE[0])
        axes[-1].set_ylim(0, 1.05)
        axes[-1].set_xlabel("position j")
        axes[-1].set_title("final mean attention")
    return fig


def figure_weighted_token(run: dict, *, authors: bool = True):
    """The weighted average token of the example sequence (bars) at each table step, with the authors' values
    (dots) and the per-coordinate standard deviation over the sequences (error bars)."""
    steps = sorted(run["table"], key=int)
    fig, axes = new_figure(len(steps), width=min(2.6 * len(steps), 13.0), height=2.8, sharey=True)
    axes = np.atleast_1d(axes)
    for ax, s in zip(axes, steps):
        ex = np.asarray(run["table"][s]["example"])
        sd = np.sqrt(np.asarray(run["table"][s]["variance"]))
        k = np.arange(1, ex.size + 1)
        ax.bar(k, ex, yerr=sd, color=PALETTE[0], alpha=0.8, label="ours", capsize=2)
        if authors and int(s) in AUTHORS_TABLE:
            ax.plot(k, AUTHORS_TABLE[int(s)][0], "o", color=PALETTE[1], label="authors")
        ax.axhline(1 / ex.size, color="0.5", linestyle=":", linewidth=1)
        ax.set_title(f"step {s}")
        ax.set_xlabel("coordinate")
    axes[0].set_ylabel("X S (example sequence)")
    axes[0].legend()
    return fig


def figure_ordering(rows: list[dict]):
    """Heat-map of the study: for each normalisation (rows) and reading (columns), coloured by (#seeds with ``p = 1``
    first - #seeds with ``p = 0.5`` first) / #seeds, and labelled with the count of seeds showing the paper's pattern
    (``p = 0.5`` learned, ``p = 1`` not) out of the setting's seeds."""
    norms = list(dict.fromkeys(r["normalize"] for r in rows))
    reads = list(dict.fromkeys((r["reduction"], r["lr"]) for r in rows))
    grid = np.full((len(norms), len(reads)), np.nan)
    labels = {}
    for i, n in enumerate(norms):
        for j, rd in enumerate(reads):
            cell = [r for r in rows if r["normalize"] == n and (r["reduction"], r["lr"]) == rd]
            if not cell:
                continue
            grid[i, j] = (sum(r["first"] == "p=1" for r in cell) - sum(r["first"] == "p=0.5" for r in cell)) / len(cell)
            labels[i, j] = f"{sum(bool(r['paper_pattern']) for r in cell)}/{len(cell)}"
    fig, ax = new_figure(1, width=6.5, height=3.6)
    ax.imshow(grid, cmap="coolwarm", vmin=-1, vmax=1, aspect="auto")
    for (i, j), text in labels.items():
        ax.text(j, i, text, ha="center", va="center", color="white" if abs(grid[i, j]) > 0.6 else "black")
    ax.grid(False)
    ax.set_xticks(range(len(reads)), [f"{r}\n{lr:g}" for r, lr in reads])
    ax.set_yticks(range(len(norms)), [n.replace("_", "\n") for n in norms])
    ax.set_xlabel("loss reduction and step size")
    ax.set_title("red: p=1 learned first; blue: p=0.5 first\nlabels: seeds with the paper's pattern")
    return fig


def study_explorer(data: dict, normalize: str = "keys_and_query", reading: str = "mean, lr=0.01", seed: int = 0):
    """Widget callback: the stored curves of one setting, both ``p`` (:func:`figure_curves`)."""
    red, lr_text = [s.strip() for s in reading.split(",")]
    lr = float(lr_text.split("=")[1])
    runs = {f"p = {p:g}": find_run(data, p=p, normalize=normalize, reduction=red, lr=lr, seed=seed) for p in data["meta"]["ps"]}
    return figure_curves(runs, title=f"{normalize}, {reading}, seed {seed}")


def study_frame(data: dict, normalize: str, reading: str, *, seed: int, kl_limits: tuple[float, float]):
    """One frame of the study's player: :func:`study_explorer` with the KL axis on ``kl_limits`` (the same in every
    frame)."""
    fig = study_explorer(data, normalize=normalize, reading=reading, seed=seed)
    fig.axes[1].set_ylim(*kl_limits)
    return fig


#: The player's alt text (``{0}``: the normalisation, ``{1}``: the reading).
STUDY_FRAME_ALT = ("Stored curves of the random-initialisation sweep for p = 0.5 and p = 1 (seed 0) with the attention "
                   "inputs normalised as {0} and the reading {1}: fraction of Bayes-optimal predictions, KL divergence "
                   "and attention on the parent against the GD step.")


def study_frame_grid(data: dict, *, seed: int, kl_limits: tuple[float, float]):
    """The player's grid over the study: ``draw(normalize, reading)`` (:func:`study_frame`, one KL axis for every
    frame), the normalisations and the readings' texts."""

    def draw(norm, reading):
        return study_frame(data, norm, reading, seed=seed, kl_limits=kl_limits)

    return draw, data["meta"]["normalizations"], [f"{red}, lr={lr:g}" for red, lr in data["meta"]["readings"]]


def study_widget(data: dict):
    """Menus for the normalisation, the reading and the seed of a stored study, redrawing :func:`study_explorer`
    (the seeds stored with every curve: ``meta["detail_seeds"]``, else every seed)."""
    import ipywidgets as widgets

    meta = data["meta"]
    seeds = meta.get("detail_seeds", meta["seeds"])
    readings = [f"{r}, lr={lr:g}" for r, lr in meta["readings"]]
    controls = {
        "normalize": widgets.Dropdown(options=meta["normalizations"], value=meta["normalizations"][0], description="normalize"),
        "reading": widgets.Dropdown(options=readings, value=readings[0], description="loss, step"),
        "seed": widgets.Dropdown(options=seeds, value=seeds[0], description="seed"),
    }
    return slider_app(lambda **kw: study_explorer(data, **kw), controls)
