"""Variations of the walks model and task that the reviewers asked about.

Each function is one experiment of ``book/walks/variations.ipynb`` and of
``tests/test_walks_variations.py``. All models are the paper's (zero
initialisation, plain GD, ``eta = 1``, ``epsilon = 0.1``, log-loss) except for
the one named change.

Residual connection (:func:`residual_check`)
    The output is read at the query slot, whose token part is zero, so adding
    ``X`` to the output adds nothing there. Checked with the literal full-``W``
    autograd model of :mod:`onelayer.walks.reference`.
``1/sqrt(d)`` logit scaling (:func:`scaling_equivalence`, :func:`scaling_table`)
    With a merged ``W``, a logit factor ``c`` is the same as the step size
    ``eta c^2`` on ``W`` (and the initialisation ``c W_0``). Same end state,
    reached later.
No positional embedding (:func:`no_position_table`)
    The query column is then zero, every logit is 0 forever, and the model only
    sees the token average.
A parent at lag 2 (:func:`lag_walks`, :func:`lag_population`, :func:`lag_c1_value`, :func:`lag_check`)
    ``s_i = s_{i-2} +- 1``: two interleaved ring walks, and ``s_N`` depends on
    ``s_{N-2}`` only. The authors predicted a circulant first-step ``V`` and
    attention on ``x_{N-2}`` after the second step.
A non-circulant Markov chain (:func:`random_transition_matrix`, :func:`markov_walks`, :func:`chain_run`)
    A random row-stochastic ``Pi`` on ``K`` states, walks started from its
    stationary law ``mu``. Once attention sits on the parent, the log-loss step
    of ``V_{ys}`` is ``eta mu_s pi_sy / (V_{ys} + epsilon)``, so ``V`` should grow
    in the direction of ``sqrt(C^T)`` with ``C = diag(mu) Pi``: neither ``Pi^T``
    nor ``sqrt(Pi^T)`` unless ``mu`` is uniform, but with the same column-wise
    argmax, hence Bayes-optimal predictions.
"""

from __future__ import annotations

import itertools

import numpy as np
import torch

from ..plots import PALETTE, heatmap, new_figure
from ..seeding import generator
from ..validation import check_float, check_int, check_probability
from ..widgets import slider_app
from . import prediction, reference, ring, theory
from .data import TokenData, walk_data
from .model import WalkTransformer
from .random_init import optimal_fraction
from .theorem31 import setup_experiment

__all__ = [
    "residual_check",
    "scaling_equivalence",
    "scaling_table",
    "no_position_table",
    "lag_walks",
    "lag_population",
    "lag_c1_value",
    "lag_check",
    "random_transition_matrix",
    "random_doubly_stochastic",
    "stationary_distribution",
    "chain_c1_value",
    "markov_walks",
    "markov_data",
    "markov_population",
    "chain_targets",
    "chain_run",
    "figure_scaling",
    "figure_lag",
    "figure_chain",
    "chain_explorer",
    "chain_widget",
]


# -- residual connection ------------------------------------------------------------------------------------------

def residual_check(*, K: int = 6, N: int = 13, M: int = 100, p: float = 0.7, n: int = 300, steps: int = 5,
                   lr: float = 1.0, sigma: float = 0.1, seed: int = 0) -> dict[str, float]:
    """The literal autograd model with and without the residual: outputs, gradients, GD trajectories.

    Returns the largest absolute differences between the two models of the
    output and of the gradients at a Gaussian point (``sigma``), and of ``V`` and
    the full ``W`` after ``steps`` GD steps from zero; plus, as a scale, the
    largest entries of those quantities.
    """
    data = walk_data(K, p, N, n, seed=seed)
    plain = WalkTransformer(K=K, N=N, M=M)
    resid = WalkTransformer(K=K, N=N, M=M, residual=True)
    Xt = reference.materialize(plain, data)
    point = plain.init_full("gaussian", sigma=sigma, seed=seed)
    out = {}
    grads = []
    for model in (plain, resid):
        prm = {k: v.clone().requires_grad_(True) for k, v in point.items()}
        loss = reference.reference_loss(model, prm, data, Xt)
        gV, gW = torch.autograd.grad(loss, [prm["V"], prm["W"]])
        f = reference.reference_forward(model, prm, data, Xt)["f"].detach()
        grads.append((f, gV, gW))
    out["output_diff"] = float((grads[0][0] - grads[1][0]).abs().max())
    out["grad_V_diff"] = float((grads[0][1] - grads[1][1]).abs().max())
    out["grad_W_diff"] = float((grads[0][2] - grads[1][2]).abs().max())
    out["output_scale"] = float(grads[0][0].abs().max())
    zero = plain.init_full()
    runs = [reference.reference_train(model, zero, data, steps=steps, lr=lr, Xt=Xt) for model in (plain, resid)]
    out["V_diff"] = float((runs[0].params["V"] - runs[1].params["V"]).abs().max())
    out["W_diff"] = float((runs[0].params["W"] - runs[1].params["W"]).abs().max())
    out["V_scale"] = float(runs[0].params["V"].abs().max())
    out["W_scale"] = float(runs[0].params["W"].abs().max())
    return out


