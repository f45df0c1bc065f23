"""The random walk on a ring of ``K`` nodes (numbered ``0..K-1``; the paper says ``1..K``): from a uniform start,
one node clockwise with probability ``p``, counter-clockwise with ``1 - p``.

:func:`shift_matrix` is the cyclic shift ``Pi_0`` (``[Pi_0]_{i+1,i} = 1``), :func:`transition_matrix`
``Pi = p Pi_0^T + (1 - p) Pi_0``, :func:`eigenvalues` its spectrum ``p w^k + (1 - p) w^{-k}``. :func:`sample_walks`
draws walks, :func:`enumerate_walks` lists every walk with its probability (the exact population; for
``p in {0, 1}`` the ``K`` possible walks). :func:`bayes_accuracy` is ``max(p, 1 - p)``, :func:`bayes_scores` the Bayes
output ``Pi^T x_{N-1}``. :func:`mixing_limit` / :func:`mixing_distance`: the limit of ``Pi^R`` and the distance to it
(Lemmas E.2/E.3).
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ..seeding import generator
from ..validation import check_int, check_probability

__all__ = [
    "shift_matrix",
    "transition_matrix",
    "matrix_power",
    "is_circulant",
    "eigenvalues",
    "sample_walks",
    "enumerate_walks",
    "bayes_accuracy",
    "bayes_scores",
    "mixing_limit",
    "mixing_distance",
    "MAX_ENUMERATED",
]

#: Largest number of walks :func:`enumerate_walks` will list.
MAX_ENUMERATED = 2**20


def _check_K(K) -> int:
    return check_int("K", K, low=3, high=10_000)


def shift_matrix(K: int) -> np.ndarray:
    """The cyclic shift ``Pi_0`` (``K x K``, float64) with ``[Pi_0]_{i+1, i} = 1`` (indices mod ``K``)."""
    K = _check_K(K)
    return np.roll(np.eye(K), 1, axis=0)


def transition_matrix(K: int, p: float) -> np.ndarray:
    """The transition matrix ``Pi = p Pi_0^T + (1 - p) Pi_0`` of the ring walk (``K >= 3`` nodes, clockwise
    probability ``p``): ``K x K`` row-stochastic, ``p`` at ``(i, i+1)`` and ``1 - p`` at ``(i, i-1)``."""
    p = check_probability("p", p)
    Pi0 = shift_matrix(K)
    return p * Pi0.T + (1.0 - p) * Pi0


def matrix_power(A: np.ndarray, R: int) -> np.ndarray:
    """``A`` to the integer power ``R >= 0`` (float64)."""
    R = check_int("R", R, low=0)
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    return np.linalg.matrix_power(A, R)


def is_circulant(A, *, tol: float = 0.0) -> bool:
    """Whether ``A[i, j]`` depends only on ``(i - j) mod K`` (up to ``tol``)."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}")
    first = A[:, 0]
    expected = np.stack([np.roll(first, j) for j in range(A.shape[0])], axis=1)
    return bool(np.max(np.abs(A - expected)) <= tol)


def eigenvalues(K: int, p: float) -> np.ndarray:
    """Closed-form eigenvalues ``lambda_k = p w^k + (1 - p) w^{-k}``, ``k = 0..K-1`` (complex).

    ``|lambda_k|^2 = 1 - 4 p (1 - p) sin^2(2 pi k / K)``: for odd ``K`` only
    ``k = 0`` has modulus 1 when ``0 < p < 1``; for even ``K`` also ``k = K/2``
    (``lambda = -1``), the periodicity of the walk.
    """
    K = _check_K(K)
    p = check_probability("p", p)
    w = np.exp(2j * np.pi * np.arange(K) / K)
    return p * w + (1.0 - p) / w


def sample_walks(K: int, p: float, N: int, n: int, *, seed: int = 0) -> torch.Tensor:
    """``n`` independent walks ``s_1..s_N`` (``N >= 2``) from a uniform start, int64 ``(n, N)``, drawn from a
    generator seeded by ``seed`` (the global torch state is not used)."""
    K = _check_K(K)
    p = check_probability("p", p)
    N = check_int("N", N, low=2, high=1_000_000)
    n = check_int("n", n, low=1, high=10_000_000)
    gen = generator(seed)
    start = torch.randint(0, K, (n, 1), generator=gen)
    clockwise = torch.rand((n, N - 1), generator=gen, dtype=torch.float64) < p
    steps = torch.where(clockwise, 1, -1)
    offsets = torch.cat([torch.zeros((n, 1), dtype=torch.int64), torch.cumsum(steps, dim=1)], dim=1)
    return torch.remainder(start + offsets, K)


def enumerate_walks(K: int, p: float, N: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every walk of length ``N`` with positive probability, and its probability.

    For ``0 < p < 1`` there are ``K * 2^(N-1)`` walks (at most :data:`MAX_ENUMERATED`);
    for ``p in {0, 1}`` there are exactly ``K``, one per start node. The
    probabilities are exact products ``(1/K) p^c (1-p)^(N-1-c)`` (float64) and sum
    to 1, so weighted averages over this list are population expectations.

    Returns
    -------
    (states, probs):
        int64 tensor ``(n, N)`` and float64 tensor ``(n,)``.
    """
    K = _check_K(K)
    p = check_probability("p", p)
    N = check_int("N", N, low=2, high=1_000_000)
    if p in (0.0, 1.0):
        step = 1 if p == 1.0 else -1
        states = torch.remainder(torch.arange(K)[:, None] + step * torch.arange(N)[None, :], K)
        return states, torch.full((K,), 1.0 / K, dtype=torch.float64)
    count = K * 2 ** (N - 1)
    if count > MAX_ENUMERATED:
        raise ValueError(
            f"N must satisfy K * 2^(N-1) <= {MAX_ENUMERATED} to enumerate every walk; got K={K}, N={N} "
            f"({count} walks). Use sample_walks for longer walks."
        )
    moves = torch.tensor(list(itertools.product((1, -1), repeat=N - 1)), dtype=torch.int64).reshape(-1, N - 1)
    offsets = torch.cat([torch.zeros((moves.shape[0], 1), dtype=torch.int64), torch.cumsum(moves, dim=1)], dim=1)
    starts = torch.arange(K)
    states = torch.remainder(starts[:, None, None] + offsets[None], K).reshape(-1, N)
    clockwise = (moves == 1).sum(dim=1).to(torch.float64)
    probs_one = p**clockwise * (1.0 - p) ** (N - 1 - clockwise) / K
    return states, probs_one.repeat(K)


def bayes_accuracy(p: float) -> float:
    """Bayes-optimal accuracy ``max(p, 1 - p)`` of predicting ``s_N`` from ``s_1..s_{N-1}``."""
    p = check_probability("p", p)
    return max(p, 1.0 - p)


def bayes_scores(last_states, K: int, p: float) -> torch.Tensor:
    """The Bayes output ``f_OPT = Pi^T x_{N-1}`` for each last observed state (float64 ``(n, K)``).

    Row ``b`` is the conditional law of ``s_N`` given ``s_{N-1} = last_states[b]``.
    Combine with :func:`onelayer.walks.prediction.predict` for the Bayes rule.
    """
    K = _check_K(K)
    last = torch.as_tensor(last_states)
    if last.dtype not in (torch.int64, torch.int32) or last.ndim != 1:
        raise TypeError("last_states must be a 1-D integer tensor of node indices")
    if last.numel() and (int(last.min()) < 0 or int(last.max()) >= K):
        raise ValueError(f"last_states must lie in [0, {K - 1}]")
    Pi = torch.as_tensor(transition_matrix(K, p))
    return Pi[last.long()]


def mixing_limit(K: int, R: int) -> np.ndarray:
    """The limit that ``Pi^R`` approaches for ``0 < p < 1``.

    Odd ``K``: every entry ``1/K``. Even ``K``: the walk alternates between the
    two parity classes, so ``[Pi^R]_{ij} = 0`` when ``j - i - R`` is odd and the
    other entries approach ``2/K``.
    """
    K = _check_K(K)
    R = check_int("R", R, low=0)
    if K % 2:
        return np.full((K, K), 1.0 / K)
    i, j = np.indices((K, K))
    return np.where((j - i - R) % 2 == 0, 2.0 / K, 0.0)


def mixing_distance(K: int, p: float, R_max: int) -> np.ndarray:
    """``max_ij |[Pi^R]_ij - limit_ij|`` for ``R = 0..R_max`` (see :func:`mixing_limit`)."""
    R_max = check_int("R_max", R_max, low=0)
    Pi = transition_matrix(K, p)
    out = np.empty(R_max + 1)
    power = np.eye(Pi.shape[0])
    for R in range(R_max + 1):
        out[R] = np.abs(power - mixing_limit(K, R)).max()
        power = power @ Pi
    return out
