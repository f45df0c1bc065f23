"""Softmax attention as a selector: the mechanism behind every construction.

For logits ``z`` and a scale ``lam > 0``, ``softmax(lam * z)`` tends, as ``lam``
grows, to the uniform distribution on the set of maximal logits. When the
maximum is unique this is a one-hot vector (attention *selects* one token);
when all logits tie, the weights are exactly uniform for every ``lam`` (the
symmetric state that zero initialisation starts from).

The quantitative form used in the book: with ``k`` maximal logits and gap
``delta = max(z) - max_{j not maximal} z_j``,

    ||softmax(lam z) - u||_1 = 2 m(lam) <= 2 (n - k) exp(-lam delta) / k,

where ``u`` is the limit and ``m(lam)`` the weight outside the maximal set.
All functions work in float64.
"""

from __future__ import annotations

import numpy as np

from .validation import check_float

__all__ = [
    "softmax",
    "maximal_set",
    "logit_gap",
    "selection_limit",
    "selection_error",
    "selection_bound",
]


def _logits(z) -> np.ndarray:
    arr = np.asarray(z, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"z must be a non-empty 1-D array of logits, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("z must contain only finite logits")
    return arr


def _scales(lam) -> np.ndarray:
    lam_arr = np.asarray(lam, dtype=np.float64)
    if lam_arr.ndim > 1:
        raise ValueError(f"lam must be a number or a 1-D array of numbers, got shape {lam_arr.shape}")
    if not np.all(np.isfinite(lam_arr)) or np.any(lam_arr < 0):
        raise ValueError("lam must be finite and >= 0")
    return lam_arr


def softmax(z, lam=1.0) -> np.ndarray:
    """``softmax(lam * z)`` computed stably; ``lam`` may be an array (one row per scale)."""
    arr = _logits(z)
    lam_arr = _scales(lam)
    scaled = np.multiply.outer(lam_arr, arr)
    scaled = scaled - scaled.max(axis=-1, keepdims=True)
    w = np.exp(scaled)
    return w / w.sum(axis=-1, keepdims=True)


def maximal_set(z, *, tol: float = 0.0) -> np.ndarray:
    """Indices whose logit is within ``tol`` of the maximum (``tol >= 0``)."""
    tol = check_float("tol", tol, low=0.0)
    arr = _logits(z)
    return np.flatnonzero(arr >= arr.max() - tol)


def logit_gap(z, *, tol: float = 0.0) -> float:
    """``max(z)`` minus the largest logit outside the maximal set (``inf`` if all tie)."""
    arr = _logits(z)
    top = maximal_set(arr, tol=tol)
    rest = np.delete(arr, top)
    return float("inf") if rest.size == 0 else float(arr.max() - rest.max())


def selection_limit(z, *, tol: float = 0.0) -> np.ndarray:
    """The ``lam -> infinity`` limit: uniform weight on the maximal set, 0 elsewhere."""
    arr = _logits(z)
    limit = np.zeros_like(arr)
    top = maximal_set(arr, tol=tol)
    limit[top] = 1.0 / top.size
    return limit


def selection_error(z, lam) -> np.ndarray | float:
    """L1 distance between ``softmax(lam z)`` and its limit (array if ``lam`` is)."""
    arr = _logits(z)
    err = np.abs(softmax(arr, lam) - selection_limit(arr)).sum(axis=-1)
    return float(err) if np.ndim(err) == 0 else err


def selection_bound(z, lam) -> np.ndarray | float:
    """The bound ``2 (n - k) exp(-lam * gap) / k`` on :func:`selection_error`."""
    arr = _logits(z)
    lam_arr = _scales(lam)
    k = maximal_set(arr).size
    gap = logit_gap(arr)
    if np.isinf(gap):
        bound = np.zeros_like(lam_arr)
    else:
        bound = 2.0 * (arr.size - k) * np.exp(-lam_arr * gap) / k
    return float(bound) if np.ndim(bound) == 0 else bound
