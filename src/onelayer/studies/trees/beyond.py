"""Past the theorems' assumptions: non-orthogonal embeddings, large unseen trees, stopping by itself.

The training theorems assume orthonormal embeddings and the tests of the
chapters use trees of at most a few dozen nodes. This module trains both
models with *linearly independent, non-orthogonal* Gaussian embeddings
(:func:`~onelayer.trees.shared.embeddings.independent_embeddings`, entries
``N(0, 1/d)``) or one-hot ones, and evaluates them by greedy decoding on test
trees of three shapes that training never shows:

* ``"path"``: a chain of depth ``depth`` (goal: the leaf);
* ``"star"``: a root with ``children`` leaves (goal: a leaf);
* ``"random"``: :func:`~onelayer.trees.shared.data.random_tree` with up to
  ``max_nodes`` nodes, depth cap ``depth``, 0-3 children (goal: any non-root node).

Stopping: both models are trained *without* an end-of-sequence target; the
test sequences carry one (backward: the root self-loop ``[a_r; a_r]``;
forward: ``[a_g; 0; s_f]``) and we record whether the trained model emits it
by itself after the last path step. Whole-path accuracy excludes that step.

This module spans both directions, so it lives directly in ``trees/``. Its two stored studies over many runs are
:mod:`onelayer.studies.trees.backward_beyond` and :mod:`onelayer.studies.trees.forward_beyond`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ...validation import check_choice, check_int, check_int_sequence
from .backward_batched import train_backward_members
from ...trees.backward.layout import backward_batch
from ...trees.backward.model import greedy_decode as backward_decode
from ...trees.forward.layout import forward_batch
from ...trees.forward.decoding import greedy_decode as forward_decode
from ...trees.forward.model import train_forward, two_head
from ...trees.shared.data import Tree, random_tree, sample_goal
from ...trees.shared.embeddings import independent_embeddings, one_hot_embeddings
from .inputs import gaussian_embeddings

__all__ = ["EMBEDDINGS", "SHAPES", "DEPTH_BINS", "embeddings", "shape_tree", "test_set", "decode_ok",
           "backward_beyond", "forward_beyond", "depth_rows"]

#: Goal-depth bins of :func:`depth_rows`: ``(low, high)`` inclusive.
DEPTH_BINS = ((1, 1), (2, 3), (4, 6), (7, 9), (10, 12))

#: Embedding kinds.
EMBEDDINGS = ("one_hot", "gaussian")
#: Test shapes.
SHAPES = ("path", "star", "random")


def embeddings(kind: str, S: int, d: int | None = None, *, seed: int = 0) -> torch.Tensor:
    """``(d, S)`` float64 embeddings: ``"one_hot"`` (``d = S``) or ``"gaussian"`` (``d >= S``, default ``d = S``)."""
    check_choice("kind", kind, EMBEDDINGS)
    S = check_int("S", S, low=2)
    if kind == "one_hot":
        return one_hot_embeddings(S)
    d = S if d is None else check_int("d", d, low=S)
    return gaussian_embeddings(S, d, torch.Generator().manual_seed(check_int("seed", seed, low=0)))


def shape_tree(shape: str, S: int, rng: np.random.Generator, *, depth: int = 12, children: int = 20,
               max_nodes: int = 70, min_nodes: int = 30) -> tuple[Tree, int]:
    """One test tree of the given shape (module docstring) with random distinct labels, and its goal index."""
    check_choice("shape", shape, SHAPES)
    S = check_int("S", S, low=2)
    depth = check_int("depth", depth, low=1)
    children = check_int("children", children, low=1)
    if shape == "path":
        parent = np.arange(-1, depth)
    elif shape == "star":
        parent = np.array([-1] + [0] * children)
    else:
        tree = random_tree(S, rng, max_depth=depth, max_children=3, min_nodes=min_nodes, max_nodes=max_nodes)
        return tree, sample_goal(tree, rng, leaves_only=False)
    if len(parent) > S:
        raise ValueError(f"S={S} is smaller than the {len(parent)} nodes of the {shape}")
    tree = Tree(parent=parent, labels=rng.permutation(S)[: len(parent)], S=S)
    goal = len(parent) - 1 if shape == "path" else int(rng.integers(1, len(parent)))
    return tree, goal


def test_set(S: int, count: int, seed: int, **shape_kwargs) -> list[tuple[str, Tree, int]]:
    """``count`` trees of each shape in :data:`SHAPES` (seeded): a list of ``(shape, tree, goal)``."""
    count = check_int("count", count, low=1)
    rng = np.random.default_rng(check_int("seed", seed, low=0))
    return [(shape, *shape_tree(shape, S, rng, **shape_kwargs)) for shape in SHAPES for _ in range(count)]


def _by(keys, values) -> dict:
    out = {}
    for k in sorted(set(keys)):
        sel = [v for kk, v in zip(keys, values) if kk == k]
        out[str(k)] = (len(sel), float(np.mean(sel)))
    return out


def _summary(items, path_ok, stop_ok) -> dict:
    shapes = [s for s, _, _ in items]
    depths = [t.depth_of(g) for _, t, g in items]
    return {"path_accuracy": float(np.mean(path_ok)), "stop_rate": float(np.mean(stop_ok)),
            "path_by_shape": _by(shapes, path_ok), "stop_by_shape": _by(shapes, stop_ok),
            "path_by_depth": _by(depths, path_ok), "largest_tree": max(t.n for _, t, _ in items),
            "deepest_goal": max(depths)}


def decode_ok(B: torch.Tensor, A: torch.Tensor, batch) -> tuple[np.ndarray, np.ndarray]:
    """Per goal of an EOS test batch: every path step right (the EOS step excluded), and the EOS step right (boolean
    arrays), for one trained backward ``B``."""
    last = batch.target_mask.sum(1) - 1
    res = backward_decode(B, A, batch)
    stop_ok = res.step_correct[torch.arange(batch.size), last].numpy()
    path_ok = ((res.step_correct | ~batch.target_mask) | (torch.arange(batch.steps)[None, :] == last[:, None])).all(1).numpy()
    return path_ok, stop_ok


def backward_beyond(kind: str = "gaussian", *, S: int = 80, d: int | None = None, m: int = 3, steps: int = 400,
                    lr: float = 8.0, seeds: Sequence[int] = (0, 1, 2), count: int = 30, test_seed: int = 7,
                    batch_size: int = 128) -> list[dict]:
    """Train the backward model (one member per seed, batched) and test it on :func:`test_set`.

    Returns one dict per seed with the final training loss and the summary of ``_summary``
    fields: ``path_accuracy`` (every path step right, greedy), ``stop_rate``
    (the un-trained EOS step ``[a_r; a_r]`` emitted after the root),
    ``path_by_shape``, ``stop_by_shape``, ``path_by_depth`` (``key -> (count,
    accuracy)``). About 10 s for the defaults on one core.
    """
    seeds = check_int_sequence("seeds", seeds, low=0)
    A = embeddings(kind, S, d)
    hist = train_backward_members(A, m=m, steps=steps, lr=lr, seeds=seeds, batch_size=batch_size, record_every=steps)
    items = test_set(S, count, test_seed)
    batch = backward_batch([t for _, t, _ in items], [g for _, _, g in items], np.random.default_rng(test_seed), eos=True)
    out = []
    for i, seed in enumerate(seeds):
        path_ok, stop_ok = decode_ok(hist.params["B"][i], A, batch)
        out.append({"kind": kind, "seed": seed, "S": S, "d": A.shape[0], "m": m, "steps": steps, "lr": lr,
                    "train_loss": float(hist.records["loss"][-1][i]), **_summary(items, path_ok, stop_ok)})
    return out


def forward_beyond(kind: str = "gaussian", *, S: int = 80, d: int | None = None, m: int = 2, steps: int = 600,
                   lr: float = 2.0, seeds: Sequence[int] = (0, 1, 2), count: int = 30, test_seed: int = 7,
                   batch_size: int = 128) -> list[dict]:
    """Train the structured two-head forward model per seed and test it on :func:`test_set`.

    Same fields as :func:`backward_beyond`; ``path_accuracy`` is the
    root-to-goal answer read from the generated chain (the EOS step
    ``[a_g; 0; s_f]`` excluded), ``stop_rate`` whether that EOS step is emitted
    anyway. About 15 s per seed for the defaults on one core.
    """
    seeds = check_int_sequence("seeds", seeds, low=0)
    A = embeddings(kind, S, d)
    items = test_set(S, count, test_seed)
    batch = forward_batch([t for _, t, _ in items], [g for _, _, g in items], np.random.default_rng(test_seed), eos=True)
    eos = (batch.step_type == 3) & batch.target_mask
    out = []
    for seed in seeds:
        hist = train_forward(two_head(), A, m=m, steps=steps, lr=lr, seed=seed, batch_size=batch_size,
                             record_every=steps)
        res = forward_decode(hist.params, two_head(), A, batch)
        stop_ok = (res.step_correct & eos).any(1).numpy()
        path_ok = res.answer_correct.numpy()
        out.append({"kind": kind, "seed": seed, "S": S, "d": A.shape[0], "m": m, "steps": steps, "lr": lr,
                    "train_loss": float(hist["loss"][-1]), **_summary(items, path_ok, stop_ok)})
    return out


def depth_rows(rows: Sequence[dict], bins: Sequence[tuple[int, int]] = DEPTH_BINS) -> list[dict]:
    """Whole-path accuracy by goal depth: one row per result of :func:`backward_beyond` / :func:`forward_beyond`.

    Each row has ``embeddings``, ``seed`` and, per bin ``(low, high)``, the key ``"depth low-high"``
    (``"depth low"`` when ``low == high``) with the accuracy over the goals in it, or ``None`` when
    the bin is empty; ``"goals"`` gives the count per bin in the same order.
    """
    bins = [tuple(check_int_sequence("bins[i]", b, low=0)) for b in bins]
    if any(len(b) != 2 or b[0] > b[1] for b in bins):
        raise ValueError("bins must be (low, high) pairs with low <= high")
    out = []
    for r in rows:
        if not isinstance(r, dict) or "path_by_depth" not in r:
            raise TypeError("rows must be results of backward_beyond or forward_beyond")
        row = {"embeddings": r["kind"], "seed": r["seed"]}
        counts = []
        for lo, hi in bins:
            sel = [(n, a) for d, (n, a) in r["path_by_depth"].items() if lo <= int(d) <= hi]
            n = sum(c for c, _ in sel)
            row[f"depth {lo}" if lo == hi else f"depth {lo}-{hi}"] = sum(c * a for c, a in sel) / n if n else None
            counts.append(n)
        row["goals"] = counts
        out.append(row)
    return out
