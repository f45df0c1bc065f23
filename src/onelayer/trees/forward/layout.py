"""The forward token layout R-F (reconstruction), for one tree or a batch of trees.

A token is a column ``x = [x^(1); x^(2); x^(s)]``: two node blocks and a
two-dimensional stage block. It is stored as three integers
``(first, second, stage)``; the node symbol ``S`` stands for the empty block
``0`` (as in :func:`onelayer.trees.shared.embeddings.with_empty`) and the stage is
``0`` (no flag, ``x^(s) = 0``), ``1`` (``s_b = e_1``, backward stage) or ``2``
(``s_f = e_2``, forward stage).

=============================  ==========================  ==========================
token                          symbols                     role
=============================  ==========================  ==========================
edge ``c -> p``                 ``(p, c, 0)``               one per non-root node, shuffled
root token                     ``(r, r, f)``               the turning-point marker
goal token                     ``(empty, g, b)``           last prompt token, first query
backward step ``j = 0..D-1``    ``(v_j, v_{j+1}, b)``        previous = child, current = parent
turning step                   ``(r, r, f)``               emitted once, at the root
forward step ``j = D-1..0``     ``(v_{j+1}, v_j, f)``        previous = parent, current = child
EOS target (optional)          ``(g, empty, f)``           "the goal is reached"
=============================  ==========================  ==========================

Here ``g = v_0, v_1 = p(v_0), ..., v_D = r`` is the goal-to-root path, so the
chain of thought has ``2D + 1`` steps (``2m + 1`` on a perfect tree of depth
``m`` with a leaf goal). Block 2 of the turning token and of every forward
step spells the answer, the root-to-goal path ``r, v_{D-1}, ..., g``
(:func:`onelayer.trees.forward.decoding.answer_from_cot`).

Named variation: ``cot=False`` drops the backward steps (the answer directly). Every choice in the table is a
reconstruction; :mod:`onelayer.studies.trees.layout_variants` builds the studies' variations (no turning token;
flagged prompt edges). Batches are right-padded as in :mod:`onelayer.trees.backward.layout`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...validation import check_bool, check_int
from ..shared.data import PaddedBatch, Tree, check_rng, check_trees, pad_sequences, perfect_tree_draws, random_trees, unpadded_fields
from ..shared.embeddings import with_empty

__all__ = ["STAGE_NONE", "STAGE_B", "STAGE_F", "STEP_TYPES", "ForwardBatch", "rf_tokens",
           "forward_batch", "perfect_forward_batch", "random_forward_batch", "forward_token_vectors",
           "forward_target_vectors", "forward_token_text"]

#: Stage codes: no flag, ``s_b`` (backward), ``s_f`` (forward).
STAGE_NONE, STAGE_B, STAGE_F = 0, 1, 2

#: Names of the step types, indexed by the codes stored in :attr:`ForwardBatch.step_type`.
STEP_TYPES = ("backward", "turning", "forward", "eos")
_BACK, _TURN, _FWD, _EOS = range(4)


@dataclass(frozen=True)
class ForwardBatch(PaddedBatch):
    """Teacher-forced R-F sequences of a batch of trees (symbol form, right-padded).

    As :class:`onelayer.trees.backward.layout.BackwardBatch`, with a third block ``stage``/``target_stage``;
    ``step_type (batch, K)`` indexes :data:`STEP_TYPES` (``-1`` on padding), ``goal_depth (batch,)`` is ``D``, and
    ``cot`` records the layout's variation.
    """

    S: int
    first: torch.Tensor
    second: torch.Tensor
    stage: torch.Tensor
    valid: torch.Tensor
    query: torch.Tensor
    target_first: torch.Tensor
    target_second: torch.Tensor
    target_stage: torch.Tensor
    target_mask: torch.Tensor
    step_type: torch.Tensor
    prompt_len: torch.Tensor
    root: torch.Tensor
    goal: torch.Tensor
    n_nodes: torch.Tensor
    goal_depth: torch.Tensor
    cot: bool = True

    def answers(self) -> list[np.ndarray]:
        """The true root-to-goal paths (labels), one array per tree."""
        k = self.target_mask.numpy()
        stype = self.step_type.numpy()
        second, first = self.target_second.numpy(), self.target_first.numpy()
        rows = k & ((stype == _TURN) | (stype == _FWD))
        has_turn = (k & (stype == _TURN)).any(1)
        first_fwd = (k & (stype == _FWD)).argmax(1)
        out = []
        for b in range(self.size):
            ans = second[b][rows[b]].copy()
            if not has_turn[b]:  # no turning token (a studies' variation): the root, block 1 of the first forward step, leads
                ans = np.concatenate([[first[b, first_fwd[b]]], ans])
            out.append(ans)
        return out


def _flags(cot, eos, shuffle):
    check_bool("cot", cot)
    check_bool("eos", eos)
    check_bool("shuffle", shuffle)


def rf_tokens(tree: Tree, goal: int, rng: np.random.Generator | None = None, *, cot: bool = True, eos: bool = False,
        shuffle: bool = True, edge_order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The R-F prompt and targets of one tree, as symbol triples.

    ``goal`` is a node *index* (not the root); ``rng`` shuffles the edge tokens (``shuffle=True``, else children
    increase) unless ``edge_order`` (a permutation of ``tree.edges()``) is given; ``eos`` appends the EOS target;
    ``cot``: the variation of the module docstring. Returns ``prompt (P, 3)``,
    ``targets (K, 3)`` (columns ``first, second, stage``) and ``step_type (K,)``.
    """
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    goal = check_int("goal", goal, low=0, high=tree.n - 1)
    if goal == tree.root:
        raise ValueError("goal must not be the root (the path would be empty)")
    _flags(cot, eos, shuffle)
    lab, S = tree.labels, tree.S
    edges = tree.edges()
    if edge_order is not None:
        order = np.asarray(edge_order)
        if order.shape != (len(edges),) or not np.array_equal(np.sort(order), np.arange(len(edges))):
            raise ValueError(f"edge_order must be a permutation of range({len(edges)})")
        edges = edges[order]
    elif shuffle:
        check_rng("rng", rng)
        edges = edges[rng.permutation(len(edges))]
    r, g = lab[tree.root], lab[goal]
    prompt = np.concatenate(
        [
            np.stack([lab[edges[:, 0]], lab[edges[:, 1]], np.full(len(edges), STAGE_NONE, dtype=np.int64)], axis=1),
            [[r, r, STAGE_F], [S, g, STAGE_B]],
        ]
    )
    path = lab[tree.path_to_root(goal)]  # g = v_0, ..., v_D = r
    D = len(path) - 1
    rows, types = [], []
    if cot:
        rows += [[path[j], path[j + 1], STAGE_B] for j in range(D)]
        types += [_BACK] * D
    rows.append([r, r, STAGE_F])
    types.append(_TURN)
    rows += [[path[j + 1], path[j], STAGE_F] for j in range(D - 1, -1, -1)]
    types += [_FWD] * D
    if eos:
        rows.append([g, S, STAGE_F])
        types.append(_EOS)
    return prompt.astype(np.int64), np.asarray(rows, dtype=np.int64), np.asarray(types, dtype=np.int64)


