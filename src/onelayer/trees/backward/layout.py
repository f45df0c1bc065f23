"""The backward token layout R-B (reconstruction), for one tree or a batch of trees.

A token is a column ``x = [x^(1); x^(2)]`` of two node blocks. It is stored as
a pair of symbols ``(first, second)``; the symbol ``S`` stands for the empty
block ``0`` (see :func:`onelayer.trees.shared.embeddings.with_empty`), so the vector
of a token is ``[a_first; a_second]`` with ``a_S = 0``.

======================  ==================  ========================================
token                   symbols             role
======================  ==================  ========================================
edge ``c -> p``         ``(p, c)``          one per non-root node, shuffled
root token              ``(r, r)``          a self-loop; optional (``root_token``)
goal token              ``(g, empty)``      last prompt token, first query
chain-of-thought ``k``  ``(v_k, v_{k-1})``  copy of the path edge ``v_{k-1} -> v_k``
EOS target (optional)   ``(r, r)``          "stay at the root" (``eos``)
======================  ==================  ========================================

Here ``g = v_0, v_1 = p(v_0), ..., v_D = r`` is the goal-to-root path. The
targets are the ``D`` chain-of-thought tokens (plus the EOS token); with
teacher forcing the model reads the prompt followed by all targets but the
last, and predicts target ``k`` from the token at position ``P - 1 + k``.

Every choice in this table (block order, self-loop root token, goal token with
an empty second block, pairs rather than single nodes, no positional
information) is a reconstruction: the paper's layout was not visible to us.

Batches are padded on the right; :class:`BackwardBatch` carries the masks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...validation import check_bool, check_int
from ..shared.data import PaddedBatch, Tree, check_rng, check_trees, pad_sequences, perfect_tree_draws, random_trees, unpadded_fields
from ..shared.embeddings import with_empty

__all__ = ["BackwardBatch", "backward_tokens", "backward_batch", "perfect_tree_batch", "random_tree_batch",
           "token_vectors", "path_from_targets", "token_text"]


@dataclass(frozen=True)
class BackwardBatch(PaddedBatch):
    """Teacher-forced R-B sequences of a batch of trees (symbol form, right-padded).

    ``S`` is the vocabulary size (symbol ``S`` is the empty block); ``first, second, valid`` are ``(batch, L)``: the
    two blocks of every token of the prompt followed by all targets but the last, and which tokens are real;
    ``query, target_first, target_second, target_mask`` are ``(batch, K)``: the position that predicts target ``k``,
    the targets, and which are real; ``prompt_len, root, goal, n_nodes`` are ``(batch,)``.
    """

    S: int
    first: torch.Tensor
    second: torch.Tensor
    valid: torch.Tensor
    query: torch.Tensor
    target_first: torch.Tensor
    target_second: torch.Tensor
    target_mask: torch.Tensor
    prompt_len: torch.Tensor
    root: torch.Tensor
    goal: torch.Tensor
    n_nodes: torch.Tensor


def _layout_flags(root_token, eos, shuffle):
    check_bool("root_token", root_token)
    check_bool("eos", eos)
    check_bool("shuffle", shuffle)
    if eos and not root_token:
        raise ValueError("eos=True needs root_token=True: the EOS target (r, r) copies the root token")


def backward_tokens(tree: Tree, goal: int, rng: np.random.Generator | None = None, *, root_token: bool = True,
        eos: bool = False, shuffle: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The R-B prompt and targets of one tree and its goal node *index* (not the root), as symbol pairs: integer
    arrays ``(P, 2)`` and ``(K, 2)`` (columns: first block, second block; ``S`` is the empty block). ``rng`` shuffles
    the edge tokens (``shuffle``; otherwise children increase); ``root_token`` and ``eos`` as in the module's table
    (``eos`` needs ``root_token``).
    """
    goal = _check_goal(tree, goal)
    _layout_flags(root_token, eos, shuffle)
    if shuffle:
        check_rng("rng", rng)
    return _backward_tokens(tree, goal, rng, root_token, eos, shuffle)


