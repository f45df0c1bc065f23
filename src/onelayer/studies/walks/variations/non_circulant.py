"""The non-circulant Markov chain variation: random (Dirichlet) and doubly stochastic transition matrices on ``K``
states in place of the ring (:func:`random_transition_matrix`, :func:`markov_walks`, :func:`chain_run`; drawn by
:mod:`onelayer.figures.walks_variations`)."""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ....seeding import generator
from ....validation import check_float, check_int
from ....walks import prediction, ring, theory
from .. import analysis
from ....walks.data import TokenData

from ..random_init.runs import optimal_fraction
from ..inputs import walk_model


def random_transition_matrix(K: int = 6, *, seed: int = 0, concentration: float = 1.0) -> np.ndarray:
    """A random row-stochastic ``K x K`` matrix with independent Dirichlet(``concentration``) rows (float64)."""
    K = check_int("K", K, low=2, high=1000)
    concentration = check_float("concentration", concentration, low=0.0, low_open=True)
    rng = np.random.default_rng(seed)
    Pi = rng.dirichlet(np.full(K, concentration), size=K)
    return Pi / Pi.sum(axis=1, keepdims=True)


def random_doubly_stochastic(K: int = 6, *, seed: int = 0, weights=(0.7, 0.3)) -> np.ndarray:
    """``sum_r w_r P_r`` for random permutation matrices ``P_r`` (``P_r[i, sigma_r(i)] = 1``): a chain whose
    stationary law is uniform, like the ring's, but whose ``Pi`` is in general not circulant.

    With ``weights = (p, 1 - p)`` and the two shifts ``i -> i +- 1`` in place of random
    permutations, this would be the ring walk.
    """
    K = check_int("K", K, low=2, high=1000)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size < 1 or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be non-negative numbers summing to 1; got {weights!r}")
    rng = np.random.default_rng(seed)
    Pi = np.zeros((K, K))
    for wr in w:
        Pi[np.arange(K), rng.permutation(K)] += wr
    return Pi


def stationary_distribution(Pi) -> np.ndarray:
    """The stationary law ``mu`` (``mu Pi = mu``, ``sum mu = 1``): uniform for a doubly stochastic ``Pi``,
    otherwise the least-squares solution (unique for an irreducible chain)."""
    Pi = np.asarray(Pi, dtype=np.float64)
    if Pi.ndim != 2 or Pi.shape[0] != Pi.shape[1]:
        raise ValueError(f"Pi must be a square matrix, got shape {Pi.shape}")
    K = Pi.shape[0]
    if np.allclose(Pi.sum(axis=0), 1.0, rtol=0, atol=1e-12):
        return np.full(K, 1.0 / K)
    A = np.vstack([Pi.T - np.eye(K), np.ones((1, K))])
    b = np.zeros(K + 1)
    b[-1] = 1.0
    mu = np.linalg.lstsq(A, b, rcond=None)[0]
    return np.clip(mu, 0.0, None) / np.clip(mu, 0.0, None).sum()


def _check_stochastic(Pi) -> np.ndarray:
    Pi = np.asarray(Pi, dtype=np.float64)
    if Pi.ndim != 2 or Pi.shape[0] != Pi.shape[1] or (Pi < 0).any() or not np.allclose(Pi.sum(axis=1), 1.0):
        raise ValueError("Pi must be a square row-stochastic matrix (non-negative rows summing to 1)")
    return Pi


def markov_walks(Pi, N: int, n: int, *, seed: int = 0, start: str = "stationary") -> torch.Tensor:
    """``n`` walks of length ``N`` of the chain ``Pi`` from its stationary law (or ``start="uniform"``), int64 ``(n, N)``."""
    Pi = _check_stochastic(Pi)
    N = check_int("N", N, low=2)
    n = check_int("n", n, low=1)
    if start not in ("stationary", "uniform"):
        raise ValueError(f"start must be 'stationary' or 'uniform'; got {start!r}")
    K = Pi.shape[0]
    mu = stationary_distribution(Pi) if start == "stationary" else np.full(K, 1.0 / K)
    gen = generator(seed)
    cum = torch.as_tensor(np.cumsum(Pi, axis=1))
    cum[:, -1] = 1.0
    s = torch.empty((n, N), dtype=torch.int64)
    s[:, 0] = torch.multinomial(torch.as_tensor(mu), n, replacement=True, generator=gen)
    u = torch.rand((n, N - 1), generator=gen, dtype=torch.float64)
    for i in range(1, N):
        s[:, i] = torch.searchsorted(cum[s[:, i - 1]], u[:, i - 1:i].contiguous(), right=True)[:, 0].clamp_max(K - 1)
    return s


