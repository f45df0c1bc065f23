"""The KL-divergence curves of Figures 6, 7 and 10: from raw scores to a distribution.

The model's output ``f(X) in R^K`` is a vector of raw scores, not a
probability vector. The paper turns it into a distribution ("normalise the
output") and reports the KL divergence to the true law of the label, but does
not say how (open point 6 of the spec). Our convention, an explicit option:

``method="clip"`` (default)
    ``P_hat_k = (max(f_k, 0) + tau) / sum_j (max(f_j, 0) + tau)``: negative
    scores (small ones appear under random initialisation) are clipped to 0, and
    a tiny ``tau`` (``floor``, default ``1e-6``) keeps ``P_hat`` strictly
    positive so that the divergence stays finite. Once the scores are positive
    and large compared with ``tau`` this is just ``f / 1^T f``.
``method="softmax"``
    ``P_hat = softmax(f)``, the usual reading for logits.

The divergence is ``KL(P_true || P_hat) = sum_k P_true_k log(P_true_k / P_hat_k)``
(terms with ``P_true_k = 0`` are 0). This direction is the only finite one for
the deterministic targets of the paper (a ``p = 1`` walk, the question-answering
labels), where ``P_true`` is one-hot and the divergence is ``-log P_hat_y``.

* :func:`normalize_scores`: ``f -> P_hat``.
* :func:`kl_divergence`: per-input divergence; :func:`mean_kl`: its weighted mean.
* :func:`walk_truth`: ``P(y | x_{N-1}) = Pi[s_{N-1}, .]`` for a Markov chain;
  :func:`label_truth`: a one-hot law for deterministic labels.
"""

from __future__ import annotations

import numpy as np
import torch

from ...validation import check_choice, check_float
from ...walks.data import TokenData

__all__ = ["METHODS", "normalize_scores", "kl_divergence", "mean_kl", "walk_truth", "label_truth"]

#: Names accepted by the ``method`` option.
METHODS = ("clip", "softmax")


def normalize_scores(f: torch.Tensor, *, method: str = "clip", floor: float = 1e-6) -> torch.Tensor:
    """Turn raw scores ``f`` (``(B, K)``) into distributions over the ``K`` classes (rows sum to 1).

    Parameters
    ----------
    f:
        Output scores, a 2-D tensor.
    method:
        ``"clip"`` (negative scores set to 0, then ``floor`` added) or ``"softmax"``.
    floor:
        The additive ``tau`` of ``"clip"`` (``> 0``); ignored by ``"softmax"``.
    """
    check_choice("method", method, METHODS)
    floor = check_float("floor", floor, low=0.0, low_open=True)
    if not isinstance(f, torch.Tensor) or f.ndim != 2:
        raise TypeError("f must be a 2-D tensor (B, K)")
    f = f.to(torch.float64)
    if method == "softmax":
        return torch.softmax(f, dim=1)
    g = f.clamp_min(0.0) + floor
    return g / g.sum(dim=1, keepdim=True)


def kl_divergence(P_true, f: torch.Tensor, *, method: str = "clip", floor: float = 1e-6) -> torch.Tensor:
    """``KL(P_true || P_hat(f))`` for every row, float64 ``(B,)``.

    ``P_true`` is ``(B, K)`` with rows summing to 1 (see :func:`walk_truth`,
    :func:`label_truth`).
    """
    P_hat = normalize_scores(f, method=method, floor=floor)
    P = torch.as_tensor(P_true, dtype=torch.float64)
    if P.shape != P_hat.shape:
        raise ValueError(f"P_true must have the shape of f, {tuple(P_hat.shape)}; got {tuple(P.shape)}")
    if (P < 0).any() or not torch.allclose(P.sum(dim=1), torch.ones(P.shape[0], dtype=torch.float64)):
        raise ValueError("every row of P_true must be a probability vector")
    safe = torch.where(P > 0, P, torch.ones_like(P))
    return torch.where(P > 0, P * (torch.log(safe) - torch.log(P_hat)), torch.zeros_like(P)).sum(dim=1)


def mean_kl(P_true, f: torch.Tensor, weights=None, *, method: str = "clip", floor: float = 1e-6) -> float:
    """Weighted mean of :func:`kl_divergence` (uniform weights by default)."""
    kl = kl_divergence(P_true, f, method=method, floor=floor)
    w = torch.full_like(kl, 1.0 / kl.shape[0]) if weights is None else torch.as_tensor(weights, dtype=torch.float64)
    if w.shape != kl.shape:
        raise ValueError(f"weights must have shape {tuple(kl.shape)}")
    return float((w * kl).sum())


def walk_truth(data: TokenData, Pi) -> torch.Tensor:
    """``P(y | x_1..x_{N-1}) = Pi[s_{N-1}, .]`` for every input of a first-order Markov chain ``Pi`` (``(B, K)``)."""
    if not isinstance(data, TokenData):
        raise TypeError("data must be a onelayer.walks.data.TokenData")
    Pi = np.asarray(Pi, dtype=np.float64)
    if Pi.shape != (data.K, data.K):
        raise ValueError(f"Pi must be {data.K} x {data.K}, got {Pi.shape}")
    return torch.as_tensor(Pi)[data.last]


def label_truth(data: TokenData) -> torch.Tensor:
    """The one-hot law ``e_y`` of every input whose label is a function of the input (``(B, K)``)."""
    if not isinstance(data, TokenData):
        raise TypeError("data must be a onelayer.walks.data.TokenData")
    return torch.nn.functional.one_hot(data.labels, data.K).to(torch.float64)