def _check_goal(tree: Tree, goal: int) -> int:
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    goal = check_int("goal", goal, low=0, high=tree.n - 1)
    if goal == tree.root:
        raise ValueError("goal must not be the root (the path would be empty)")
    return goal


def _backward_tokens(tree: Tree, goal: int, rng, root_token: bool, eos: bool, shuffle: bool):
    """:func:`backward_tokens` with arguments its caller checked."""
    lab = tree.labels
    edges = tree.edges()
    if shuffle:
        edges = edges[rng.permutation(len(edges))]
    prompt = [np.stack([lab[edges[:, 0]], lab[edges[:, 1]]], axis=1)]
    r = lab[tree.root]
    if root_token:
        prompt.append(np.array([[r, r]]))
    prompt.append(np.array([[lab[goal], tree.S]]))
    path = tree.path_to_root(goal)
    targets = np.stack([lab[path[1:]], lab[path[:-1]]], axis=1)
    if eos:
        targets = np.concatenate([targets, [[r, r]]])
    return np.concatenate(prompt).astype(np.int64), targets.astype(np.int64)


def _assemble(S: int, prompts: Sequence[np.ndarray], targets: Sequence[np.ndarray], roots, goals, sizes) -> BackwardBatch:
    pad = pad_sequences(S, prompts, targets)
    seq, tgt = pad["seq"], pad["targets"]
    as_t = torch.as_tensor
    return BackwardBatch(
        S=S, first=as_t(seq[..., 0].copy()), second=as_t(seq[..., 1].copy()), valid=as_t(pad["valid"]),
        query=as_t(pad["query"]), target_first=as_t(tgt[..., 0].copy()), target_second=as_t(tgt[..., 1].copy()),
        target_mask=as_t(pad["target_mask"]), prompt_len=as_t(pad["prompt_len"]),
        root=as_t(np.asarray(roots, dtype=np.int64)), goal=as_t(np.asarray(goals, dtype=np.int64)),
        n_nodes=as_t(np.asarray(sizes, dtype=np.int64)),
    )


def backward_batch(trees: Sequence[Tree], goals: Sequence[int], rng: np.random.Generator | None = None, *,
        root_token: bool = True, eos: bool = False, shuffle: bool = True) -> BackwardBatch:
    """Stack the R-B sequences of several trees (any shapes) into one padded :class:`BackwardBatch`.

    All trees must share the vocabulary size ``S``. Options as in :func:`backward_tokens`.
    """
    trees, goals, S = check_trees(trees, goals)
    goals = [_check_goal(t, g) for t, g in zip(trees, goals)]
    _layout_flags(root_token, eos, shuffle)
    if shuffle:
        check_rng("rng", rng)
    pairs = [_backward_tokens(t, g, rng, root_token, eos, shuffle) for t, g in zip(trees, goals)]
    return _assemble(
        S, [p for p, _ in pairs], [t for _, t in pairs],
        [t.label_of(t.root) for t in trees], [t.label_of(g) for t, g in zip(trees, goals)], [t.n for t in trees],
    )


