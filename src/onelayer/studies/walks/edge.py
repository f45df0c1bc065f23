"""The edge of Theorem 3.1: ``p`` close to 1 and rings with ``K <= 4``.

Theorem 3.1 needs ``N >= C_p poly(K)`` with a constant that blows up as
``p -> 1`` (Lemma E.4 needs ``N = omega(1 / (p (1 - p)))``) and ``K > 4``. At the
paper's size (``N = 97``, ``M = 1000``, 50 steps from zero, ``eta = 1``,
``epsilon = 0.1``, 1000 training walks) we measure, for each ``(K, p, seed)``,
whether and when the Bayes accuracy is reached and *which* position the
attention settles on: the parent (lag 1) or another ancestor.

* :func:`edge_table`: one row per run (many runs trained together with
  :func:`onelayer.studies.walks.batched.train_batched`).
* :func:`edge_summary`: the rows grouped by ``(K, p)``.
* :func:`edge_rates`: per ``(K, p)`` the share of runs that are Bayes-optimal on the parent and the share that lock
  onto another lag, each a :class:`~onelayer.rates.Rate` with its 95% interval.
"""

from __future__ import annotations

import numpy as np
import torch

from ...rates import rate
from ...validation import check_int, check_probability
from . import batched
from ...walks import ring

from .inputs import walk_model

__all__ = ["edge_table", "edge_summary", "edge_rates", "EDGE_PS"]

#: The walk parameters of the edge experiment.
EDGE_PS = (0.9, 0.95, 0.97, 0.99, 0.999)


def edge_table(ps=EDGE_PS, *, seeds=(0, 1, 2, 3, 4), Ks=(6,), N: int = 97, M: int = 1000, steps: int = 50,
               n_train: int = 1000, n_test: int = 1000, lr: float = 1.0) -> list[dict]:
    """Zero-initialised GD for every ``K x p x seed``; one row per run.

    Parameters
    ----------
    ps:
        Walk parameters (each in ``(0, 1)``).
    seeds:
        Data seeds: training walks ``seed``, test walks ``seed + 1000``.
    Ks:
        Ring sizes (``>= 3``).
    N, M, steps, n_train, n_test, lr:
        Sizes and training; defaults are the paper's Section 5.1 setting.

    Returns
    -------
    list of dict
        ``K``, ``p``, ``seed``, ``T0`` (first step from which every test prediction is Bayes-optimal,
        ``nan`` if not at the end), ``conditional_accuracy`` (final; ``max(p, 1-p)`` when optimal),
        ``test_accuracy``, ``bayes_test_accuracy`` (the Bayes rule on the same test walks),
        ``parent_attention`` (final test mean), ``top_lag`` (the position with the largest final
        test-mean attention, as a lag from the query: 1 is the parent), ``top_attention``.
    Runtime: about 1.5 s per ``(K, p)`` pair with 5 seeds at the default size (the default grid,
    ``K = 6``: about 7 s; ``Ks=(3, 4, 6)``: about 20 s).

    Measured (seeds 0-4, 50 steps): ``K = 6``: every run optimal except ``p = 0.99``, seed 0, which
    settles on ``x_{N-2}`` (attention 1.0, conditional accuracy 0.978 < 0.99); ``K = 3``: all 25 runs
    optimal on the parent; ``K = 4``: 6 of 25 runs settle on ``x_{N-2}`` (``p = 0.9``: 2 of 5). Five seeds are too
    few: with 40 seeds per ``p`` (the stored study :mod:`onelayer.studies.walks.seed_rates`) ``K = 6`` locks onto another lag
    in 14 of 40 runs at ``p = 0.99`` and 19 of 40 at ``p = 0.999``, and ``K = 4`` (48 of 200 over the five ``p``) no
    more often than ``K = 6`` (43 of 200). With 200 seeds per ``p`` (the stored study :mod:`onelayer.studies.walks.edge_seeds`)
    ``K = 6`` locks onto another lag in 59 of 200 runs at ``p = 0.99`` and 126 of 200 at ``p = 0.999``.
    """
    ps = [check_probability(f"ps[{i}]", p, open_low=True, open_high=True) for i, p in enumerate(ps)]
    seeds = [check_int(f"seeds[{i}]", s, low=0) for i, s in enumerate(seeds)]
    Ks = [check_int(f"Ks[{i}]", K, low=3) for i, K in enumerate(Ks)]
    steps = check_int("steps", steps, low=1)
    if not ps or not seeds or not Ks:
        raise ValueError("ps, seeds and Ks must each name at least one value")
    rows = []
    for K in Ks:
        model = walk_model(K=K, N=N, M=M)
        mp = [p for p in ps for _ in seeds]
        ms = [s for _ in ps for s in seeds]
        train = batched.walk_batched_data(K, N, n_train, ps=mp, seeds=ms)
        test = batched.walk_batched_data(K, N, n_test, ps=mp, seeds=[s + 1000 for s in ms])
        rec = batched.attention_records(model, test, ps=mp)
        hist = batched.train_batched(model, train, steps=steps, lr=lr,
                                   record={"conditional_accuracy": rec["conditional_accuracy"]})
        cond = np.asarray(hist["conditional_accuracy"])  # (T, B)
        out = batched.forward_pass(model, hist.params, test)
        S = out["S"].mean(dim=1).numpy()  # (B, N)
        acc = rec["accuracy"](hist.params).numpy()
        for b, (p, s) in enumerate(zip(mp, ms)):
            optimal = np.abs(cond[:, b] - ring.bayes_accuracy(p)) < 1e-9
            bad = np.flatnonzero(~optimal)
            T0 = float("nan") if not optimal[-1] else float(hist.steps[0 if bad.size == 0 else bad[-1] + 1])
            last = test.last[b]
            bayes_pred = ring.bayes_scores(last, K, p).argmax(dim=1)
            top = int(np.argmax(S[b, :-1]))
            rows.append({
                "K": K, "p": p, "seed": s, "T0": T0,
                "conditional_accuracy": float(cond[-1, b]),
                "test_accuracy": float(acc[b]),
                "bayes_test_accuracy": float((bayes_pred == test.labels[b]).to(torch.float64).mean()),
                "parent_attention": float(S[b, -2]),
                "top_lag": N - 1 - top,
                "top_attention": float(S[b, top]),
            })
    return rows


