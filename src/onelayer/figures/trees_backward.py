"""Figures of the backward-reasoning chapters: trees, prompts, chains of thought, attention maps.

Every function returns a matplotlib figure (or draws on a given axes) so the
chapters stay a few calls and the widget callbacks are unit-tested.
"""

from __future__ import annotations

import numpy as np

from ..plots import PALETTE, new_figure, plot_curves
from ..validation import check_int
from ..trees.shared.data import Tree, random_tree, sample_goal
from ..trees.backward.layout import backward_tokens, token_text

__all__ = ["tree_positions", "draw_tree", "chain_text", "chain_figure", "sample_chain_figure", "attention_steps_figure",
           "construction_attention_figure", "generalization_figure", "accuracy_curves_figure"]


def tree_positions(tree: Tree) -> np.ndarray:
    """``(n, 2)`` drawing coordinates: leaves spaced evenly left to right, parents centred above children, ``y = -depth``."""
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    pos = np.zeros((tree.n, 2))
    counter = [0]

    def place(v):
        kids = tree.children(v)
        if kids.size == 0:
            pos[v, 0] = counter[0]
            counter[0] += 1
        else:
            for c in kids:
                place(int(c))
            pos[v, 0] = pos[kids, 0].mean()
        pos[v, 1] = -tree.depth_of(v)

    place(tree.root)
    return pos


def draw_tree(ax, tree: Tree, goal: int | None = None, *, title: str | None = None) -> None:
    """Draw ``tree`` on ``ax`` with node labels; the goal-to-root path (if ``goal`` is given) is highlighted.

    The circles grow with the spacing of the leaves (a label is 12 pt, like every figure text), up to a cap.
    """
    pos = tree_positions(tree)
    on_path = set(tree.path_to_root(goal).tolist()) if goal is not None else set()
    for p, c in tree.edges():
        hot = p in on_path and c in on_path
        ax.plot(pos[[p, c], 0], pos[[p, c], 1], color=PALETTE[1] if hot else "0.6", lw=2.2 if hot else 1.0, zorder=1)
    for v in range(tree.n):
        colour = PALETTE[1] if v in on_path else PALETTE[0]
        if v == goal:
            colour = PALETTE[3]
        ax.scatter(*pos[v], s=520, color=colour, zorder=2, edgecolor="white")
        ax.text(*pos[v], str(tree.label_of(v)), ha="center", va="center", color="white", zorder=3, weight="bold")
    ax.set_xlim(pos[:, 0].min() - 0.7, pos[:, 0].max() + 0.7)
    ax.set_ylim(pos[:, 1].min() - 0.6, 0.6)
    ax.set_axis_off()
    if title:
        ax.set_title(title)


def chain_text(tree: Tree, goal: int, rng=None, *, shuffle: bool = True, eos: bool = False) -> tuple[str, str]:
    """The prompt and the chain of thought as text lines (``-`` marks the empty block)."""
    prompt, targets = backward_tokens(tree, goal, rng, shuffle=shuffle, eos=eos)
    return " ".join(token_text(t, tree.S) for t in prompt), " ".join(token_text(t, tree.S) for t in targets)


def _wrap(tokens: str, width: int = 7) -> str:
    parts = tokens.split()
    return "\n".join(" ".join(parts[i : i + width]) for i in range(0, len(parts), width))


def chain_figure(tree: Tree, goal: int, rng=None, *, shuffle: bool = True, title: str | None = None):
    """The tree (path highlighted) above its R-B prompt and chain of thought (12 pt text, seven tokens a line)."""
    prompt, chain = chain_text(tree, goal, rng, shuffle=shuffle)
    fig, (ax_tree, ax_text) = new_figure(1, 2, width=6.5, height=5.0, gridspec_kw={"height_ratios": [3, 2]})
    draw_tree(ax_tree, tree, goal, title=title or f"goal {tree.label_of(goal)}, root {tree.label_of(tree.root)}")
    ax_text.set_axis_off()
    text = f"prompt (edges [parent;child], root, goal):\n{_wrap(prompt)}\n\nchain of thought (targets):\n{_wrap(chain)}"
    ax_text.text(0.0, 1.0, text, va="top", ha="left", family="monospace", transform=ax_text.transAxes)
    return fig


def sample_chain_figure(seed: int = 0, max_depth: int = 3, S: int = 20):
    """Widget callback: sample a random tree (0-3 children) and a non-root goal, draw it with its chain."""
    seed = check_int("seed", seed, low=0)
    max_depth = check_int("max_depth", max_depth, low=1, high=8)
    S = check_int("S", S, low=2, high=99)
    rng = np.random.default_rng(seed)
    tree = random_tree(S, rng, max_depth=max_depth, min_depth=1)
    goal = sample_goal(tree, rng, leaves_only=False)
    return chain_figure(tree, goal, rng, title=f"seed {seed}: {tree.n} nodes, depth {tree.depth}")


def _most_attended(row: np.ndarray, labels: list) -> str:
    """The label of the token with the largest weight of ``row``, or ``"tie"`` when it is not unique (relative 1e-9)."""
    top = row.max()
    return "tie" if np.sum(row >= top * (1 - 1e-9)) > 1 else str(labels[int(np.argmax(row))])


