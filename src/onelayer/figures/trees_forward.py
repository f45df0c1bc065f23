"""Figures and text tables of the forward-reasoning chapters (Trees II).

Every function returns a matplotlib figure or a string, so the chapters stay
a few calls and the widget callbacks are unit-tested.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib
import numpy as np
import torch
from matplotlib.patches import Rectangle

from ..plots import MAX_WIDTH, PALETTE, mark_steps, new_figure, plot_curves
from ..validation import check_float, check_int
from ..trees.shared.data import example_tree
from ..trees.shared.embeddings import one_hot_embeddings
from ..trees.forward.dynamics import ROLE_METRICS, SCALAR_NAMES
from ..trees.forward.layout import STEP_TYPES, ForwardBatch, forward_batch, forward_token_text, random_forward_batch
from ..trees.forward.model import ForwardArchitecture, two_head
from ..trees.forward.decoding import greedy_decode

__all__ = [
    "MAX_TOKEN_LABELS",
    "lv_split_figure",
    "step_labels",
    "attention_by_step_figure",
    "construction_attention_figure",
    "example_batch",
    "scale_grid_figure",
    "seeds_figure",
    "architecture_label",
    "scalars_figure",
    "accuracy_by_type_figure",
    "rescaling_figure",
    "roles_figure",
    "loss_table_figure",
    "heads_depth_figure",
    "rate_heatmap_figure",
    "depth_accuracy_figure",
]

#: The most token labels under an attention-by-step figure; with more columns every second, third, ... one is labelled.
MAX_TOKEN_LABELS = 26


def step_labels(batch: ForwardBatch, index: int = 0) -> list[str]:
    """Row labels ``"target type"`` (e.g. ``"[7;3;b] backward"``) for the chain-of-thought steps of tree ``index``."""
    K = int(batch.target_mask[index].sum())
    out = []
    for k in range(K):
        tok = (batch.target_first[index, k], batch.target_second[index, k], batch.target_stage[index, k])
        out.append(f"{forward_token_text(tok, batch.S)} {STEP_TYPES[int(batch.step_type[index, k])]}")
    return out


def attention_by_step_figure(params, A: torch.Tensor, batch: ForwardBatch, index: int = 0, *,
                             arch: ForwardArchitecture | None = None, title: str | None = None):
    """Every head's attention at every chain-of-thought step of tree ``index`` (greedy decoding).

    One panel per head, stacked; rows are the steps (target token and step type), columns
    the tokens the last step can see, labelled with the tokens the model read
    (its own generated chain after the prompt; with more than ``MAX_TOKEN_LABELS`` columns every
    second, third, ... one). The turning step is boxed. The colour scale is 0 to 1 in every panel.
    """
    arch = two_head() if arch is None else arch
    index = check_int("index", index, low=0, high=batch.size - 1)
    one = batch[index]
    res = greedy_decode(params, arch, A, one, keep_weights=True)
    K = int(one.target_mask[0].sum())
    last = int(one.query[0, K - 1]) + 1
    P = int(one.prompt_len[0])
    toks = list(zip(one.first[0, :last].tolist(), one.second[0, :last].tolist(), one.stage[0, :last].tolist()))
    gen = list(zip(res.first[0].tolist(), res.second[0].tolist(), res.stage[0].tolist()))
    toks[P:] = gen[: K - 1]
    cols = [forward_token_text(t, one.S) for t in toks]
    rows = [lab + ("" if ok else "  WRONG") for lab, ok in zip(step_labels(one), res.step_correct[0, :K].tolist())]
    turn = [k for k in range(K) if int(one.step_type[0, k]) == STEP_TYPES.index("turning")]
    every = -(-last // MAX_TOKEN_LABELS)  # label every column, or every second, third, ... one
    fig, axes = new_figure(1, arch.heads, width=MAX_WIDTH, height=(1.3 + 0.3 * K) * arch.heads + 1.0)
    axes = np.atleast_1d(axes)
    for h, ax in enumerate(axes):
        w = res.weights[h, 0, :K, :last].numpy()
        im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1, aspect="auto")
        ax.grid(False)
        ax.set_yticks(range(K), rows, family="monospace")
        shown = range(0, last, every)
        ax.set_xticks(shown, [cols[i] for i in shown] if h == len(axes) - 1 else [], rotation=90, family="monospace")
        ax.axvline(P - 0.5, color="white", lw=0.8, ls=":")
        for k in turn:
            ax.add_patch(Rectangle((-0.5, k - 0.5), last, 1, fill=False, edgecolor=PALETTE[1], lw=2))
        role = arch.roles[h] if arch.kind == "structured" else "full"
        ax.set_title(f"head {h + 1} ({role})")
        fig.colorbar(im, ax=ax, shrink=0.9)
    if title:
        fig.suptitle(title)
    return fig


def construction_attention_figure(scale: float = 2.0, seed: int = 0, max_depth: int = 3):
    """Widget callback: a random tree (``S = 25``, one-hot) decoded by the construction at ``scale * (2, 1, 1)``."""
    from ..trees.forward.construction import constructed_params

    scale = check_float("scale", scale, low=0.0, low_open=True)
    seed = check_int("seed", seed, low=0)
    max_depth = check_int("max_depth", max_depth, low=1, high=6)
    A = one_hot_embeddings(25)
    rng = np.random.default_rng(seed)
    batch, _ = random_forward_batch(25, 1, rng, max_depth=max_depth, min_depth=max_depth, leaves_only=True)
    p = constructed_params(A, 2 * scale, scale, scale)
    return attention_by_step_figure(p, A, batch, title=f"(lambda, mu, kappa) = {scale:g} x (2, 1, 1)")


def example_batch() -> ForwardBatch:
    """The book's worked example (:func:`~onelayer.trees.shared.data.example_tree`, goal 7) in the R-F layout, edges unshuffled."""
    return forward_batch([example_tree()], [4], shuffle=False)