def markov_data(Pi, N: int, n: int, *, seed: int = 0) -> TokenData:
    """:func:`markov_walks` as :class:`~onelayer.walks.data.TokenData`."""
    Pi = _check_stochastic(Pi)
    return TokenData.from_states(markov_walks(Pi, N, n, seed=seed), Pi.shape[0])


def markov_population(Pi, N: int) -> TokenData:
    """Every walk of length ``N`` of ``Pi`` from its stationary law, with its probability (``K^N`` walks, at most ``2^20``)."""
    Pi = _check_stochastic(Pi)
    N = check_int("N", N, low=2)
    K = Pi.shape[0]
    if K**N > ring.MAX_ENUMERATED:
        raise ValueError(f"N must satisfy K^N <= {ring.MAX_ENUMERATED}; got K={K}, N={N}")
    s = torch.tensor(list(itertools.product(range(K), repeat=N)), dtype=torch.int64)
    P = torch.as_tensor(Pi)
    probs = torch.as_tensor(stationary_distribution(Pi))[s[:, 0]]
    for i in range(1, N):
        probs = probs * P[s[:, i - 1], s[:, i]]
    keep = probs > 0
    return TokenData.from_states(s[keep], K, weights=probs[keep] / probs[keep].sum())


def chain_targets(Pi) -> dict[str, np.ndarray]:
    """Candidate directions for ``V``: ``Pi^T``, ``sqrt(Pi^T)`` and ``sqrt(C^T)`` with ``C = diag(mu) Pi``."""
    Pi = _check_stochastic(Pi)
    mu = stationary_distribution(Pi)
    return {"Pi^T": Pi.T.copy(), "sqrt(Pi^T)": np.sqrt(Pi.T), "sqrt(C^T)": np.sqrt((mu[:, None] * Pi).T)}


def chain_c1_value(Pi, N: int, *, eta: float = 1.0, epsilon: float = 0.1) -> np.ndarray:
    """``V^(1) = eta/(epsilon N) sum_{k=1}^{N-1} (diag(mu) Pi^k)^T`` after one GD step from zero (population,
    walks started from ``mu``). For large ``k`` the terms tend to ``mu mu^T``: a rank-one part that weights the
    input token ``s`` by its frequency ``mu_s``; for the ring (``mu`` uniform) it is ``1 1^T / K^2`` and weights
    every token alike."""
    Pi = _check_stochastic(Pi)
    N = check_int("N", N, low=2)
    eta = check_float("eta", eta, low=0.0, low_open=True)
    epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True)
    mu = stationary_distribution(Pi)
    total = np.zeros_like(Pi)
    power = np.eye(Pi.shape[0])
    for _ in range(N - 1):
        power = power @ Pi
        total += (mu[:, None] * power).T
    return eta / (epsilon * N) * total


