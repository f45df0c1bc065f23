"""Node embeddings ``A = [a_0, ..., a_{S-1}]`` and the Lemma 1 matrix ``B``.

Column ``s`` of ``A`` (shape ``(d, S)``) is the embedding ``a_s`` of symbol
``s``. The trees paper uses three kinds:

* one-hot (``A = I_S``, ``d = S``): the experiments;
* orthonormal (``A^T A = I_S``, ``d >= S``): the gradient-descent theorems;
* linearly independent (``d >= S``, full column rank): the constructions.

Lemma 1 (reconstruction): for linearly independent columns there is a ``B``
with ``a_u^T B a_v = 1{u = v}``, i.e. ``A^T B A = I_S``. We use
``B = A (A^T A)^{-2} A^T`` (equivalently ``B = (A^+)^T A^+``); the paper's
own formula was not available to us.
"""

from __future__ import annotations

import torch

from ...validation import check_int

__all__ = ["one_hot_embeddings", "orthonormal_embeddings", "independent_embeddings", "lemma1_matrix", "with_empty",
           "check_embeddings", "TIE_TOL", "nearest"]

_FLOATS = (torch.float64, torch.float32)


def _dtype(dtype) -> torch.dtype:
    if dtype not in _FLOATS:
        raise TypeError(f"dtype must be torch.float64 or torch.float32, got {dtype!r}")
    return dtype


def _gen(gen) -> torch.Generator:
    if not isinstance(gen, torch.Generator):
        raise TypeError(f"gen must be a torch.Generator (e.g. onelayer.seeding.generator(0)), got {type(gen).__name__}")
    return gen


def check_embeddings(A, *, name: str = "A") -> torch.Tensor:
    """Validate an embedding matrix: a 2-D floating tensor ``(d, S)`` with full column rank (so ``d >= S``)."""
    if not isinstance(A, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (d, S), got {type(A).__name__}")
    if A.dim() != 2 or A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D tensor of shape (d, S), got shape {tuple(A.shape)}")
    if A.dtype not in _FLOATS:
        raise TypeError(f"{name} must be float64 or float32, got {A.dtype}")
    d, S = A.shape
    if d < S:
        raise ValueError(f"{name} must have d >= S for linearly independent columns, got d={d} < S={S}")
    if not torch.isfinite(A).all():
        raise ValueError(f"{name} must contain only finite numbers")
    rank = int(torch.linalg.matrix_rank(A.to(torch.float64)))
    if rank < S:
        raise ValueError(f"{name} must have linearly independent columns (rank S={S}), got rank {rank}")
    return A


def one_hot_embeddings(S: int, dtype=torch.float64) -> torch.Tensor:
    """``A = I_S`` (``d = S``): symbol ``s`` is the basis vector ``e_s``."""
    S = check_int("S", S, low=1)
    return torch.eye(S, dtype=_dtype(dtype))


def orthonormal_embeddings(S: int, d: int, gen: torch.Generator, dtype=torch.float64) -> torch.Tensor:
    """Random orthonormal columns (``A^T A = I_S``), ``d >= S``, from a QR factorisation of a Gaussian matrix."""
    S = check_int("S", S, low=1)
    d = check_int("d", d, low=S)
    _gen(gen)
    G = torch.randn(d, S, generator=gen, dtype=torch.float64)
    Q, R = torch.linalg.qr(G)
    Q = Q * torch.sign(torch.diagonal(R))  # unique factorisation: a Haar-distributed frame
    return Q.to(_dtype(dtype))


def independent_embeddings(S: int, d: int, gen: torch.Generator, dtype=torch.float64) -> torch.Tensor:
    """Gaussian columns, entries ``N(0, 1/d)``: independent (almost surely), norms near 1, inner products of order
    ``1/sqrt(d)``; a rank-deficient draw (probability zero) raises ``ValueError``."""
    S = check_int("S", S, low=1)
    d = check_int("d", d, low=S)
    _gen(gen)
    A = torch.randn(d, S, generator=gen, dtype=torch.float64) / d**0.5
    return check_embeddings(A.to(_dtype(dtype)))


def lemma1_matrix(A: torch.Tensor) -> torch.Tensor:
    """Lemma 1 (reconstruction): ``B = A (A^T A)^{-2} A^T``, so that ``A^T B A = I_S``.

    ``B`` is symmetric, of shape ``(d, d)``, and for one-hot ``A`` it is the identity.
    """
    return _lemma1(check_embeddings(A))


def _lemma1(A: torch.Tensor) -> torch.Tensor:
    """:func:`lemma1_matrix` of an ``A`` its caller has checked."""
    G = A.T @ A
    M = torch.linalg.solve(G, torch.linalg.solve(G, A.T))  # (A^T A)^{-2} A^T
    B = A @ M
    return (B + B.T) / 2


def with_empty(A: torch.Tensor) -> torch.Tensor:
    """``A`` with a zero column appended, ``(d, S + 1)``: symbol ``S`` is the empty block (goal token, padding)."""
    return torch.cat([A, torch.zeros(A.shape[0], 1, dtype=A.dtype)], dim=1)


#: Two rounding costs closer than ``TIE_TOL`` times the largest squared norm count as tied (see :func:`nearest`).
TIE_TOL = 1e-9


def nearest(cost: torch.Tensor, scale: float) -> torch.Tensor:
    """``argmin`` over the last axis of a rounding cost, costs within ``TIE_TOL * scale`` of the best tied and the
    lowest tied index winning: an output halfway between two embeddings (uniform attention, as at zero) is then
    rounded alike on every machine, for Gaussian embeddings (round-off) as for one-hot ones (exact ties)."""
    best = cost.min(-1, keepdim=True).values
    tied = cost <= best + TIE_TOL * scale
    return tied.to(torch.int8).argmax(-1)  # argmax returns the first maximal index: the lowest tied symbol