def _assemble(S, prompts, targets, types, roots, goals, sizes, depths, cot) -> ForwardBatch:
    pad = pad_sequences(S, prompts, targets)
    seq, tgt = pad["seq"], pad["targets"]
    stype = np.full(pad["target_mask"].shape, -1, dtype=np.int64)
    for b, ty in enumerate(types):
        stype[b, : len(ty)] = ty
    as_t = torch.as_tensor
    return ForwardBatch(
        S=S, first=as_t(seq[..., 0].copy()), second=as_t(seq[..., 1].copy()), stage=as_t(seq[..., 2].copy()),
        valid=as_t(pad["valid"]), query=as_t(pad["query"]), target_first=as_t(tgt[..., 0].copy()),
        target_second=as_t(tgt[..., 1].copy()), target_stage=as_t(tgt[..., 2].copy()),
        target_mask=as_t(pad["target_mask"]), step_type=as_t(stype), prompt_len=as_t(pad["prompt_len"]), root=as_t(np.asarray(roots, dtype=np.int64)),
        goal=as_t(np.asarray(goals, dtype=np.int64)), n_nodes=as_t(np.asarray(sizes, dtype=np.int64)),
        goal_depth=as_t(np.asarray(depths, dtype=np.int64)), cot=cot,
    )


def forward_batch(trees: Sequence[Tree], goals: Sequence[int], rng: np.random.Generator | None = None, *,
        cot: bool = True, eos: bool = False, shuffle: bool = True,
        edge_orders: Sequence[np.ndarray] | None = None) -> ForwardBatch:
    """Stack the R-F sequences of several trees (any shapes) into one padded :class:`ForwardBatch`.

    All trees must share ``S``. Options as in :func:`rf_tokens`;
    ``edge_orders`` gives one explicit edge permutation per tree.
    """
    trees, goals, S = check_trees(trees, goals)
    if edge_orders is not None and len(edge_orders) != len(trees):
        raise ValueError(f"edge_orders must have one entry per tree: {len(trees)} trees, {len(edge_orders)} orders")
    orders = edge_orders if edge_orders is not None else [None] * len(trees)
    parts = [
        rf_tokens(t, g, rng, cot=cot, eos=eos, shuffle=shuffle, edge_order=o)
        for t, g, o in zip(trees, goals, orders)
    ]
    return _assemble(
        S, [p for p, _, _ in parts], [t for _, t, _ in parts], [ty for _, _, ty in parts],
        [t.label_of(t.root) for t in trees], [t.label_of(g) for t, g in zip(trees, goals)],
        [t.n for t in trees], [t.depth_of(g) for t, g in zip(trees, goals)], cot,
    )


