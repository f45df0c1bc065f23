"""The literal full-``W`` model with autograd: the reference for tests and benchmarks.

This is eq. 2.1 written as plainly as possible: build ``X~ = [X; P]`` for every
sequence (``B x (K+M) x N`` numbers), compute ``X~^T W x~_N`` with the full
``(K+M) x (K+M)`` matrix ``W``, and let autograd differentiate the loss with
respect to ``V`` and all of ``W``. Every option of
:class:`onelayer.walks.options.ModelConfig` is implemented literally here:
normalisation divides the materialised columns by their norms, the residual
adds the query column's token part, the logit scale multiplies the logits.

It is slow and memory-hungry on purpose (about 0.8 GB of ``X~`` in float64 at the
paper's size); :class:`onelayer.walks.model.WalkTransformer` is the fast,
exact equivalent, and ``tests/test_walks_model.py`` checks that both produce the
same GD trajectory.
"""

from __future__ import annotations

import math

import torch

from ..training import History, train
from . import losses
from .data import TokenData
from .model import WalkTransformer

__all__ = ["materialize", "reference_forward", "reference_loss", "reference_train"]


def materialize(model: WalkTransformer, data: TokenData) -> torch.Tensor:
    """``X~ = [X; P]`` for every sequence: ``(B, K + M, N)`` in the model's dtype."""
    model._check_data(data)
    X = data.one_hot(model.dtype)
    P = model.P.expand(data.B, -1, -1)
    return torch.cat([X, P], dim=1)


def _unit(columns: torch.Tensor, dim: int) -> torch.Tensor:
    norms = columns.norm(dim=dim, keepdim=True)
    return columns / torch.where(norms > 0, norms, torch.ones_like(norms))


def reference_forward(model: WalkTransformer, full: dict[str, torch.Tensor], data: TokenData, Xt: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Logits ``z``, attention ``S`` and output ``f`` of the literal model (``full`` holds ``V``, ``W``, maybe ``A``)."""
    c = model.config
    Xt = materialize(model, data) if Xt is None else Xt
    keys = _unit(Xt, 1) if c.normalize != "none" else Xt
    query = Xt[:, :, -1]
    if c.normalize == "keys_and_query":
        query = _unit(query, 1)
    scale = 1.0 if c.logit_scale == "one" else 1.0 / math.sqrt(model.D)
    Wq = query @ full["W"].T  # W x~_N for each sequence
    z = scale * torch.einsum("bdn,bd->bn", keys, Wq)
    S = torch.softmax(z, dim=1)
    u = torch.einsum("bkn,bn->bk", Xt[:, : c.K, :], S)
    h = u @ full["V"].T
    f = h if c.hidden is None else torch.relu(h) @ full["A"].T
    if c.residual:
        f = f + Xt[:, : c.K, -1]
    return {"z": z, "S": S, "f": f}


def reference_loss(model: WalkTransformer, full: dict[str, torch.Tensor], data: TokenData, Xt: torch.Tensor | None = None) -> torch.Tensor:
    """The training loss of the literal model (differentiable in ``full``)."""
    c = model.config
    f = reference_forward(model, full, data, Xt)["f"]
    values = losses.loss_values(f, data.labels, c.loss, c.epsilon)
    factor = data.B if c.reduction == "sum" else 1
    return factor * (data.weights.to(model.dtype) * values).sum()


def reference_train(model: WalkTransformer, full: dict[str, torch.Tensor], data: TokenData, *, steps: int, lr=1.0, record=None, snapshot_at=(), Xt: torch.Tensor | None = None, progress: bool = False) -> History:
    """Full-batch GD on ``V`` and the full ``W`` with autograd (:func:`onelayer.training.train`)."""
    Xt = materialize(model, data) if Xt is None else Xt
    return train(
        {n: t.to(model.dtype) for n, t in full.items()},
        lambda prm: reference_loss(model, prm, data, Xt),
        steps=steps,
        lr=lr,
        record=record,
        snapshot_at=snapshot_at,
        progress=progress,
        desc="reference",
    )