# -- 1/sqrt(d) scaling --------------------------------------------------------------------------------------------

def scaling_equivalence(p: float = 0.7, *, steps: int = 30, lr: float = 1.0, n_train: int = 1000, seed: int = 0,
                        **sizes) -> dict[str, float]:
    """GD on the ``1/sqrt(d)``-scaled model vs GD on the unscaled model with step ``eta c^2`` on ``W`` (``c^2 = 1/d``).

    Both start from zero. Returns the largest differences of ``V`` and of the
    attention logits (on the training walks) over the run, and ``c2``.
    """
    steps = check_int("steps", steps, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    exp = setup_experiment(p, n_train=n_train, seed=seed, logit_scale="inv_sqrt_d", **sizes)
    scaled = exp.model
    plain = WalkTransformer(scaled.config.replace(logit_scale="one"))
    c2 = 1.0 / scaled.D
    rec_s = {"V": lambda prm: prm["V"].clone(), "z": lambda prm: scaled.logits(prm, exp.train)}
    rec_p = {"V": lambda prm: prm["V"].clone(), "z": lambda prm: plain.logits(prm, exp.train)}
    hs = scaled.train(scaled.init(), exp.train, steps=steps, lr=lr, record=rec_s)
    hp = plain.train(plain.init(), exp.train, steps=steps, lr={"V": lr, "q": lr * c2}, record=rec_p)
    return {
        "c2": c2,
        "max_V_diff": float(np.abs(hs["V"] - hp["V"]).max()),
        "max_logit_diff": float(np.abs(hs["z"] - hp["z"]).max()),
        "max_logit": float(np.abs(hs["z"]).max()),
    }


def _optimal_flags(model, data, Pi):
    return lambda prm: optimal_fraction(model.predict(prm, data), data.last, Pi, data.weights)


def scaling_table(ps=(0.5, 0.7), *, steps: int = 150, lr: float = 1.0, seed: int = 0) -> list[dict]:
    """Steps until every test prediction is Bayes-optimal, with logit scale 1 and ``1/sqrt(K+M)``.

    Rows: ``p``, ``logit_scale``, ``T0`` (:func:`onelayer.walks.theory.steps_to_optimal`
    of "all test predictions optimal"), ``final_accuracy`` (test),
    ``parent_attention`` (final, test mean), and the curves ``steps``,
    ``optimal_fraction``, ``parent_curve`` for the figure.
    """
    steps = check_int("steps", steps, low=1)
    rows = []
    for p in ps:
        for scale in ("one", "inv_sqrt_d"):
            exp = setup_experiment(p, seed=seed, logit_scale=scale)
            m, test = exp.model, exp.test
            Pi = ring.transition_matrix(m.config.K, p)
            hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record={
                "optimal": _optimal_flags(m, test, Pi),
                "parent": lambda prm, m=m, test=test: float(m.attention(prm, test)[:, -2].mean()),
                "acc": lambda prm, m=m, test=test: m.accuracy(prm, test),
            })
            rows.append({
                "p": p, "logit_scale": scale,
                "T0": theory.steps_to_optimal(hist["optimal"] >= 1.0 - 1e-12),
                "final_accuracy": float(hist.final("acc")),
                "parent_attention": float(hist.final("parent")),
                "steps": hist.steps, "optimal_fraction": hist["optimal"], "parent_curve": hist["parent"],
            })
    return rows


# -- no positional embedding --------------------------------------------------------------------------------------

