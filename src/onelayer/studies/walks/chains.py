"""Which chains are learned, and what any model without positions can do (issue 13 (d)).

Two claims of the walks chapters are checked here as claims, not by one run each:

Uniform stationary law (our conjecture from one chain of each kind)
    :func:`chain_table` trains the paper's model from zero on ``n_chains``
    seeded doubly stochastic chains (uniform stationary law, not circulant) and
    ``n_chains`` seeded Dirichlet chains (non-uniform stationary law) and reports,
    for each, the attention on the parent and whether every test prediction is
    Bayes-optimal.
No positional embedding (the authors: no model of this form beats a random guess)
    Without positions the query column is zero, so every logit is 0 for *any*
    ``W``: the attention is uniform and ``f(X) = V c / N`` with ``c`` the visit
    counts. Every such model predicts ``argmax_y (V c)_y``, a linear classifier of
    the histogram without intercept. Two quantities bound what it can do:
    :func:`histogram_bayes_accuracy` (exact, on the population of short walks:
    the best accuracy of *any* function of the histogram, an upper bound) and
    :func:`linear_histogram_accuracy` (a multinomial logistic fit of ``V`` on many
    sampled walks, scored on fresh walks: an accuracy that some ``V`` reaches).
    The enumeration stops near ``N = 20``; :func:`onelayer.studies.walks.histogram_bound.histogram_bayes_bound`
    computes the same bound at any length (the paper's ``N = 97``) by dynamic programming.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import torch

from ...validation import check_choice, check_int, check_probability
from ...walks import ring
from .variations import non_circulant
from ...walks.data import walk_data, walk_population

__all__ = ["histogram_bayes_accuracy", "linear_histogram_accuracy", "no_position_capacity_table", "no_position_capacity_row",
           "chain_table", "chain_row", "CHAIN_KINDS"]


def histogram_bayes_accuracy(K: int, p: float, N: int) -> float:
    """The best accuracy of any predictor that sees only the visit counts of ``s_1..s_{N-1}``.

    Exact: every walk of length ``N`` (:func:`onelayer.walks.data.walk_population`, at most ``2^20``
    walks) is grouped by its histogram and the most probable label of each group is counted.
    """
    K = check_int("K", K, low=3)
    p = check_probability("p", p)
    N = check_int("N", N, low=2)
    d = walk_population(K, p, N)
    counts = np.rint(d.token_average().numpy() * (N - 1)).astype(np.int64)
    table: dict = defaultdict(lambda: np.zeros(K))
    for key, w, y in zip(map(tuple, counts), d.weights.numpy(), d.labels.numpy()):
        table[key][y] += w
    return float(sum(v.max() for v in table.values()))


def linear_histogram_accuracy(K: int, p: float, N: int, *, n: int = 20000, seed: int = 0) -> dict[str, float]:
    """Fit ``V`` (no intercept) by multinomial logistic regression on the token averages of ``n`` walks
    (seed ``seed``); accuracy of ``argmax V c`` on ``n`` fresh walks (seed ``seed + 1``) and on the fit walks.

    Any such ``V`` is a one-layer model of the paper's form without positions, so the held-out
    accuracy is reached by some model of that form (up to the sampling error ``~ 0.5 / sqrt(n)``).
    """
    K = check_int("K", K, low=3)
    p = check_probability("p", p)
    n = check_int("n", n, low=10)
    train, test = walk_data(K, p, N, n, seed=seed), walk_data(K, p, N, n, seed=seed + 1)
    X, Xt = train.token_average(), test.token_average()
    V = torch.zeros((K, K), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([V], max_iter=200, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(50.0 * X @ V.T, train.labels)
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        test_acc = float(((Xt @ V.T).argmax(1) == test.labels).to(torch.float64).mean())
        fit_acc = float(((X @ V.T).argmax(1) == train.labels).to(torch.float64).mean())
    return {"test_accuracy": test_acc, "fit_accuracy": fit_acc, "chance": 1.0 / K, "n": n}


def no_position_capacity_table(ps=(0.5, 0.7, 1.0), *, K: int = 6, exact_Ns=(7, 13, 17), linear_N: int = 97,
                               n: int = 20000, seed: int = 0) -> list[dict]:
    """For each ``p``: :func:`histogram_bayes_accuracy` at each ``exact_Ns`` and :func:`linear_histogram_accuracy`
    at ``linear_N``; with ``1/K`` and the Bayes accuracy ``max(p, 1-p)``. About 8 s with the defaults.

    Measured (defaults): histogram Bayes accuracy 0.245/0.235/0.228 at ``p = 0.5`` and 0.419/0.316/0.285
    at ``p = 0.7`` for ``N = 7/13/17``; at ``p = 1`` exactly ``1/6`` when ``K`` divides ``N - 1`` (7, 13)
    and 1.0 at ``N = 17`` (the histogram then reveals the start); a linear ``V`` fitted on 20000 walks of
    length 97 scores 0.191 (``p = 0.5``) and 0.194 (``p = 0.7``) on 20000 fresh walks, against ``1/6``.
    """
    return [no_position_capacity_row(p, K=K, exact_Ns=exact_Ns, linear_N=linear_N, n=n, seed=seed) for p in ps]


def no_position_capacity_row(p: float, *, K: int = 6, exact_Ns=(7, 13, 17), linear_N: int = 97, n: int = 20000,
                             seed: int = 0) -> dict:
    """One row of :func:`no_position_capacity_table`: the walk parameter ``p``."""
    row = {"p": float(p), "chance": 1.0 / K, "bayes": ring.bayes_accuracy(p)}
    for N in exact_Ns:
        row[f"histogram_bayes_N{N}"] = histogram_bayes_accuracy(K, p, N)
    lin = linear_histogram_accuracy(K, p, linear_N, n=n, seed=seed)
    row[f"linear_N{linear_N}"] = lin["test_accuracy"]
    return row


def chain_table(n_chains: int = 8, *, K: int = 6, steps: int = 20, N: int = 97, M: int = 1000,
                n_train: int = 1000, n_test: int = 1000, seed: int = 0) -> list[dict]:
    """Zero-initialised GD on ``n_chains`` doubly stochastic and ``n_chains`` Dirichlet(1) chains (seeds ``0..``).

    Doubly stochastic chains are ``0.7 P_1 + 0.3 P_2`` for random permutations
    (:func:`onelayer.studies.walks.variations.non_circulant.random_doubly_stochastic`); the others have independent
    Dirichlet(1) rows (:func:`onelayer.studies.walks.variations.non_circulant.random_transition_matrix`). Rows: ``kind``,
    ``chain_seed``, ``mu_spread`` (max - min of the stationary law), ``parent_attention`` (final test
    mean), ``optimal_fraction`` (final share of Bayes-optimal test predictions), ``learned`` (parent
    attention > 0.99 and every prediction optimal), ``test_accuracy``, ``bayes_test``. About 0.6 s per
    chain at ``steps = 20``.
    """
    n_chains = check_int("n_chains", n_chains, low=1)
    steps = check_int("steps", steps, low=2)
    return [chain_row(kind, s, K=K, steps=steps, N=N, M=M, n_train=n_train, n_test=n_test, seed=seed)
            for kind in CHAIN_KINDS for s in range(n_chains)]


#: The two families of :func:`chain_table`.
CHAIN_KINDS = ("doubly stochastic", "non-uniform")


def chain_row(kind: str, chain_seed: int, *, K: int = 6, steps: int = 20, N: int = 97, M: int = 1000,
              n_train: int = 1000, n_test: int = 1000, seed: int = 0) -> dict:
    """One row of :func:`chain_table`: the chain ``chain_seed`` of family ``kind`` (``"doubly stochastic"`` or
    ``"non-uniform"``), trained from zero on its own walks (data seed ``seed``)."""
    kind = check_choice("kind", kind, CHAIN_KINDS)
    chain_seed = check_int("chain_seed", chain_seed, low=0)
    steps = check_int("steps", steps, low=2)
    Pi = (non_circulant.random_doubly_stochastic(K, seed=chain_seed) if kind == "doubly stochastic"
          else non_circulant.random_transition_matrix(K, seed=chain_seed))
    r = non_circulant.chain_run(Pi, N=N, M=M, n_train=n_train, n_test=n_test, steps=steps, seed=seed,
                                record_every=steps)
    mu = r["mu"]
    return {
        "kind": kind, "chain_seed": chain_seed, "mu_spread": float(mu.max() - mu.min()),
        "parent_attention": float(r["parent_attention"][-1]),
        "optimal_fraction": float(r["optimal_fraction"][-1]),
        "learned": bool(r["parent_attention"][-1] > 0.99 and r["optimal_fraction"][-1] >= 1 - 1e-12),
        "test_accuracy": float(r["test_accuracy"][-1]),
        "bayes_test": float(r["bayes_test"]),
    }