def perfect_forward_batch(m: int, S: int, batch_size: int, rng: np.random.Generator, *, cot: bool = True,
        eos: bool = False, shuffle: bool = True, return_trees: bool = False):
    """A batch from the training distribution (:func:`onelayer.trees.shared.data.perfect_tree_draws`), built
    without a Python loop over trees; no padding. With ``return_trees=True`` also returns ``(trees, goals,
    edge_orders)`` from which :func:`forward_batch` rebuilds the same batch (used by the tests).
    """
    _flags(cot, eos, shuffle)
    check_bool("return_trees", return_trees)
    draws = perfect_tree_draws(m, S, batch_size, rng, shuffle=shuffle)
    m, S, n, batch_size = draws.m, draws.S, draws.n, draws.batch_size
    labels, parent, child, order, goal = draws.labels, draws.parent, draws.child, draws.order, draws.goal
    rows = np.arange(batch_size)[:, None]
    plab = draws.path_labels  # (batch, m + 1): g = v_0, ..., v_m = r
    r = plab[:, m]
    full = lambda v: np.full((batch_size, 1), v, dtype=np.int64)  # noqa: E731
    edges = np.stack([labels[rows, parent[order]], labels[rows, child[order]],
                      np.full((batch_size, n - 1), STAGE_NONE, np.int64)], -1)
    prompt = np.concatenate(
        [edges, np.stack([r, r, full(STAGE_F)[:, 0]], -1)[:, None], np.stack([full(S)[:, 0], plab[:, 0], full(STAGE_B)[:, 0]], -1)[:, None]],
        axis=1,
    )
    blocks, types = [], []
    if cot:
        blocks.append(np.stack([plab[:, :m], plab[:, 1:], np.full((batch_size, m), STAGE_B)], -1))
        types += [_BACK] * m
    blocks.append(np.stack([r, r, full(STAGE_F)[:, 0]], -1)[:, None])
    types.append(_TURN)
    rev = plab[:, ::-1]  # r = v_m, ..., v_0 = g
    blocks.append(np.stack([rev[:, :m], rev[:, 1:], np.full((batch_size, m), STAGE_F)], -1))
    types += [_FWD] * m
    if eos:
        blocks.append(np.stack([plab[:, 0], full(S)[:, 0], full(STAGE_F)[:, 0]], -1)[:, None])
        types.append(_EOS)
    tgt = np.concatenate(blocks, axis=1)
    seq = np.concatenate([prompt, tgt[:, :-1]], axis=1)
    P, K = prompt.shape[1], tgt.shape[1]
    as_t = torch.as_tensor
    batch = ForwardBatch(
        S=S, first=as_t(seq[..., 0].copy()), second=as_t(seq[..., 1].copy()), stage=as_t(seq[..., 2].copy()),
        target_first=as_t(tgt[..., 0].copy()), target_second=as_t(tgt[..., 1].copy()),
        target_stage=as_t(tgt[..., 2].copy()),
        step_type=as_t(np.broadcast_to(np.asarray(types), (batch_size, K)).copy()),
        goal_depth=torch.full((batch_size,), m, dtype=torch.int64), cot=cot,
        **unpadded_fields(batch_size, P, K, r, plab[:, 0], n),
    )
    if not return_trees:
        return batch
    par = np.concatenate([[-1], parent])
    trees = [Tree(parent=par, labels=labels[b], S=S) for b in range(batch_size)]
    return batch, (trees, [int(g) for g in goal], [np.asarray(o).copy() for o in order])


