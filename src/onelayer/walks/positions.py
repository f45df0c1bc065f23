"""Positional vectors ``P = [p_1, ..., p_N] in R^{M x N}``, mutually orthogonal as the paper needs (Lemma E.5; its
displayed formula did not survive, so the choice is an option), with ``||p_i||^2 = M / 2`` (attention-logit
updates scale with ``||p_j||^2 ||p_N||^2``):

``"sin"`` (default, our reconstruction)
    ``[p_i]_k = sin(pi i k / M)``, ``k = 1..M`` (needs ``N < M``); orthogonal up to round-off (off-diagonal Gram
    entries up to about ``1.5e-12`` at ``N = 97, M = 1000``).
``"exact"``
    ``p_i = sqrt(M / 2) e_i`` (needs ``N <= M``): exactly orthogonal in floating point.
``"none"``
    ``P = 0`` (a variation: the query is then zero).

``gram_error = g > 0`` (off by default) adds ``(g / sqrt(M)) Z`` to ``P``, ``Z`` standard Gaussian from a generator
seeded by ``gram_seed``: the off-diagonal Gram entries move by about ``g``, the squared norms by about ``sqrt(2) g``;
a symmetry breaker of a stated size, the same on every machine (:mod:`onelayer.studies.walks.theorem41`).
``perturb`` (``(tensor, name) -> tensor``, identity when ``None``) is applied to the sinusoids
(``"walks.positions.sin"``) and the Gaussian matrix (``"walks.positions.gram_error"``).
"""

from __future__ import annotations

import math

import torch

from ..seeding import generator
from ..validation import check_choice, check_float, check_int

__all__ = ["POSITIONS", "M_for", "positional_matrix", "gram"]

#: Names accepted by the ``positions`` option.
POSITIONS = ("sin", "exact", "none")


def M_for(N: int) -> int:
    """The positional dimension the theorems' growth of M gives a sequence of length ``N``: ``max(ceil(N^{3/2}), N + 1)``."""
    N = check_int("N", N, low=2)
    return max(math.ceil(N**1.5), N + 1)


def _identity(x: torch.Tensor, name: str) -> torch.Tensor:
    return x


def positional_matrix(N: int, M: int, kind: str = "sin", *, dtype: torch.dtype = torch.float64,
                      gram_error: float = 0.0, gram_seed: int = 0, perturb=None) -> torch.Tensor:
    """The ``M x N`` positional matrix ``P`` of the given ``kind``.

    Parameters
    ----------
    N:
        Number of positions (``>= 2``; position ``N`` is the query slot).
    M:
        Dimension of each positional vector (``>= 1``; ``> N`` for ``"sin"``, ``>= N`` for ``"exact"``).
    kind:
        ``"sin"`` | ``"exact"`` | ``"none"`` (see the module docstring).
    dtype:
        Floating type of the result (the sines are computed in float64 first).
    gram_error:
        ``>= 0``; if positive, a seeded Gaussian matrix scaled by ``gram_error / sqrt(M)`` is added
        (in float64, before the conversion to ``dtype``), so that the off-diagonal Gram entries move
        by about ``gram_error`` (see the module docstring). ``0`` (default) adds nothing.
    gram_seed:
        Seed of that Gaussian matrix.
    perturb:
        ``(tensor, name) -> tensor`` applied to the sinusoids and to the Gram error's Gaussian matrix (see the
        module docstring); ``None``: unchanged.
    """
    N = check_int("N", N, low=2)
    M = check_int("M", M, low=1)
    check_choice("positions", kind, POSITIONS)
    gram_error = check_float("gram_error", gram_error, low=0.0)
    gram_seed = check_int("gram_seed", gram_seed, low=0)
    return _positional_matrix(N, M, kind, dtype, gram_error, gram_seed, perturb)


def _positional_matrix(N: int, M: int, kind: str, dtype: torch.dtype, gram_error: float, gram_seed: int,
                       perturb) -> torch.Tensor:
    """:func:`positional_matrix` with arguments its caller checked (a :class:`~onelayer.walks.model.ModelConfig`)."""
    perturb = _identity if perturb is None else perturb
    if kind == "sin":
        if M <= N:
            raise ValueError(f"M must exceed N for sinusoidal positions (orthogonality needs N < M); got M={M}, N={N}")
        i = torch.arange(1, N + 1, dtype=torch.float64)
        k = torch.arange(1, M + 1, dtype=torch.float64)
        P = perturb(torch.sin(math.pi * k[:, None] * i[None, :] / M), "walks.positions.sin")
    elif kind == "exact":
        if M < N:
            raise ValueError(f"M must be at least N for exactly orthogonal positions; got M={M}, N={N}")
        P = torch.zeros((M, N), dtype=torch.float64)
        P[torch.arange(N), torch.arange(N)] = math.sqrt(M / 2.0)
    else:
        P = torch.zeros((M, N), dtype=torch.float64)
    if gram_error > 0:
        Z = perturb(torch.randn((M, N), generator=generator(gram_seed), dtype=torch.float64),
                    "walks.positions.gram_error")
        P = P + (gram_error / math.sqrt(M)) * Z
    return P.to(dtype)


def gram(P: torch.Tensor) -> torch.Tensor:
    """``P^T P``: should be ``(M/2) I`` for ``"sin"`` and ``"exact"``."""
    return P.T @ P