def scale_grid_figure(rows: Sequence[Mapping]):
    """Loss (log scale) and whole-path accuracy of the construction against its scale (rows of :func:`onelayer.studies.trees.analysis.scale_grid`)."""
    c = [r["scale"] for r in rows]
    fig, (a1, a2) = new_figure(2, width=MAX_WIDTH, height=3.0)
    plot_curves(a1, c, {"teacher-forced loss": [r["loss"] for r in rows]}, xlabel="scale c", ylabel="loss", logx=True, logy=True)
    plot_curves(a2, c, {"whole path": [r["path_accuracy"] for r in rows], "steps": [r["step_accuracy"] for r in rows]},
                xlabel="scale c", ylabel="accuracy", logx=True)
    a2.set_ylim(-0.03, 1.03)
    return fig


def scalars_figure(steps, loss, scalars, marks: Mapping[str, float] | None = None):
    """The analogue of the paper's Figure 9: loss, the ``u_{l,k}`` and the entries of ``V_1, V_2`` against the step."""
    scalars = np.asarray(scalars)
    if scalars.ndim != 2 or scalars.shape[1] != len(SCALAR_NAMES):
        raise ValueError(f"scalars must have shape (T, {len(SCALAR_NAMES)})")
    fig, axes = new_figure(1, 4, width=MAX_WIDTH, height=8.4, sharex=True)
    plot_curves(axes[0], steps, {"training loss": loss}, ylabel="loss", logy=True, title="(a) training loss")
    groups = [("(b) node blocks U_l", range(0, 4)), ("(c) stage block V_1", range(4, 8)), ("(d) stage block V_2", range(8, 12))]
    for ax, (title, idx) in zip(axes[1:], groups):
        plot_curves(ax, steps, {SCALAR_NAMES[i]: scalars[:, i] for i in idx}, title=title)
        ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
        ax.axhline(0, color="0.5", lw=0.6)
    axes[-1].set_xlabel("step t")
    for ax in axes:
        mark_steps(ax, dict(marks or {}))
    return fig


