"""Theorem 4 (reconstruction): the trained backward model generalises to unseen trees.

Two tools: :func:`evaluate` (teacher-forced loss, greedy per-step and
whole-path accuracy of ``B`` on any batch, e.g. random trees with 0-3
children), and a margin bound that explains why.

Margin. Let ``H = A^T B A`` and, for each node ``v``,
``delta_v = H[v, v] - max(max_{c != v} H[c, v], 0)``: the gap between the
score of the correct edge and the best competing key (another child, or the
goal token whose empty block scores 0). With ``delta = min_v delta_v`` and
``N`` visible tokens, the weight on the correct edge is at least
``1 / (1 + (N - 1) e^{-delta})``, whatever the tree. For orthonormal
embeddings every token difference has ``||x_i - y||^2 <= 4``, so the
per-position loss ``(1/2)||y_hat - y||^2`` is at most

    2 * ((N - 1) e^{-delta} / (1 + (N - 1) e^{-delta}))^2.

:func:`margin_bound` averages this over a batch; it depends on the tree only
through ``N``, which is why a margin learned on perfect binary trees carries
over to any shape. (For ``H = h1 I + h2 (11^T - I)`` with ``h2 <= 0``,
``delta = h1``; the paper's Theorem 4 statement was not visible to us, this
bound is ours.)
"""

from __future__ import annotations

import torch

from ..shared.losses import LossOptions, normalised
from .layout import BackwardBatch
from .model import greedy_decode, loss

__all__ = ["margin", "margin_bound", "evaluate", "TEST_FIELDS", "test_record", "accuracy_by_length"]

#: Fields of the array returned by :func:`test_record`.
TEST_FIELDS = ("loss", "step_accuracy", "path_accuracy", "margin", "margin_bound")


def margin(H: torch.Tensor) -> float:
    """``delta = min_v (H[v, v] - max(max_{c != v} H[c, v], 0))`` (columns are queries)."""
    H = torch.as_tensor(H, dtype=torch.float64)
    if H.dim() != 2 or H.shape[0] != H.shape[1] or H.shape[0] < 2:
        raise ValueError(f"H must be a square matrix of size >= 2, got shape {tuple(H.shape)}")
    S = H.shape[0]
    off = H.masked_fill(torch.eye(S, dtype=torch.bool), float("-inf")).max(0).values.clamp(min=0.0)
    return float((torch.diagonal(H) - off).min())


def margin_bound(H: torch.Tensor, batch: BackwardBatch, options: LossOptions = LossOptions()) -> float:
    """Upper bound on the teacher-forced loss of ``batch`` from the margin of ``H`` (orthonormal embeddings).

    Uses the same normalisation as :func:`onelayer.trees.backward.model.loss`.
    """
    if not isinstance(batch, BackwardBatch):
        raise TypeError("batch must be a BackwardBatch")
    delta = margin(H)
    off = (batch.query + 1 - 1).double() * torch.exp(torch.tensor(-delta, dtype=torch.float64))
    per = 4.0 * (off / (1.0 + off)) ** 2 * batch.target_mask
    return float(normalised(per.sum(), positions=batch.target_mask.sum(), trees=batch.size, options=options))


def evaluate(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch, options: LossOptions = LossOptions()) -> dict[str, float]:
    """``loss`` (teacher forced), ``step_accuracy`` and ``path_accuracy`` (greedy decoding) of ``B`` on ``batch``."""
    res = greedy_decode(B, A, batch)
    return {
        "loss": float(loss(B, A, batch, options)),
        "step_accuracy": res.step_accuracy,
        "path_accuracy": res.path_accuracy,
    }


def test_record(A: torch.Tensor, batch: BackwardBatch, options: LossOptions = LossOptions()):
    """A record function for :func:`onelayer.training.train`: ``params -> array`` of :data:`TEST_FIELDS` on ``batch``.

    ``margin`` and ``margin_bound`` use ``H = A^T B A``; the bound is valid for orthonormal embeddings only.
    """
    import numpy as np

    if not isinstance(batch, BackwardBatch):
        raise TypeError("batch must be a BackwardBatch")

    def fn(params):
        B = params["B"]
        H = A.T @ B @ A
        ev = evaluate(B, A, batch, options)
        return np.array([ev["loss"], ev["step_accuracy"], ev["path_accuracy"], margin(H), margin_bound(H, batch, options)])

    return fn


def accuracy_by_length(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch) -> dict[int, tuple[int, float]]:
    """Whole-path accuracy grouped by path length: ``length -> (number of trees, accuracy)``."""
    res = greedy_decode(B, A, batch)
    lengths = batch.target_mask.sum(1)
    out = {}
    for k in sorted(set(lengths.tolist())):
        sel = lengths == k
        out[int(k)] = (int(sel.sum()), float(res.path_correct[sel].double().mean()))
    return out
