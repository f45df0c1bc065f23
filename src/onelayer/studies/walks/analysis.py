"""Readings of the walks model's runs: what the studies and chapters measure, above the paper.

:func:`steps_to_optimal` reads when a run's predictions stay Bayes-optimal; :func:`empirical_target` is the
square-root direction a finite training set drives ``V`` to (the population one is
:func:`onelayer.walks.theory.value_targets`); :func:`offset_means` averages ``V`` by offset on the ring;
:func:`simulate_bayes_accuracy` samples the Bayes rule's accuracy.
"""

from __future__ import annotations

import numpy as np
import torch

from ...walks import prediction, ring
from ...walks.data import TokenData
from ...walks.theory import _as_np

__all__ = ["steps_to_optimal", "empirical_target", "offset_means", "simulate_bayes_accuracy"]


def steps_to_optimal(optimal_flags) -> float:
    """First index ``t`` with ``optimal_flags[t:]`` all true (``nan`` if the last is false)."""
    flags = np.asarray(optimal_flags, dtype=bool)
    if flags.size == 0 or not flags[-1]:
        return float("nan")
    bad = np.flatnonzero(~flags)
    return float(0 if bad.size == 0 else bad[-1] + 1)


def empirical_target(data: TokenData) -> np.ndarray:
    """``sqrt(C^T)`` with ``C[s, y]`` = weighted frequency of (last token ``s``, label ``y``) in ``data``.

    With attention on the parent, the log-loss gradient of ``V_{ys}`` is
    ``C[s, y] / (V_{ys} + epsilon)``, so ``V_{ys}^2`` grows like ``2 eta C[s, y] t``:
    this is the direction a finite training set drives ``V`` to.
    """
    C = torch.zeros((data.K, data.K), dtype=torch.float64)
    C.index_put_((data.last, data.labels), data.weights, accumulate=True)
    return np.sqrt(C.numpy().T)


def offset_means(V, p: float) -> dict[str, float]:
    """Mean of ``V_{ys}`` over the clockwise (``y = s+1``), counter-clockwise (``y = s-1``) and other entries."""
    V = _as_np(V)
    K = V.shape[0]
    s = np.arange(K)
    cw = V[(s + 1) % K, s].mean()
    ccw = V[(s - 1) % K, s].mean()
    mask = np.ones((K, K), dtype=bool)
    mask[(s + 1) % K, s] = False
    mask[(s - 1) % K, s] = False
    return {"clockwise": float(cw), "counter": float(ccw), "other": float(V[mask].mean())}


def simulate_bayes_accuracy(K: int, p: float, N: int, n: int, *, seed: int = 0) -> float:
    """Accuracy of the Bayes rule ``argmin-index argmax Pi^T x_{N-1}`` on ``n`` sampled walks."""
    states = ring.sample_walks(K, p, N, n, seed=seed)
    pred = prediction.predict(ring.bayes_scores(states[:, -2], K, p))
    return prediction.accuracy(pred, states[:, -1])