def accuracy_by_type_figure(steps, accuracy, marks: Mapping[str, float] | None = None, *, title: str | None = None):
    """Teacher-forced accuracy of the backward, turning and forward steps against the step."""
    acc = np.asarray(accuracy)
    fig, ax = new_figure(1, width=6.4, height=3.0)
    plot_curves(ax, steps, {f"{name} steps": acc[:, i] for i, name in enumerate(STEP_TYPES[:3])},
                xlabel="step t", ylabel="accuracy", title=title)
    ax.legend(loc="center right")
    ax.set_ylim(-0.03, 1.03)
    mark_steps(ax, dict(marks or {}))
    return fig


def roles_figure(steps, roles, marks: Mapping[str, float] | None = None):
    """Where each head looks over training: traversal-target mass (left) and next-stage mass (right), per step type.

    ``roles`` has one row per recorded step, columns in the order of
    :data:`~onelayer.trees.forward.dynamics.ROLE_METRICS`.
    """
    roles = np.asarray(roles)
    if roles.ndim != 2 or roles.shape[1] != len(ROLE_METRICS):
        raise ValueError(f"roles must have shape (T, {len(ROLE_METRICS)})")
    fig, axes = new_figure(1, 2, width=MAX_WIDTH, height=6.4)
    for ax, metric in zip(axes, ("traversal", "stage")):
        for l, style in ((1, "-"), (2, "--")):
            for i, t in enumerate(STEP_TYPES[:3]):
                col = ROLE_METRICS.index(f"head{l} {metric} {t}")
                ax.plot(steps, roles[:, col], style, color=PALETTE[i], label=f"head {l}, {t} steps")
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("step t")
        mark_steps(ax, dict(marks or {}))
    axes[0].set_ylabel("on traversal target")
    axes[1].set_ylabel("on next-stage tokens")
    axes[0].set_title("attention mass")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def rescaling_figure(runs: Mapping[str, tuple]):
    """Per-position loss against ``eta_eff * t`` for several runs: ``label -> (steps, loss, eta_eff, loss_factor)``.

    ``loss_factor`` divides the recorded loss to bring it to the mean-with-1/2
    scale (7 for the sum over the 7 positions, 14 for the sum without 1/2).
    """
    fig, (a1, a2) = new_figure(2, width=MAX_WIDTH, height=3.6)
    for i, (label, (steps, loss, eta, factor)) in enumerate(runs.items()):
        steps = np.asarray(steps, dtype=float)
        y = np.asarray(loss) / factor
        style = {"color": PALETTE[i % len(PALETTE)], "linestyle": ("-", "--", ":")[i % 3], "label": label}
        a1.plot(steps, y, **style)
        pos = steps > 0  # the right panel has a log axis
        a2.plot(eta * steps[pos], y[pos], **style)
    a1.set_xlabel("step t")
    a2.set_xlabel("eta_eff * t")
    for ax in (a1, a2):
        ax.set_ylabel("loss (mean, 1/2)")
        ax.set_yscale("log")
    a2.set_xscale("log")
    a1.set_ylabel("loss (mean, 1/2)")
    a2.set_ylabel("")
    fig.legend(*a1.get_legend_handles_labels(), loc="outside lower center", ncols=1)
    return fig


def loss_table_figure(rows: Sequence[Mapping], authors: Mapping[str, Sequence[float]], steps_grid: Sequence[int]):
    """Training loss of our runs (one panel per normalisation) beside the authors' table (last panel); one legend
    for our models below the panels."""
    norms = list(dict.fromkeys(r["norm"] for r in rows))
    fig, axes = new_figure(len(norms) + 1, height=3.0)
    for ax, norm in zip(axes, norms):
        for r in rows:
            if r["norm"] == norm:
                ax.plot(np.maximum(r["steps"], 0.8), r["loss"], marker=".", label=r["label"])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"ours, loss {norm}")
        ax.set_xlabel("step")
    for label, vals in authors.items():
        axes[-1].plot(steps_grid, vals, marker="o", label=label.replace("authors: ", ""))
    axes[-1].set_xscale("log")
    axes[-1].set_yscale("log")
    axes[-1].set_title("authors (review)")
    axes[-1].set_xlabel("step")
    axes[-1].legend(loc="lower left")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2)
    return fig


