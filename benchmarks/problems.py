"""A small softmax-attention regression problem for the benchmarks and the sweep tests.

Not a model from either paper: a stand-in with the same ingredients (one merged
key-query matrix ``W``, zero initialisation, softmax attention of the last
token over the sequence, plain gradient descent), small enough to time in
milliseconds.

Each example ``i`` is a sequence of ``n`` tokens ``x_ij in R^d`` with scalar
values ``v_ij``; the query is the last token ``q_i = x_in``. With logits
``z_ij = q_i^T W x_ij`` and weights ``s_i = softmax(z_i)`` the prediction is
``yhat_i = sum_j s_ij v_ij``; the target ``t_i`` is the same readout under a
random teacher ``W*``. The loss is ``L(W) = (1 / 2N) sum_i (yhat_i - t_i)^2``
and its gradient, in closed form,

    dL/dW = (1/N) sum_i (yhat_i - t_i) sum_j s_ij (v_ij - yhat_i) q_i x_ij^T.

Every function accepts any number of leading batch axes, so the same code
computes one run (``X`` of shape ``(N, n, d)``, ``W`` of shape ``(d, d)``) or a
sweep (``(B, N, n, d)`` and ``(B, d, d)``).
"""

from __future__ import annotations

import torch

from onelayer.seeding import generator
from onelayer.validation import check_int

__all__ = ["make_data", "make_batch", "readout", "loss", "loss_and_grad", "zero_params"]


def make_data(seed: int, *, N: int = 32, n: int = 8, d: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Data ``(X (N, n, d), v (N, n), t (N,))`` of one problem, drawn from ``seed`` (float64)."""
    N = check_int("N", N, low=1)
    n = check_int("n", n, low=2)
    d = check_int("d", d, low=1)
    gen = generator(seed)
    X = torch.randn(N, n, d, generator=gen, dtype=torch.float64)
    v = torch.randn(N, n, generator=gen, dtype=torch.float64)
    teacher = 2.0 * torch.randn(d, d, generator=gen, dtype=torch.float64) / d**0.5
    t = readout(teacher, X, v)
    return X, v, t


def make_batch(seeds, *, N: int = 32, n: int = 8, d: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``make_data`` for every seed, stacked on a leading axis ``B = len(seeds)``."""
    parts = [make_data(s, N=N, n=n, d=d) for s in seeds]
    if not parts:
        raise ValueError("seeds must contain at least one seed")
    return tuple(torch.stack(column) for column in zip(*parts))


def zero_params(d: int, batch: int | None = None) -> dict[str, torch.Tensor]:
    """Zero initialisation ``{"W": (d, d)}``, or ``(batch, d, d)`` for a sweep."""
    shape = (d, d) if batch is None else (batch, d, d)
    return {"W": torch.zeros(shape, dtype=torch.float64)}


def _weights(W, X):
    q = X[..., -1, :]
    logits = torch.einsum("...ia,...ab,...ijb->...ij", q, W, X)
    return q, torch.softmax(logits, dim=-1)


def readout(W: torch.Tensor, X: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Predictions ``yhat`` of shape ``(..., N)``."""
    return (_weights(W, X)[1] * v).sum(-1)


def loss(params: dict[str, torch.Tensor], X, v, t) -> torch.Tensor:
    """``L(W)``: a scalar for one run, ``(B,)`` for a sweep."""
    r = readout(params["W"], X, v) - t
    return 0.5 * (r**2).mean(-1)


def loss_and_grad(params: dict[str, torch.Tensor], X, v, t) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """``(L(W), {"W": dL/dW})`` in closed form (the ``grad_fn`` of :func:`onelayer.training.train`)."""
    q, s = _weights(params["W"], X)
    yhat = (s * v).sum(-1)
    r = yhat - t
    coef = s * (v - yhat.unsqueeze(-1)) * (r / r.shape[-1]).unsqueeze(-1)
    u = torch.einsum("...ij,...ijb->...ib", coef, X)  # sum_j coef_ij x_ij, shape (..., N, d)
    grad = torch.einsum("...ia,...ib->...ab", q, u)
    return 0.5 * (r**2).mean(-1), {"W": grad}
