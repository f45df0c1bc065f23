"""Theorem 4 (reconstruction): the trained backward model generalises to unseen trees.

Two tools: :func:`evaluate` (teacher-forced loss, greedy per-step and
whole-path accuracy of ``B`` on any batch, e.g. random trees with 0-3
children), and a margin bound that explains why.

The margin and its bound are the backward model's closed forms
(:func:`onelayer.trees.backward.construction.margin`,
:func:`~onelayer.trees.backward.construction.margin_bound`).
"""

from __future__ import annotations

import torch

from ...trees.backward.construction import margin, margin_bound
from ...trees.backward.layout import BackwardBatch
from ...trees.shared.data import LossOptions
from ...trees.backward.model import greedy_decode, loss

__all__ = ["evaluate", "TEST_FIELDS", "test_record", "accuracy_by_length"]

#: Fields of the array returned by :func:`test_record`.
TEST_FIELDS = ("loss", "step_accuracy", "path_accuracy", "margin", "margin_bound")


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