def random_forward_batch(S: int, count: int, rng: np.random.Generator, *, max_depth: int, max_children: int = 3,
        min_depth: int = 0, leaves_only: bool = False, cot: bool = True,
        eos: bool = False) -> tuple[ForwardBatch, list[Tree]]:
    """``count`` random test trees and goals drawn by :func:`onelayer.trees.shared.data.random_trees`, laid out
    in R-F as a padded :class:`ForwardBatch`. Returns the batch and the trees.
    """
    _flags(cot, eos, True)
    trees, goals = random_trees(S, count, rng, max_depth=max_depth, max_children=max_children,
                                min_depth=min_depth, leaves_only=leaves_only)
    for tree in trees:
        # One edge permutation per tree is drawn and not used: the stream then
        # stands where the stored batches (drawn before the layouts were
        # separated) had it, so every stored result stays the same.
        rng.permutation(len(tree.edges()))
    return forward_batch(trees, goals, rng, cot=cot, eos=eos), trees


def _vectors(first, second, stage, A):
    E = with_empty(A).T
    flags = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=A.dtype)
    return torch.cat([E[first], E[second], flags[stage]], dim=-1)


def forward_token_vectors(batch: ForwardBatch, A: torch.Tensor) -> torch.Tensor:
    """Materialise the teacher-forced tokens ``[a_first; a_second; stage]``: shape ``(batch, L, 2d + 2)``.

    Padding tokens are zero vectors. ``A`` has shape ``(d, S)`` (the model's entry points check both).
    """
    return _vectors(batch.first, batch.second, batch.stage, A)


def forward_target_vectors(batch: ForwardBatch, A: torch.Tensor) -> torch.Tensor:
    """The targets as vectors, shape ``(batch, K, 2d + 2)`` (zero on padded targets)."""
    Y = _vectors(batch.target_first, batch.target_second, batch.target_stage, A)
    return Y * batch.target_mask[..., None].to(Y.dtype)


def forward_token_text(triple, S: int) -> str:
    """A token as text, e.g. ``[3;7;b]``, ``[5;5;f]``, ``[-;7;b]``, ``[5;8;.]`` (``-`` empty, ``.`` no stage)."""
    a, b, s = (int(v) for v in triple)
    show = lambda x: "-" if x == S else str(x)  # noqa: E731
    return f"[{show(a)};{show(b)};{'.bf'[s]}]"