def chain_run(Pi, *, N: int = 97, M: int = 1000, n_train: int = 1000, n_test: int = 1000, steps: int = 300,
              lr: float = 1.0, seed: int = 0, record_every: int = 10) -> dict:
    """Zero-initialised GD on walks of ``Pi``: attention on the parent, optimal predictions, direction of ``V``.

    Returns ``Pi``, ``mu``, ``steps``, curves ``parent_attention`` (test mean),
    ``optimal_fraction`` (test, against ``argmax Pi[s_{N-1}]``), ``test_accuracy``,
    distances ``d[name]`` of ``V``'s direction to each :func:`chain_targets` entry and
    to the training set's own ``sqrt(C^T)`` (``"sample sqrt(C^T)"``), ``parent_step2``,
    ``T0`` (first step from which every test prediction is optimal), ``bayes_test``
    (accuracy of the Bayes rule on the test walks), ``V_final``.
    """
    Pi = _check_stochastic(Pi)
    K = Pi.shape[0]
    steps = check_int("steps", steps, low=2)
    model = walk_model(K=K, N=N, M=M)
    train = markov_data(Pi, N, n_train, seed=seed)
    test = markov_data(Pi, N, n_test, seed=seed + 1000)
    targets = chain_targets(Pi)
    targets["sample sqrt(C^T)"] = analysis.empirical_target(train)
    wanted = sorted(set(range(0, steps + 1, record_every)) | {1, 2, 3, steps})
    hist = model.train(model.init(), train, steps=steps, lr=lr, record_at=wanted, record={
        "parent": lambda prm: float(model.attention(prm, test)[:, -2].mean()),
        "optimal": lambda prm: optimal_fraction(model.predict(prm, test), test.last, Pi),
        "acc": lambda prm: model.accuracy(prm, test),
        "V": lambda prm: prm["V"].clone(),
    })
    bayes_pred = prediction.predict(torch.as_tensor(Pi)[test.last])
    keep = hist.steps >= 1
    two = model.train(model.init(), train, steps=2, lr=lr).params
    q_tok, r = two["q"][:K], (model.P.T @ two["q"][K:])[:-1]
    V1 = model.train(model.init(), train, steps=1, lr=lr).params["V"].numpy()
    closed = chain_c1_value(Pi, N, eta=lr, epsilon=model.config.epsilon)
    return {
        "V1_rel_error": float(np.abs(V1 - closed).max() / np.abs(closed).max()),
        "token_spread_step2": float(q_tok.max() - q_tok.min()),
        "position_gap_step2": float(r[-1] - r[:-1].max()),
        "Pi": Pi, "mu": stationary_distribution(Pi), "steps": hist.steps,
        "parent_attention": hist["parent"], "optimal_fraction": hist["optimal"], "test_accuracy": hist["acc"],
        "parent_step2": float(hist.at("parent", 2)),
        "T0": analysis.steps_to_optimal(hist["optimal"] >= 1.0 - 1e-12),
        "bayes_test": prediction.accuracy(bayes_pred, test.labels),
        "d_steps": hist.steps[keep],
        "d": {name: np.array([theory.direction_distance(V, T) for V in hist["V"][keep]]) for name, T in targets.items()},
        "V_final": hist.params["V"].numpy(),
    }


def chain_explorer_run(seed: int = 0, concentration: float = 1.0, steps: int = 100) -> dict:
    """The run :func:`onelayer.figures.walks_variations.chain_explorer` draws: :func:`chain_run` on :func:`random_transition_matrix` ``(6, seed, concentration)``
    with ``N = 49``, ``M = 400`` and 500 training and 500 test walks."""
    seed = check_int("seed", seed, low=0)
    Pi = random_transition_matrix(6, seed=seed, concentration=concentration)
    return chain_run(Pi, N=49, M=400, n_train=500, n_test=500, steps=steps, seed=seed)



def chain_first_step(Pi, *, small: tuple[int, int, int] = (5, 7, 50), seed: int = 0, N: int = 97,
                     eta: float = 1.0) -> dict:
    """The first-step formula of a random chain: exact on the population of a small random chain (``small`` =
    ``(K, N, M)``, :func:`random_transition_matrix` of ``seed``; ``B`` walks, the error), then for the chain ``Pi`` at
    length ``N`` against ``(eta/epsilon) mu mu^T``."""
    K, N_small, M = small
    Pi_small = random_transition_matrix(K, seed=seed)
    pop = markov_population(Pi_small, N_small)
    model = walk_model(K=K, N=N_small, M=M)
    V1 = model.train(model.init(), pop, steps=1).params["V"].numpy()
    mu = stationary_distribution(Pi)
    closed = chain_c1_value(Pi, N)
    eta_over_eps = eta / model.config.epsilon  # the step of WalkTransformer.train's default lr = 1
    return {"K": K, "N": N_small, "B": pop.B, "small_error": float(np.abs(V1 - chain_c1_value(Pi_small, N_small)).max()),
            "mu": mu, "full_N": N, "mu_mu_error": float(np.abs(closed - eta_over_eps * np.outer(mu, mu)).max()),
            "closed_max": float(closed.max())}
