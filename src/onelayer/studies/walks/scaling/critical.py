"""The smallest ``M`` that selects the parent at step 2 (:func:`critical_M`), from the exact step-2 logits."""

from __future__ import annotations

import math

import numpy as np
import torch

from ....validation import check_choice, check_float, check_int, check_int_sequence
from ....walks import theory
from ..batched import forward_pass, train_batched, walk_batched_data
from ....walks.positions import M_for

from ..experiment import OPTIMAL_TOL
from .runs import CRITICAL_CRITERIA, CRITICAL_N, DEFAULTS, _check_options, _upper_median
from ..inputs import walk_model


def step2_logit_parts(N: int, *, K: int = 6, p: float = 0.7, seeds=DEFAULTS["seeds"], n_train: int = 1000,
                      n_test: int = 500, lr: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``A, B`` with step-2 logits ``z = (M/2) A + (M/2)^2 B`` on the test walks, for every seed (``(B, n_test, N)``).

    Trains two GD steps from zero at ``M = 2N`` and ``M = 4N`` (all seeds
    batched) and solves the two linear equations. Valid for any ``M`` with
    exactly orthogonal positions of squared norm ``M/2`` (default model options).
    """
    N = check_int("N", N, low=3, high=100_000)
    o = _check_options(K, p, seeds, n_train, n_test, 2, lr, 0.5, OPTIMAL_TOL)
    seeds = list(o["seeds"])
    train = walk_batched_data(o["K"], N, o["n_train"], ps=o["p"], seeds=seeds)
    test = walk_batched_data(o["K"], N, o["n_test"], ps=o["p"], seeds=[s + 1000 for s in seeds])
    logits = {}
    for M in (2 * N, 4 * N):
        model = walk_model(K=o["K"], N=N, M=M)
        hist = train_batched(model, train, steps=2, lr=o["lr"])
        logits[M / 2.0] = forward_pass(model, hist.params, test)["z"]
    (a1, z1), (a2, z2) = logits.items()
    B = (z1 * a2 - z2 * a1) / (a1 * a2 * (a1 - a2))
    A = (z1 - a1**2 * B) / a1
    return A, B


def _crossing_scale(score, target: float, low: float, high: float) -> float:
    """Smallest ``a`` in ``[low, high]`` with ``score(a) >= target`` (log grid, then bisection); ``nan`` if none."""
    grid = np.geomspace(low, high, 33)
    values = [score(a) for a in grid]
    hit = np.flatnonzero(np.asarray(values) >= target)
    if hit.size == 0:
        return float("nan")
    if hit[0] == 0:
        return float(low)
    lo, hi = math.log(grid[hit[0] - 1]), math.log(grid[hit[0]])
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if score(math.exp(mid)) >= target else (mid, hi)
    return math.exp(hi)


def critical_M(Ns=CRITICAL_N, *, K: int = 6, p: float = 0.7, seeds=DEFAULTS["seeds"], n_train: int = 1000,
               n_test: int = 500, lr: float = 1.0, criterion: str = "attention", threshold: float = 0.99,
               c: float = 0.25) -> list[dict]:
    """For each ``N``: the smallest ``M`` at which two GD steps already select the parent.

    Parameters
    ----------
    Ns:
        Sequence lengths (``>= 3``).
    criterion:
        ``"attention"`` (default): the mean test attention on the parent after
        step 2 reaches ``threshold`` (so ``T_parent = 2`` of :func:`~onelayer.studies.walks.scaling.runs.measure`);
        ``"log_odds"``: the median over test walks of the smallest step-2
        log-odds of the parent reaches ``c N`` (the theorem's leakage
        ``e^{-Omega(N)}``).
    threshold, c:
        The two criteria's constants.

    Returns
    -------
    list of dict
        ``N``, ``M_crit`` (upper median over seeds, a seed whose parent is
        never selected counting as infinite; ``nan`` if that is more than half),
        ``M_crit_min``, ``M_crit_max`` (over the seeds that select the parent),
        ``selected`` (their number), ``seeds``, ``M_crit_seeds`` (each seed's value in the order of ``seeds``,
        ``nan`` where the parent is never selected), ``M_for_N`` (``ceil(N^{3/2})``)
        and ``ratio`` (``M_crit / N^{3/2}``).
        ``M_crit`` is a real number (the crossing of a continuous function of
        ``M``); it may lie below ``N + 1``, the smallest ``M`` that sinusoidal
        positions allow, in which case the criterion holds for every allowed ``M``.
    """
    Ns = check_int_sequence("Ns", Ns, low=3, high=100_000)
    if not Ns:
        raise ValueError("Ns must contain at least one sequence length")
    check_choice("criterion", criterion, CRITICAL_CRITERIA)
    threshold = check_float("threshold", threshold, low=0.0, high=1.0, low_open=True, high_open=True)
    c = check_float("c", c, low=0.0, low_open=True)
    rows = []
    for N in Ns:
        A, B = step2_logit_parts(N, K=K, p=p, seeds=seeds, n_train=n_train, n_test=n_test, lr=lr)
        crit = []
        for b in range(A.shape[0]):
            Ab, Bb = A[b], B[b]
            if criterion == "attention":
                def score(a, Ab=Ab, Bb=Bb):
                    return float(torch.softmax(a * Ab + a * a * Bb, dim=1)[:, -2].mean())
                target = threshold
            else:
                def score(a, Ab=Ab, Bb=Bb):
                    lo = theory.parent_log_odds(a * Ab + a * a * Bb).min(axis=1)
                    return float(np.median(lo))
                target = c * N
            crit.append(2.0 * _crossing_scale(score, target, 0.5, 5e7))
        crit = np.asarray(crit)
        med = _upper_median(crit)
        rows.append({
            "N": N, "criterion": criterion, "M_crit": med,
            "M_crit_min": float(np.nanmin(crit)) if not np.isnan(crit).all() else float("nan"),
            "M_crit_max": float(np.nanmax(crit)) if not np.isnan(crit).all() else float("nan"),
            "selected": int((~np.isnan(crit)).sum()), "seeds": int(crit.size), "M_crit_seeds": crit.tolist(),
            "M_for_N": M_for(N), "ratio": med / N**1.5,
        })
    return rows