def seeds_figure(cells: Sequence[Mapping], offsets: Mapping[str, Mapping[int, tuple[int, float]]]):
    """Left: test whole-path accuracy against training depth, every seed as a dot and the median as a line, per
    architecture. Right: accuracy against goal depth minus training depth (``offsets``: arch -> offset -> (count, acc)),
    pooled over the runs that converged."""
    archs = list(dict.fromkeys(c["arch"] for c in cells))
    fig, (a1, a2) = new_figure(2, width=6.5, height=3.8)
    for i, arch in enumerate(archs):
        color = PALETTE[i % len(PALETTE)]
        sub = [c for c in cells if c["arch"] == arch]
        shift = (i - (len(archs) - 1) / 2) * 0.06
        for c in sub:
            accs = [r["test_path_accuracy"] for r in c["runs"]]
            a1.plot([c["m"] + shift] * len(accs), accs, "o", color=color, ms=3.5, alpha=0.8)
        a1.plot([c["m"] + shift for c in sub], [c["acc_median"] for c in sub], "-", color=color,
                label=architecture_label(arch))
    for i, arch in enumerate(archs):
        if arch in offsets and offsets[arch]:
            ks = sorted(offsets[arch])
            a2.plot(ks, [offsets[arch][k][1] for k in ks], marker="o", color=PALETTE[i % len(PALETTE)],
                    label=architecture_label(arch))
    a2.axvline(0.5, color="0.5", lw=0.8, ls="--")
    a1.set_xlabel("training depth m")
    a1.set_ylabel("test path accuracy")
    a1.set_xticks(sorted({c["m"] for c in cells}))
    a2.set_xlabel("goal depth - m")
    a2.set_ylabel("path accuracy (pooled)")
    for ax in (a1, a2):
        ax.set_ylim(-0.03, 1.03)
    handles, labels = a1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3)
    return fig


def architecture_label(name: str) -> str:
    """``"two_head"`` -> "2 structured heads", ``"full3"`` -> "3 full heads" (short legend labels)."""
    if name == "two_head":
        return "2 structured heads"
    if name == "single_head":
        return "1 structured head"
    if isinstance(name, str) and name.startswith("full") and name[4:].isdigit():
        n = int(name[4:])
        return f"{n} full head{'s' * (n > 1)}"
    raise ValueError(f"name must be 'two_head', 'single_head' or 'full<L>', got {name!r}")


def heads_depth_figure(rows: Sequence[Mapping]):
    """Steps to converge (left) and final test whole-path accuracy (right) against training depth, per architecture."""
    labels = list(dict.fromkeys(r["label"] for r in rows))
    fig, (a1, a2) = new_figure(2, width=6.5, height=4.0)
    for i, lab in enumerate(labels):
        sub = [r for r in rows if r["label"] == lab]
        ms = [r["m"] for r in sub]
        conv = [np.nan if r["steps_to_converge"] is None else r["steps_to_converge"] for r in sub]
        a1.plot(ms, conv, marker="o", color=PALETTE[i % len(PALETTE)], label=lab)
        for r in sub:
            if r["steps_to_converge"] is None:
                a1.plot(r["m"], r["budget"], marker="x", color=PALETTE[i % len(PALETTE)], ms=9)
        a2.plot(ms, [r["test_path_accuracy"] for r in sub], marker="o", color=PALETTE[i % len(PALETTE)], label=lab)
    a1.set_yscale("log")
    a1.set_xlabel("training depth m")
    a1.set_ylabel("steps to converge")
    a2.set_xlabel("training depth m")
    a2.set_ylabel("test path accuracy")
    a2.set_ylim(-0.03, 1.03)
    handles, labels = a1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2)
    for ax in (a1, a2):
        ax.set_xticks(sorted({r["m"] for r in rows}))
    return fig


