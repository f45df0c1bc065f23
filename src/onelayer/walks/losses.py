"""Per-sequence losses ``l(f, y)`` of the output scores ``f in R^K`` and their gradients.

``"log"`` (the paper's loss, eq. 2.2)
    ``-log(f_y + epsilon)``: the raw score of the true class, no final softmax.
    Undefined once ``f_y <= -epsilon`` (it returns NaN then; the paper's
    dynamics keep scores positive from zero initialisation).
``"squared"``
    ``(1/2) ||f - e_y||^2``.
``"cross_entropy"``
    ``-log softmax(f)_y``.

Theorem 4.1 allows *any* loss; the last two are the extra losses we check it
with. Each loss comes with the closed-form gradient ``dl/df`` used by the fast
trainer (:mod:`onelayer.walks.model`); the reference implementation
(:mod:`onelayer.walks.reference`) differentiates :func:`loss_values` with
autograd instead.
"""

from __future__ import annotations

import torch

from ..validation import check_choice

__all__ = ["LOSSES", "loss_values", "loss_gradient"]

#: Names accepted by the ``loss`` option.
LOSSES = ("log", "squared", "cross_entropy")


def loss_values(f: torch.Tensor, labels: torch.Tensor, kind: str = "log", epsilon: float = 0.1) -> torch.Tensor:
    """``l(f_b, y_b)`` for every row ``b`` of ``f`` (``(B, K)`` -> ``(B,)``)."""
    check_choice("loss", kind, LOSSES)
    if kind == "log":
        score = f.gather(1, labels[:, None])[:, 0]
        return -torch.log(score + epsilon)
    if kind == "squared":
        target = torch.nn.functional.one_hot(labels, f.shape[1]).to(f.dtype)
        return 0.5 * ((f - target) ** 2).sum(dim=1)
    return torch.logsumexp(f, dim=1) - f.gather(1, labels[:, None])[:, 0]


def loss_gradient(f: torch.Tensor, labels: torch.Tensor, kind: str = "log", epsilon: float = 0.1) -> torch.Tensor:
    """``dl(f_b, y_b)/df_b`` for every row (``(B, K)``)."""
    check_choice("loss", kind, LOSSES)
    target = torch.nn.functional.one_hot(labels, f.shape[1]).to(f.dtype)
    if kind == "log":
        score = f.gather(1, labels[:, None])
        return -target / (score + epsilon)
    if kind == "squared":
        return f - target
    return torch.softmax(f, dim=1) - target