def no_position_table(ps=(0.5, 0.7, 1.0), *, steps: int = 500, lr: float = 1.0, seed: int = 0) -> list[dict]:
    """``positions="none"``: test accuracy and optimal fraction after ``steps`` GD steps, and how far the
    attention ever is from uniform (largest ``|S_j - 1/N|`` over the run, test walks)."""
    steps = check_int("steps", steps, low=1)
    rows = []
    for p in ps:
        exp = setup_experiment(p, seed=seed, positions="none")
        m, test = exp.model, exp.test
        N = m.config.N
        Pi = ring.transition_matrix(m.config.K, p)
        hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record_every=max(1, steps // 10), record={
            "acc": lambda prm, m=m, test=test: m.accuracy(prm, test),
            "optimal": _optimal_flags(m, test, Pi),
            "dev": lambda prm, m=m, test=test, N=N: float((m.attention(prm, test) - 1.0 / N).abs().max()),
        })
        rows.append({"p": p, "accuracy": float(hist.final("acc")), "optimal_fraction": float(hist.final("optimal")),
                     "max_uniform_dev": float(hist["dev"].max()), "chance": 1.0 / m.config.K,
                     "bayes": ring.bayes_accuracy(p), "bayes_test": exp.bayes_test_accuracy})
    return rows


# -- a parent at lag 2 -------------------------------------------------------------------------------------------------

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