def rate_heatmap_figure(panels: Sequence[Mapping], *, width: float = 5.5):
    """Heat maps of shares in [0, 1], one panel per entry of ``panels`` (stacked, so that a phone column holds them),
    each with its labelled colour scale.

    Each panel is a mapping with ``title``, ``rows`` and ``columns`` (tick labels), ``values`` (rows x columns, ``nan``
    for an empty cell, drawn grey) and optionally ``texts`` (the same shape: the text written in each cell, e.g.
    ``"17/20"``; omitted, no text), ``xlabel``, ``vmin`` (default 0; values below it take the lowest colour, and the
    colour bar's arrow says so) and ``colorbar`` (its label). Drawing only: the numbers come from the caller.
    """
    if not panels:
        raise ValueError("panels must hold at least one panel")
    heights = [0.3 * len(p["rows"]) + 1.5 for p in panels]
    fig, axes = new_figure(1, len(panels), width=width, height=sum(heights), height_ratios=heights)
    for ax, p in zip(np.atleast_1d(axes), panels):
        values = np.asarray(p["values"], dtype=float)
        if values.shape != (len(p["rows"]), len(p["columns"])):
            raise ValueError(f"values of panel {p['title']!r} must be rows x columns, got {values.shape}")
        vmin = p.get("vmin", 0.0)
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="0.85")
        im = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=vmin, vmax=1.0, aspect="auto")
        ax.grid(False)
        for (i, j), v in np.ndenumerate(values):
            if "texts" in p and p["texts"][i][j]:
                dark = np.isfinite(v) and v < vmin + 0.55 * (1.0 - vmin)
                ax.text(j, i, p["texts"][i][j], ha="center", va="center", color="white" if dark else "black")
        ax.set_xticks(range(len(p["columns"])), p["columns"])
        ax.set_yticks(range(len(p["rows"])), p["rows"])
        ax.set_xlabel(p.get("xlabel", ""))
        ax.set_title(p["title"])
        fig.colorbar(im, ax=ax, shrink=0.9, label=p.get("colorbar", "share"), extend="min" if vmin > 0 else "neither")
    return fig


def depth_accuracy_figure(series: Mapping[str, Sequence[tuple[str, float, float, float]]], *, ylabel: str = "paths right"):
    """Accuracy against goal depth, one line per entry of ``series`` (label -> ``(depth label, value, low, high)``
    per depth bin, the interval drawn as an error bar); depth bins are placed in the order they first appear."""
    labels = list(dict.fromkeys(d for pts in series.values() for d, *_ in pts))
    fig, ax = new_figure(1, width=5.0, height=3.2)
    for i, (name, pts) in enumerate(series.items()):
        x = np.array([labels.index(d) for d, *_ in pts], dtype=float) + (i - (len(series) - 1) / 2) * 0.08
        v, lo, hi = (np.array([p[k] for p in pts]) for k in (1, 2, 3))
        ax.errorbar(x, v, yerr=[v - lo, hi - v], marker="o", capsize=3, color=PALETTE[i % len(PALETTE)], label=name)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel("goal depth")
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.03, 1.03)
    fig.legend(loc="outside lower center", ncol=1)
    return fig


def lv_split_figure(rows: Sequence[Mapping], thresholds: Sequence[float]):
    """The node-block split rate against training steps with its Wilson 95% intervals, one line per (initialisation
    scale, threshold of ``thresholds``): ``rows`` as :func:`onelayer.studies.trees.forward_seeded_training.split_curves`
    gives them."""
    fig, ax = new_figure(width=6.4, height=4.2)
    for scale in sorted({r["init"] for r in rows}):
        for threshold, style in zip(thresholds, ("-", "--")):
            sel = [r for r in rows if r["init"] == scale and r["threshold"] == threshold]
            t = np.array([r["step"] for r in sel], dtype=float)
            v = np.array([r["node split"].value for r in sel])
            lo = v - np.array([r["node split"].low for r in sel])
            hi = np.array([r["node split"].high for r in sel]) - v
            ax.errorbar(t * (1.0 + 0.02 * (scale > 0.05)), v, yerr=[lo, hi], linestyle=style, marker="o", capsize=3,
                        label=f"init sd {scale:g}, share >= {threshold:g}")
    ax.set_xlabel("training step")
    ax.set_ylabel("share of runs with a node split")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{rows[0]['node split'].n} random starts per line, 95% intervals")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig
