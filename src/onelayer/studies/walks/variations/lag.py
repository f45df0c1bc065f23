"""A parent at lag 2 (:func:`lag_walks`, :func:`lag_population`, :func:`lag_c1_value`, :func:`lag_check`; drawn by :func:`onelayer.figures.walks_variations.figure_lag`)."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ....seeding import generator
from ....validation import check_float, check_int, check_probability
from ....walks import ring
from ....walks.data import TokenData
from ..first_steps import column_max_offsets

from ..random_init.runs import optimal_fraction
from ..inputs import walk_model


def lag_walks(K: int, p: float, N: int, n: int, *, lag: int = 2, seed: int = 0) -> torch.Tensor:
    """``n`` sequences with ``s_1..s_lag`` uniform and independent and ``s_i = s_{i-lag} + 1`` (prob. ``p``) or ``- 1``.

    For ``lag = 1`` this is the ring walk; for ``lag = 2`` the odd and the even
    positions are two independent ring walks. int64 ``(n, N)``.
    """
    K = check_int("K", K, low=3)
    p = check_probability("p", p)
    lag = check_int("lag", lag, low=1)
    N = check_int("N", N, low=lag + 1)
    n = check_int("n", n, low=1)
    gen = generator(seed)
    s = torch.empty((n, N), dtype=torch.int64)
    s[:, :lag] = torch.randint(0, K, (n, lag), generator=gen)
    steps = torch.where(torch.rand((n, N - lag), generator=gen, dtype=torch.float64) < p, 1, -1)
    for i in range(lag, N):
        s[:, i] = torch.remainder(s[:, i - lag] + steps[:, i - lag], K)
    return s


def lag_population(K: int, p: float, N: int, *, lag: int = 2) -> TokenData:
    """Every sequence of :func:`lag_walks` with its probability (``K^lag 2^(N-lag)`` of them, at most ``2^20``)."""
    K = check_int("K", K, low=3)
    p = check_probability("p", p, open_low=True, open_high=True)
    lag = check_int("lag", lag, low=1)
    N = check_int("N", N, low=lag + 1)
    count = K**lag * 2 ** (N - lag)
    if count > ring.MAX_ENUMERATED:
        raise ValueError(f"N must satisfy K^lag 2^(N-lag) <= {ring.MAX_ENUMERATED}; got {count} sequences")
    starts = torch.tensor(list(itertools.product(range(K), repeat=lag)), dtype=torch.int64)
    moves = torch.tensor(list(itertools.product((1, -1), repeat=N - lag)), dtype=torch.int64).reshape(-1, N - lag)
    S, Mv = starts.shape[0], moves.shape[0]
    s = torch.empty((S * Mv, N), dtype=torch.int64)
    s[:, :lag] = starts.repeat_interleave(Mv, dim=0)
    mv = moves.repeat(S, 1)
    for i in range(lag, N):
        s[:, i] = torch.remainder(s[:, i - lag] + mv[:, i - lag], K)
    c = (mv == 1).sum(dim=1).to(torch.float64)
    probs = p**c * (1.0 - p) ** (N - lag - c) / K**lag
    return TokenData.from_states(s, K, weights=probs / probs.sum())


def lag_c1_value(K: int, p: float, N: int, *, lag: int = 2, eta: float = 1.0, epsilon: float = 0.1) -> np.ndarray:
    """``V^(1)`` after one GD step from zero on the population of :func:`lag_walks`.

    ``V^(1) = eta/(epsilon N) sum_{i<N} E[e_y x_i^T]`` with ``E[e_y x_i^T] = (1/K) (Pi^T)^((N-i)/lag)``
    when ``lag`` divides ``N - i`` (same sub-walk) and ``(1/K^2) 1 1^T`` otherwise (independent sub-walks).
    """
    K = check_int("K", K, low=3)
    lag = check_int("lag", lag, low=1)
    N = check_int("N", N, low=lag + 1)
    eta = check_float("eta", eta, low=0.0, low_open=True)
    epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True)
    PiT = ring.transition_matrix(K, p).T
    total = np.zeros((K, K))
    for i in range(1, N):
        d = N - i
        total += ring.matrix_power(PiT, d // lag) / K if d % lag == 0 else np.full((K, K), 1.0 / K**2)
    return eta / (epsilon * N) * total


def _circulant_deviation(A: np.ndarray) -> float:
    """Largest ``|A[i, j] - A[i - j mod K, 0]|`` (0 for a circulant matrix)."""
    rolled = np.stack([np.roll(A[:, 0], j) for j in range(A.shape[0])], axis=1)
    return float(np.abs(A - rolled).max())


def lag_check(p: float = 0.7, *, lag: int = 2, K: int = 6, N: int = 97, M: int = 1000, n_train: int = 1000,
              n_test: int = 1000, steps: int = 30, lr: float = 1.0, small=(13, 100), seed: int = 0) -> dict:
    """The lag-``lag`` chain: first step against :func:`lag_c1_value` on an exact small population
    (``small = (N, M)``), then GD at full size on sampled sequences.

    Returns ``V1_error`` (population), ``V1_closed`` (full size); properties of three
    different objects under distinct names: ``population_V1_circulant_deviation`` and
    ``population_V1_column_max_offsets`` (``V^(1)`` measured on the exact small population;
    for each column ``s`` the offset ``(y - s) mod K`` of its largest entry),
    ``sample_V1_circulant_deviation`` and ``sample_V1_column_max_offsets`` (``V^(1)``
    measured on the ``n_train`` sampled sequences at full size), ``closed_form_circulant``
    and ``closed_form_offsets`` (all offsets where the full-size formula is maximal);
    ``attention_step2`` (test-mean attention over the positions after two steps),
    ``lag_attention`` (on ``x_{N-lag}``) and ``parent_attention`` (on ``x_{N-1}``)
    over the run, ``optimal_fraction`` over the run, ``V_final``.
    """
    steps = check_int("steps", steps, low=2)
    Ns, Ms = small
    pop = lag_population(K, p, Ns, lag=lag)
    small_model = walk_model(K=K, N=Ns, M=Ms)
    V1 = small_model.train(small_model.init(), pop, steps=1, lr=lr).params["V"].numpy()
    closed_small = lag_c1_value(K, p, Ns, lag=lag, eta=lr, epsilon=small_model.config.epsilon)
    closed = lag_c1_value(K, p, N, lag=lag, eta=lr)
    col = closed[:, 0]
    model = walk_model(K=K, N=N, M=M)
    train = TokenData.from_states(lag_walks(K, p, N, n_train, lag=lag, seed=seed), K)
    test = TokenData.from_states(lag_walks(K, p, N, n_test, lag=lag, seed=seed + 1000), K)
    Pi = ring.transition_matrix(K, p)
    parent_of_y = test.tokens[:, -lag]  # s_{N-lag}: the Bayes rule is Pi[s_{N-lag}]
    hist = model.train(model.init(), train, steps=steps, lr=lr, snapshot_at=(1,), record={
        "profile": lambda prm: model.attention(prm, test).mean(0),
        "optimal": lambda prm: optimal_fraction(model.predict(prm, test), parent_of_y, Pi),
        "acc": lambda prm: model.accuracy(prm, test),
    })
    V1_sample = hist.snapshots[1]["V"].numpy()
    return {
        "V1_error": float(np.abs(V1 - closed_small).max()),
        "V1_scale": float(np.abs(closed_small).max()),
        "V1_closed": closed,
        "population_V1_circulant_deviation": _circulant_deviation(V1),
        "population_V1_column_max_offsets": column_max_offsets(V1),
        "sample_V1_circulant_deviation": _circulant_deviation(V1_sample),
        "sample_V1_column_max_offsets": column_max_offsets(V1_sample),
        "closed_form_circulant": ring.is_circulant(closed, tol=1e-14),
        "closed_form_offsets": np.flatnonzero(np.isclose(col, col.max(), rtol=1e-12, atol=0)).tolist(),
        "steps": hist.steps,
        "attention_step2": hist.at("profile", 2),
        "lag_attention": hist["profile"][:, N - 1 - lag],
        "parent_attention": hist["profile"][:, N - 2],
        "optimal_fraction": hist["optimal"],
        "test_accuracy": hist["acc"],
        "bayes": ring.bayes_accuracy(p),
        "V_final": hist.params["V"].numpy(),
    }

