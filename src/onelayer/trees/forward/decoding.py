"""Reading the forward model's outputs: the answer in a chain, rounding to tokens, teacher-forced correctness, greedy decoding.

The model (:mod:`onelayer.trees.forward.model`) regresses onto the next token's
vector; these functions turn its outputs into tokens, score them block by block
and step type, and decode a whole chain of thought greedily
(:func:`greedy_decode`, the test of Theorem 8).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...validation import check_int
from ..shared.embeddings import nearest, with_empty
from .layout import STAGE_F, STEP_TYPES, ForwardBatch, forward_token_vectors
from .model import ForwardArchitecture, _check_all, _keymask, _logits, _values, predict

__all__ = ["answer_from_cot", "round_tokens", "teacher_forced_correct", "block_correct", "accuracy_by_type", "ForwardDecodeResult",
           "greedy_decode", "cot_correct", "goal_counts"]

def answer_from_cot(second: np.ndarray, stage: np.ndarray, goal: int, first: np.ndarray | None = None) -> np.ndarray | None:
    """The root-to-goal answer in a generated chain (``second``, ``stage``: ``(K,)`` block-2 symbols and stage codes):
    block 2 from the first forward-stage token up to the first that is the ``goal`` symbol, or ``None``. With
    ``first`` (block 1), a first forward-stage token that is no turning token (the studies' layout without one)
    leads the answer with its block 1, the root.
    """
    second = np.asarray(second)
    stage = np.asarray(stage)
    if second.ndim != 1 or stage.shape != second.shape:
        raise ValueError(f"second and stage must be 1-D arrays of equal length, got {second.shape} and {stage.shape}")
    goal = check_int("goal", goal, low=0)
    if first is not None:
        first = np.asarray(first)
        if first.shape != second.shape:
            raise ValueError(f"first must have the shape of second {second.shape}, got {first.shape}")
    return _answer_from_cot(second, stage, goal, first)


def _answer_from_cot(second, stage, goal, first):
    turned = np.flatnonzero(stage == STAGE_F)
    if turned.size == 0:
        return None
    tail = second[turned[0]:]
    hit = np.flatnonzero(tail == goal)
    if hit.size == 0:
        return None
    answer = tail[: hit[0] + 1].copy()
    if first is not None and first[turned[0]] != second[turned[0]]:
        answer = np.concatenate([[first[turned[0]]], answer])
    return answer


def round_tokens(y: torch.Tensor, A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Round vectors to the nearest token, block by block: ``(first, second, stage)`` integer tensors.

    Each node block goes to the nearest of ``a_0, ..., a_{S-1}`` and the empty
    block ``0`` (symbol ``S``); the stage block to the nearest of ``0, s_b, s_f``
    (codes 0, 1, 2); a block halfway between two tokens goes to the lower code. ``y`` has shape ``(..., 2d + 2)``.
    """
    if not isinstance(y, torch.Tensor) or not isinstance(A, torch.Tensor) or A.dim() != 2:
        raise TypeError("y and A must be tensors; A of shape (d, S)")
    d = A.shape[0]
    if y.shape[-1] != 2 * d + 2:
        raise ValueError(f"y must have last dimension 2d + 2 = {2 * d + 2}, got {y.shape[-1]}")
    return _round_tokens(y, A)


def _round_tokens(y, A):
    d = A.shape[0]
    E = with_empty(A).to(y.dtype)
    norms = (E * E).sum(0)
    flags = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=y.dtype)

    def closest(block, vecs, sq):  # ties (a block halfway between two tokens) go to the lower code
        return nearest(sq - 2 * block @ vecs, float(sq.abs().max()))

    return (
        closest(y[..., :d], E, norms),
        closest(y[..., d : 2 * d], E, norms),
        closest(y[..., 2 * d :], flags.T, (flags**2).sum(1)),
    )