def perfect_tree_batch(m: int, S: int, batch_size: int, rng: np.random.Generator, *, root_token: bool = True,
        eos: bool = False, shuffle: bool = True) -> BackwardBatch:
    """A batch from the training distribution, built without a Python loop over trees.

    Perfect binary trees of depth ``m`` (breadth-first node indices as in
    :func:`onelayer.trees.shared.data.perfect_binary_tree`), uniformly random
    injective labels into ``range(S)``, a uniform leaf as goal. Every sequence
    has the same length, so there is no padding.
    """
    _layout_flags(root_token, eos, shuffle)
    draws = perfect_tree_draws(m, S, batch_size, rng, shuffle=shuffle)
    S, n, batch_size = draws.S, draws.n, draws.batch_size
    labels, order, plab = draws.labels, draws.order, draws.path_labels
    rows = np.arange(batch_size)[:, None]
    e_first = labels[rows, draws.parent[order]]
    e_second = labels[rows, draws.child[order]]
    root = labels[:, 0]
    t_first = [plab[:, 1:]]
    t_second = [plab[:, :-1]]
    if eos:
        t_first.append(root[:, None])
        t_second.append(root[:, None])
    t_first = np.concatenate(t_first, axis=1)
    t_second = np.concatenate(t_second, axis=1)
    p_first = [e_first]
    p_second = [e_second]
    if root_token:
        p_first.append(root[:, None])
        p_second.append(root[:, None])
    p_first.append(plab[:, :1])
    p_second.append(np.full((batch_size, 1), S))
    first = np.concatenate(p_first + [t_first[:, :-1]], axis=1)
    second = np.concatenate(p_second + [t_second[:, :-1]], axis=1)
    P = sum(x.shape[1] for x in p_first)
    K = t_first.shape[1]
    as_t = torch.as_tensor
    return BackwardBatch(
        S=S, first=as_t(first), second=as_t(second), target_first=as_t(t_first), target_second=as_t(t_second),
        **unpadded_fields(batch_size, P, K, root, plab[:, 0], n),
    )


def random_tree_batch(S: int, count: int, rng: np.random.Generator, *, max_depth: int, max_children: int = 3,
        min_depth: int = 0, leaves_only: bool = False, root_token: bool = True,
        eos: bool = False) -> tuple[BackwardBatch, list[Tree]]:
    """``count`` random test trees with goals (:func:`onelayer.trees.shared.data.random_trees`), as a padded batch.

    The maximal depth of each tree is drawn uniformly from
    ``min_depth..max_depth`` (at least 1) so that shapes and depths vary; the
    goal is uniform over the non-root nodes (``leaves_only=False``, our
    reading of the test distribution) or over the leaves. Returns the batch
    and the list of trees.
    """
    trees, goals = random_trees(S, count, rng, max_depth=max_depth, max_children=max_children,
                                min_depth=min_depth, leaves_only=leaves_only)
    return backward_batch(trees, goals, rng, root_token=root_token, eos=eos), trees


def token_vectors(batch: BackwardBatch, A: torch.Tensor) -> torch.Tensor:
    """Materialise the teacher-forced tokens as vectors ``[a_first; a_second]``: shape ``(batch, L, 2d)``.

    Padding tokens are zero vectors. ``A`` has shape ``(d, S)``.
    """
    if not isinstance(batch, BackwardBatch):
        raise TypeError(f"batch must be a BackwardBatch, got {type(batch).__name__}")
    if not isinstance(A, torch.Tensor) or A.dim() != 2 or A.shape[1] != batch.S:
        raise ValueError(f"A must be a tensor of shape (d, S={batch.S})")
    E = with_empty(A)
    return torch.cat([E.T[batch.first], E.T[batch.second]], dim=-1)


def path_from_targets(targets: np.ndarray, *, eos: bool = False) -> np.ndarray:
    """Recover the goal-to-root path (labels) from target symbol pairs ``(K, 2)``.

    The path is the second block of the first target followed by the first
    block of every target (the EOS target, if any, is dropped).
    """
    t = np.asarray(targets)
    if t.ndim != 2 or t.shape[1] != 2 or t.shape[0] == 0:
        raise ValueError(f"targets must have shape (K, 2) with K >= 1, got {t.shape}")
    check_bool("eos", eos)
    if eos:
        t = t[:-1]
    return np.concatenate([t[:1, 1], t[:, 0]])


def token_text(pair, S: int) -> str:
    """A token as text, e.g. ``[3;7]`` or ``[7;-]`` (``-`` is the empty block)."""
    a, b = (int(v) for v in pair)
    show = lambda s: "-" if s == S else str(s)  # noqa: E731
    return f"[{show(a)};{show(b)}]"
