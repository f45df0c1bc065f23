"""Theorem 1 (reconstruction): a backward reasoner by construction.

Take linearly independent embeddings ``A`` and the Lemma 1 matrix ``B``
(``A^T B A = I_S``, :func:`onelayer.trees.shared.embeddings.lemma1_matrix`) and set
``B_lam = lam * B``. At a query whose current node is ``v`` the score of a
token is ``lam`` if its second block (the child) is ``v`` and ``0`` otherwise
(other children, or the empty block of the goal token). In any tree the node
``v`` is the child of exactly one edge, and no earlier chain-of-thought token
has ``v`` as its child, so with ``N`` visible tokens the weight on the correct
edge is exactly

    w(lam, N) = e^lam / (e^lam + N - 1)  ->  1   (lam -> infinity),

the prediction tends to the correct edge, and by induction over the steps the
greedy decoder outputs the whole goal-to-root path, for every tree shape.
The per-step squared error is ``O(((N - 1) e^{-lam})^2)``, so the loss falls
like ``e^{-2 lam}``.

Theorem 4 (reconstruction), the margin that carries the trained model to unseen trees.
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

import numpy as np
import torch

from ...validation import check_float
from ..shared.embeddings import lemma1_matrix
from ..shared.data import LossOptions, normalised
from .layout import BackwardBatch
from .model import correct_key_weight, greedy_decode, loss

__all__ = ["constructed_B", "exact_correct_weight", "visible_tokens", "lambda_grid", "log_slope", "margin", "margin_bound"]


def constructed_B(A: torch.Tensor, lam: float) -> torch.Tensor:
    """``lam * B`` with ``B`` from Lemma 1 (``lam > 0``)."""
    lam = check_float("lam", lam, low=0.0, low_open=True)
    return lam * lemma1_matrix(A)


def visible_tokens(batch: BackwardBatch) -> torch.Tensor:
    """Number of tokens each query attends to (itself included): ``(batch, K)``."""
    return batch.query + 1


def exact_correct_weight(lam, n_visible):
    """``e^lam / (e^lam + N - 1)``: the attention on the correct edge under ``B_lam`` (arrays broadcast)."""
    lam = np.asarray(lam, dtype=np.float64)
    n_visible = np.asarray(n_visible, dtype=np.float64)
    if np.any(n_visible < 1):
        raise ValueError("n_visible must be >= 1")
    return 1.0 / (1.0 + (n_visible - 1.0) * np.exp(-lam))


def lambda_grid(A: torch.Tensor, batch: BackwardBatch, lams, options: LossOptions = LossOptions()) -> dict[str, np.ndarray]:
    """Loss, greedy accuracies and attention on the correct edge of ``B_lam`` for each ``lam``.

    Returns arrays keyed ``lam``, ``loss``, ``step_accuracy``,
    ``path_accuracy``, ``min_correct_weight`` (smallest teacher-forced
    attention on the correct edge) and ``max_weight_error`` (largest
    deviation from :func:`exact_correct_weight`).
    """
    lams = np.asarray([check_float("lam", float(v), low=0.0, low_open=True) for v in np.atleast_1d(lams)])
    out = {k: [] for k in ("loss", "step_accuracy", "path_accuracy", "min_correct_weight", "max_weight_error")}
    mask = batch.target_mask
    nvis = visible_tokens(batch).numpy()
    for lam in lams:
        B = constructed_B(A, lam)
        res = greedy_decode(B, A, batch)
        w = correct_key_weight(B, A, batch)
        exact = torch.as_tensor(exact_correct_weight(lam, nvis))
        out["loss"].append(float(loss(B, A, batch, options)))
        out["step_accuracy"].append(res.step_accuracy)
        out["path_accuracy"].append(res.path_accuracy)
        out["min_correct_weight"].append(float(w[mask].min()))
        out["max_weight_error"].append(float((w - exact)[mask].abs().max()))
    return {"lam": lams, **{k: np.asarray(v) for k, v in out.items()}}


def log_slope(x, y) -> float:
    """Least-squares slope of ``log(y)`` against ``x`` (``y > 0``)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.size < 2:
        raise ValueError("x and y must have the same shape with at least 2 points")
    if np.any(y <= 0):
        raise ValueError("y must be positive to take logarithms")
    return float(np.polyfit(x, np.log(y), 1)[0])


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