def edge_summary(rows: list[dict]) -> list[dict]:
    """Rows of :func:`edge_table` grouped by ``(K, p)``: ``runs``, ``optimal_runs`` (Bayes-optimal at the end),
    ``max_T0`` over the optimal runs, ``parent_runs`` (final parent attention above 0.99), ``top_lags`` (the
    distinct settled lags), ``mean_conditional_accuracy``, ``bayes``."""
    if not rows:
        raise ValueError("rows must not be empty")
    out = []
    for key in sorted({(r["K"], r["p"]) for r in rows}):
        sub = [r for r in rows if (r["K"], r["p"]) == key]
        T0s = [r["T0"] for r in sub if not np.isnan(r["T0"])]
        out.append({
            "K": key[0], "p": key[1], "runs": len(sub), "optimal_runs": len(T0s),
            "max_T0": max(T0s) if T0s else float("nan"),
            "parent_runs": sum(r["parent_attention"] > 0.99 for r in sub),
            "top_lags": sorted({r["top_lag"] for r in sub}),
            "mean_conditional_accuracy": float(np.mean([r["conditional_accuracy"] for r in sub])),
            "bayes": ring.bayes_accuracy(key[1]),
        })
    return out


def edge_rates(rows: list[dict]) -> list[dict]:
    """Rows of :func:`edge_table` grouped by ``(K, p)``: ``runs``; ``optimal_parent`` (Bayes-optimal at the end with
    the largest attention on the parent) and ``other_lag`` (largest attention on another lag), each a
    :class:`~onelayer.rates.Rate` (``*_rate``) and its text; ``other_lags`` (the distinct other lags)."""
    if not rows:
        raise ValueError("rows must not be empty")
    out = []
    for key in sorted({(r["K"], r["p"]) for r in rows}):
        sub = [r for r in rows if (r["K"], r["p"]) == key]
        good = rate(sum(r["top_lag"] == 1 and not np.isnan(r["T0"]) for r in sub), len(sub))
        other = rate(sum(r["top_lag"] != 1 for r in sub), len(sub))
        out.append({"K": key[0], "p": key[1], "runs": len(sub), "optimal_parent_rate": good,
                    "optimal_parent": good.text(2), "other_lag_rate": other, "other_lag": other.text(2),
                    "other_lags": sorted({int(r["top_lag"]) for r in sub if r["top_lag"] != 1})})
    return out