def teacher_forced_correct(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Whether each rounded teacher-forced prediction equals its target token: ``(batch, K)`` (``False`` on padding)."""
    with torch.no_grad():
        f, s, st = _round_tokens(predict(params, arch, A, batch, X), A)
    ok = (f == batch.target_first) & (s == batch.target_second) & (st == batch.target_stage)
    return ok & batch.target_mask


def block_correct(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forced correctness split by block: ``(nodes, stage)``, each ``(batch, K)`` booleans.

    ``nodes``: both rounded node blocks equal the target's; ``stage``: the
    rounded stage block does. ``False`` on padding.
    """
    with torch.no_grad():
        f, s, st = _round_tokens(predict(params, arch, A, batch), A)
    nodes = (f == batch.target_first) & (s == batch.target_second) & batch.target_mask
    return nodes, (st == batch.target_stage) & batch.target_mask


def accuracy_by_type(correct: torch.Tensor, batch: ForwardBatch) -> dict[str, float]:
    """Mean of ``correct`` (``(batch, K)`` booleans) over the steps of each type in :data:`STEP_TYPES`.

    Types absent from the batch (e.g. ``"eos"`` without EOS targets) are omitted.
    """
    if not isinstance(batch, ForwardBatch):
        raise TypeError("batch must be a ForwardBatch")
    if not isinstance(correct, torch.Tensor) or correct.shape != batch.step_type.shape:
        raise ValueError(f"correct must be a tensor of shape {tuple(batch.step_type.shape)}")
    out = {}
    for code, name in enumerate(STEP_TYPES):
        sel = (batch.step_type == code) & batch.target_mask
        if sel.any():
            out[name] = float(correct[sel].double().mean())
    return out


@dataclass
class ForwardDecodeResult:
    """Greedy decoding of ``batch``: tokens ``first, second, stage`` and ``step_correct`` ``(batch, K)`` (padding
    ``S, S, 0`` and ``False``), ``weights (heads, batch, K, L)`` or ``None``, and per tree ``cot_correct`` (the whole
    chain) and ``answer_correct`` (:func:`answer_from_cot` equals the true path)."""

    first: torch.Tensor
    second: torch.Tensor
    stage: torch.Tensor
    weights: torch.Tensor | None
    step_correct: torch.Tensor
    cot_correct: torch.Tensor
    answer_correct: torch.Tensor
    batch: ForwardBatch

    @property
    def step_accuracy(self) -> float:
        """Fraction of correct steps over all real steps."""
        return float(self.step_correct[self.batch.target_mask].double().mean())

    @property
    def cot_accuracy(self) -> float:
        """Fraction of trees whose whole chain of thought is correct."""
        return float(self.cot_correct.double().mean())

    @property
    def path_accuracy(self) -> float:
        """Whole-path accuracy: fraction of trees whose root-to-goal answer is right."""
        return float(self.answer_correct.double().mean())

    def accuracy_by_type(self) -> dict[str, float]:
        """Step accuracy per step type (:data:`STEP_TYPES`)."""
        return accuracy_by_type(self.step_correct, self.batch)


@torch.no_grad()
def greedy_decode(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, *,
        keep_weights: bool = False) -> ForwardDecodeResult:
    """Run the model from each goal token on its own outputs rounded by :func:`round_tokens`, for as many steps as
    the tree has targets (``2D + 1``), all trees at once; ``keep_weights`` keeps every head's attention."""
    _check_all(params, arch, A, batch)
    X = forward_token_vectors(batch, A).clone()
    E = with_empty(A).T
    flags = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=X.dtype)
    rows = torch.arange(batch.size)
    shape = batch.query.shape
    out_f = torch.full(shape, batch.S, dtype=torch.int64)
    out_s = out_f.clone()
    out_st = torch.zeros(shape, dtype=torch.int64)
    weights = torch.zeros(arch.heads, *shape, batch.length, dtype=X.dtype) if keep_weights else None
    for k in range(batch.steps):
        q = batch.query[:, k : k + 1]
        mask = _keymask(batch, q)
        w = torch.softmax(_logits(params, arch, X, q, mask), dim=-1)
        y = _values(params, arch, w, X).sum(0)[:, 0]
        f, s, st = _round_tokens(y, A)
        out_f[:, k], out_s[:, k], out_st[:, k] = f, s, st
        if keep_weights:
            weights[:, :, k] = w[:, :, 0] * batch.target_mask[None, :, k, None]
        if k + 1 < batch.steps:
            more = batch.target_mask[:, k + 1]
            X[rows[more], q[more, 0] + 1] = torch.cat([E[f], E[s], flags[st]], dim=-1)[more]
    m = batch.target_mask
    out_f = out_f.masked_fill(~m, batch.S)
    out_s = out_s.masked_fill(~m, batch.S)
    out_st = out_st.masked_fill(~m, 0)
    step_ok, chain_ok = _cot_correct(out_f, out_s, out_st, batch)
    truth = batch.answers()
    ans_ok = []
    turns = ((batch.step_type == STEP_TYPES.index("turning")) & m).any(1).numpy()  # False: the turning=False layout
    f_np, s_np, st_np, m_np, goals = out_f.numpy(), out_s.numpy(), out_st.numpy(), m.numpy(), batch.goal.numpy()
    for b in range(batch.size):
        first = None if turns[b] else f_np[b][m_np[b]]
        got = _answer_from_cot(s_np[b][m_np[b]], st_np[b][m_np[b]], int(goals[b]), first)
        ans_ok.append(got is not None and np.array_equal(got, truth[b]))
    return ForwardDecodeResult(out_f, out_s, out_st, weights, step_ok, chain_ok, torch.tensor(ans_ok), batch)


def cot_correct(first: torch.Tensor, second: torch.Tensor, stage: torch.Tensor, batch: ForwardBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Judge generated chains token by token, stage flags included: ``(step_ok (batch, K), chain_ok (batch,))``.

    A step is right when its two node blocks *and* its stage code equal the target's; a goal's chain is right
    only when every one of its real steps is (padding is ignored). Path accuracy
    (:func:`answer_from_cot`) reads only block 2 after the first ``s_f`` flag, so a model that emits the
    wrong flag on every backward step can still get every path right; chain accuracy cannot.
    """
    if not isinstance(batch, ForwardBatch):
        raise TypeError(f"batch must be a ForwardBatch, got {type(batch).__name__}")
    for name, t in (("first", first), ("second", second), ("stage", stage)):
        if not isinstance(t, torch.Tensor) or t.shape != batch.target_mask.shape:
            raise ValueError(f"{name} must be a tensor of shape {tuple(batch.target_mask.shape)}")
    return _cot_correct(first, second, stage, batch)


def _cot_correct(first, second, stage, batch):
    m = batch.target_mask
    step_ok = (first == batch.target_first) & (second == batch.target_second) & (stage == batch.target_stage) & m
    return step_ok, (step_ok | ~m).all(1)


def goal_counts(result: ForwardDecodeResult) -> dict[str, int]:
    """Counts of a greedy decoding: ``goals`` (trees), ``chain`` (whole chain right, :func:`cot_correct`) and
    ``path`` (root-to-goal answer right)."""
    if not isinstance(result, ForwardDecodeResult):
        raise TypeError(f"result must be a ForwardDecodeResult, got {type(result).__name__}")
    return {"goals": int(result.batch.size), "chain": int(result.cot_correct.sum()), "path": int(result.answer_correct.sum())}