def attention_steps_figure(weights, token_labels, *, step_labels=None, title: str | None = None, prompt_len=None):
    """Heatmap of attention weights ``(K, L)`` of one tree: one row per chain-of-thought step, one column per token.

    Forty token labels cannot stand under the columns at 12 pt, so each row's label names the token that step
    attends to most (``step k: [p;c]``; ``step k: tie`` when several tokens share the largest weight up to a relative
    ``1e-9``), then the optional ``step_labels[k]``; the columns carry their positions and
    a white line after ``prompt_len`` tokens separates the prompt from the chain of thought. The colour scale is
    fixed to ``[0, 1]``.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2:
        raise ValueError(f"weights must have shape (K, L), got {w.shape}")
    labels = list(token_labels)
    if len(labels) != w.shape[1]:
        raise ValueError(f"token_labels must have {w.shape[1]} entries, got {len(labels)}")
    if step_labels is not None and len(step_labels) != w.shape[0]:
        raise ValueError(f"step_labels must have {w.shape[0]} entries, got {len(step_labels)}")
    from matplotlib.ticker import MaxNLocator

    fig, ax = new_figure(1, width=6.5, height=1.6 + 0.34 * w.shape[0])
    im = ax.imshow(w, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.grid(False)
    rows = [f"step {k + 1}: " + _most_attended(w[k], labels)
            + (f" {step_labels[k]}" if step_labels is not None and step_labels[k] else "") for k in range(w.shape[0])]
    ax.set_yticks(range(w.shape[0]), rows, family="monospace")
    ax.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    if prompt_len is not None and 0 < prompt_len < w.shape[1]:
        ax.axvline(prompt_len - 0.5, color="w", lw=1.5)
    ax.set_xlabel("key token (position; white line: end of the prompt)" if prompt_len is not None else "key token (position)")
    fig.colorbar(im, ax=ax, label="attention")
    if title:
        ax.set_title(title)
    return fig


def decoded_attention_figure(B, A, batch, index: int = 0, *, title: str | None = None):
    """Greedy-decode ``batch`` with ``B`` and draw the attention of tree ``index`` at every step.

    Columns are the tokens the last step can see (prompt and emitted chain);
    row ``k`` is the attention of step ``k + 1``.
    """
    from ..trees.backward.model import greedy_decode

    index = check_int("index", index, low=0, high=batch.size - 1)
    res = greedy_decode(B, A, batch[index])
    K = int(batch.target_mask[index].sum())
    last = int(batch.query[index, K - 1]) + 1
    first = batch.first[index, :last].clone()
    second = batch.second[index, :last].clone()
    P = int(batch.prompt_len[index])
    first[P:] = res.first[0, : K - 1]  # the model's own chain, as it was read
    second[P:] = res.second[0, : K - 1]
    labels = [token_text((a, b), batch.S) for a, b in zip(first.tolist(), second.tolist())]
    ok = res.step_correct[0, :K].tolist()
    steps = ["" if good else "WRONG" for good in ok]
    return attention_steps_figure(res.weights[0, :K, :last].numpy(), labels, step_labels=steps, title=title, prompt_len=P)


def construction_attention_figure(lam: float = 3.0, seed: int = 0, max_depth: int = 5):
    """Widget callback: a random tree (labels in ``range(31)``, one-hot embeddings) decoded by ``lam * I``."""
    import torch

    from ..validation import check_float
    from ..trees.shared.embeddings import one_hot_embeddings
    from ..trees.backward.layout import random_tree_batch

    lam = check_float("lam", lam, low=0.0)
    seed = check_int("seed", seed, low=0)
    max_depth = check_int("max_depth", max_depth, low=1, high=8)
    rng = np.random.default_rng(seed)
    batch, _ = random_tree_batch(31, 1, rng, max_depth=max_depth, min_depth=max_depth)
    A = one_hot_embeddings(31)
    return decoded_attention_figure(lam * torch.eye(31, dtype=A.dtype), A, batch, 0, title=f"lambda = {lam:g}")


def generalization_figure(steps, losses: dict, accuracies: dict, margin):
    """Two panels over training: the ``losses`` (log scale; a ``"margin bound"`` curve dashed) and the test
    ``accuracies`` with the ``margin`` on a right axis (dotted)."""
    fig, axes = new_figure(1, 2, width=6.5, height=6.6)
    plot_curves(axes[0], steps, losses, xlabel="step t", ylabel="loss", logy=True, styles={"margin bound": {"linestyle": "--"}})
    plot_curves(axes[1], steps, accuracies, xlabel="step t", ylabel="test accuracy")
    ax2 = axes[1].twinx()
    ax2.plot(steps, margin, color="0.5", linestyle=":", label="margin (right axis)")
    ax2.set_ylabel("margin delta")
    ax2.grid(False)
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    handles = axes[1].get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    axes[1].legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    return fig


def accuracy_curves_figure(steps, curves: dict, *, ylabel: str):
    """One panel of accuracies over training (``curves``: label -> values), on ``[0, 1]``, legend at the lower right."""
    fig, ax = new_figure(1, width=5.5, height=3.4)
    plot_curves(ax, steps, curves, xlabel="step t", ylabel=ylabel)
    ax.set_ylim(-0.03, 1.03)
    ax.legend(loc="lower right")
    return fig