def _column_max_offsets(A: np.ndarray) -> list[int]:
    """For each column ``s``, the offset ``(y - s) mod K`` of its largest entry (smallest ``y`` on ties)."""
    K = A.shape[0]
    return [int((np.argmax(A[:, s]) - s) % K) for s in range(K)]


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
    the older keys ``V1_offsets`` and ``circulant`` are kept for existing callers and
    mean the closed-form ones;
    ``attention_step2`` (test-mean attention over the positions after two steps),
    ``lag_attention`` (on ``x_{N-lag}``) and ``parent_attention`` (on ``x_{N-1}``)
    over the run, ``optimal_fraction`` over the run, ``V_final``.
    """
    steps = check_int("steps", steps, low=2)
    Ns, Ms = small
    pop = lag_population(K, p, Ns, lag=lag)
    small_model = WalkTransformer(K=K, N=Ns, M=Ms)
    V1 = small_model.train(small_model.init(), pop, steps=1, lr=lr).params["V"].numpy()
    closed_small = lag_c1_value(K, p, Ns, lag=lag, eta=lr, epsilon=small_model.config.epsilon)
    closed = lag_c1_value(K, p, N, lag=lag, eta=lr)
    col = closed[:, 0]
    model = WalkTransformer(K=K, N=N, M=M)
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
        "population_V1_column_max_offsets": _column_max_offsets(V1),
        "sample_V1_circulant_deviation": _circulant_deviation(V1_sample),
        "sample_V1_column_max_offsets": _column_max_offsets(V1_sample),
        "closed_form_circulant": ring.is_circulant(closed, tol=1e-14),
        "closed_form_offsets": np.flatnonzero(np.isclose(col, col.max(), rtol=1e-12, atol=0)).tolist(),
        # older names, kept for existing callers: properties of the closed form
        "V1_offsets": np.flatnonzero(np.isclose(col, col.max(), rtol=1e-12, atol=0)).tolist(),
        "circulant": ring.is_circulant(closed, tol=1e-14),
        "steps": hist.steps,
        "attention_step2": hist.at("profile", 2),
        "lag_attention": hist["profile"][:, N - 1 - lag],
        "parent_attention": hist["profile"][:, N - 2],
        "optimal_fraction": hist["optimal"],
        "test_accuracy": hist["acc"],
        "bayes": ring.bayes_accuracy(p),
        "V_final": hist.params["V"].numpy(),
    }


# -- a non-circulant Markov chain ------------------------------------------------------------------------------------

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
    model = WalkTransformer(K=K, N=N, M=M)
    train = markov_data(Pi, N, n_train, seed=seed)
    test = markov_data(Pi, N, n_test, seed=seed + 1000)
    targets = chain_targets(Pi)
    targets["sample sqrt(C^T)"] = theory.empirical_target(train)
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
        "T0": theory.steps_to_optimal(hist["optimal"] >= 1.0 - 1e-12),
        "bayes_test": prediction.accuracy(bayes_pred, test.labels),
        "d_steps": hist.steps[keep],
        "d": {name: np.array([theory.direction_distance(V, T) for V in hist["V"][keep]]) for name, T in targets.items()},
        "V_final": hist.params["V"].numpy(),
    }


# -- figures ------------------------------------------------------------------------------------------------------------

def figure_scaling(rows: list[dict]):
    """Fraction of optimal test predictions (a) and attention on the parent (b) against the step, for every
    row of :func:`scaling_table` (solid: scale 1, dashed: ``1/sqrt(d)``)."""
    fig, axes = new_figure(2, width=9.0, height=3.2)
    ps = list(dict.fromkeys(r["p"] for r in rows))
    for r in rows:
        c = PALETTE[ps.index(r["p"]) % len(PALETTE)]
        ls = "-" if r["logit_scale"] == "one" else "--"
        lab = f"p = {r['p']:g}, {'scale 1' if r['logit_scale'] == 'one' else '1/sqrt(d)'}"
        axes[0].plot(r["steps"], r["optimal_fraction"], color=c, linestyle=ls, label=lab)
        axes[1].plot(r["steps"], r["parent_curve"], color=c, linestyle=ls, label=lab)
    for ax, yl in zip(axes, ("fraction of optimal predictions", "attention on x_{N-1}")):
        ax.set_xscale("symlog", linthresh=10)
        ax.set_xlabel("GD step")
        ax.set_ylabel(yl)
        ax.set_ylim(-0.02, 1.02)
    axes[0].legend(fontsize=7)
    return fig


def figure_lag(res: dict):
    """(a) Closed-form ``V^(1)`` of the lag chain, (b) attention over the last positions after step 2,
    (c) attention on ``x_{N-2}`` and ``x_{N-1}`` and the optimal fraction over the run."""
    fig, axes = new_figure(3, width=11.5, height=3.3)
    heatmap(axes[0], res["V1_closed"], title="(a) V(1), closed form", fmt="{:.2f}", colorbar=False,
            xlabel="input node", ylabel="output node")
    prof = np.asarray(res["attention_step2"])
    N = prof.size
    last = np.arange(N - 8, N + 1)
    axes[1].bar(last, prof[-9:], color=PALETTE[0])
    axes[1].set_xticks(last, [f"N-{N - j}" if j < N else "N" for j in last], rotation=60, fontsize=7)
    axes[1].set_ylim(0, 1.05)
    axes[1].set_title("(b) attention after step 2", fontsize=9)
    axes[2].plot(res["steps"], res["lag_attention"], label="on x_{N-2}")
    axes[2].plot(res["steps"], res["parent_attention"], label="on x_{N-1}")
    axes[2].plot(res["steps"], res["optimal_fraction"], linestyle="--", label="optimal predictions")
    axes[2].set_ylim(-0.02, 1.02)
    axes[2].set_xlabel("GD step")
    axes[2].set_title("(c) over the run", fontsize=9)
    axes[2].legend(fontsize=7)
    return fig


def figure_chain(res: dict):
    """(a) ``Pi``, (b) the final ``V`` (rows: outputs), (c) direction distances of ``V`` to the candidate targets."""
    fig, axes = new_figure(3, width=12.0, height=3.4)
    heatmap(axes[0], res["Pi"], title="(a) Pi (rows: current state)", fmt="{:.2f}", colorbar=False)
    heatmap(axes[1], res["V_final"], title="(b) V at the last step", fmt="{:.1f}", colorbar=False,
            xlabel="input node", ylabel="output node")
    for name, d in res["d"].items():
        axes[2].loglog(res["d_steps"], d, label=name)
    axes[2].set_xlabel("GD step")
    axes[2].set_ylabel("|| V/||V|| - T/||T|| ||_F")
    axes[2].set_title("(c) direction of V", fontsize=9)
    axes[2].legend(fontsize=7)
    return fig


def chain_explorer(seed: int = 0, concentration: float = 1.0, steps: int = 100):
    """Widget callback: :func:`chain_run` on a random chain (``K = 6``, ``N = 49``, ``M = 400``, 500 walks)."""
    seed = check_int("seed", seed, low=0)
    Pi = random_transition_matrix(6, seed=seed, concentration=concentration)
    res = chain_run(Pi, N=49, M=400, n_train=500, n_test=500, steps=steps, seed=seed)
    fig = figure_chain(res)
    fig.suptitle(f"seed {seed}, concentration {concentration:g}: parent attention after step 2 "
                 f"{res['parent_step2']:.3f}, optimal fraction at the end {res['optimal_fraction'][-1]:.3f}", fontsize=9)
    return fig


def chain_widget():
    """Controls for the chain's seed and Dirichlet concentration, redrawing :func:`chain_explorer`."""
    import ipywidgets as widgets

    controls = {
        "seed": widgets.IntSlider(value=0, min=0, max=9, description="seed"),
        "concentration": widgets.SelectionSlider(options=[0.2, 0.5, 1.0, 2.0, 5.0], value=1.0, description="Dirichlet"),
    }
    return slider_app(chain_explorer, controls)

