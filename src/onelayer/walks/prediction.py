"""The prediction rule (Definition 2.1) and accuracies.

The paper predicts the *smallest* index among the maximal output scores,
``y_hat = min{i : f_i = max_j f_j}``. Exact ties are common here (the
zero-initialised model, the ``p = 1`` symmetric state, the ``p = 1/2``
optimum), so the rule is implemented explicitly instead of relying on a
library's ``argmax`` convention. Scores within ``TIE_TOL`` (relative to the
row's largest score, at least 1) of the maximum count as maximal: a tie that
holds in exact arithmetic then gives the smallest index on every machine,
whatever the last bits of the two scores (the two sentences of the QA Task 2,
for example, sum the same numbers in different orders).

* :func:`predict` applies the rule row by row.
* :func:`accuracy` is the (weighted) fraction of correct predictions.
* :func:`conditional_accuracy` averages ``P(y = y_hat | X) = Pi[s_{N-1}, y_hat]``
  over inputs: it equals ``max(p, 1-p)`` *exactly* when every prediction is a
  Bayes-optimal choice, and it does not carry the sampling noise of the labels.
"""

from __future__ import annotations

import torch

__all__ = ["TIE_TOL", "maximal", "predict", "accuracy", "conditional_accuracy"]

#: Scores this close to the row's maximum (relative to ``max(1, max |f_j|)``) count as tied with it.
TIE_TOL = 1e-9


def maximal(scores: torch.Tensor) -> torch.Tensor:
    """Which entries of each row of ``scores`` (``(n, K)``) are maximal: within :data:`TIE_TOL` (relative to
    ``max(1, max |f_j|)``) of the row's maximum. The one tie rule of the walks part (boolean ``(n, K)``)."""
    if not isinstance(scores, torch.Tensor) or scores.ndim != 2 or scores.shape[1] == 0:
        raise TypeError("scores must be a 2-D tensor (n, K) with K >= 1")
    if torch.isnan(scores).any():
        raise ValueError("scores contain NaN; the prediction rule is undefined")
    top = scores.max(dim=1, keepdim=True).values
    scale = scores.abs().max(dim=1, keepdim=True).values.clamp_min(1.0)
    return scores >= top - TIE_TOL * scale


def predict(scores: torch.Tensor) -> torch.Tensor:
    """Smallest index of a maximal entry (:func:`maximal`) in each row of ``scores`` (``(n, K)`` -> int64 ``(n,)``)."""
    tied = maximal(scores)
    index = torch.arange(scores.shape[1]).expand_as(scores)
    sentinel = torch.full_like(index, scores.shape[1])
    return torch.where(tied, index, sentinel).min(dim=1).values


def _weights(n: int, weights) -> torch.Tensor:
    if weights is None:
        return torch.full((n,), 1.0 / n, dtype=torch.float64)
    w = torch.as_tensor(weights, dtype=torch.float64)
    if w.shape != (n,) or (w < 0).any() or not torch.isclose(w.sum(), torch.tensor(1.0, dtype=torch.float64)):
        raise ValueError(f"weights must be {n} non-negative numbers summing to 1")
    return w


def accuracy(pred: torch.Tensor, labels: torch.Tensor, weights=None) -> float:
    """Weighted fraction of ``pred == labels`` (uniform weights by default)."""
    if pred.shape != labels.shape or pred.ndim != 1:
        raise ValueError(f"pred and labels must be 1-D of equal length, got {tuple(pred.shape)} and {tuple(labels.shape)}")
    w = _weights(pred.shape[0], weights)
    return float((w * (pred == labels).to(torch.float64)).sum())


def conditional_accuracy(pred: torch.Tensor, last_states: torch.Tensor, Pi, weights=None) -> float:
    """Average of ``Pi[s_{N-1}, y_hat]``: the accuracy the predictions would have in expectation over labels."""
    Pi = torch.as_tensor(Pi, dtype=torch.float64)
    if pred.shape != last_states.shape or pred.ndim != 1:
        raise ValueError("pred and last_states must be 1-D of equal length")
    w = _weights(pred.shape[0], weights)
    return float((w * Pi[last_states.long(), pred.long()]).sum())
