"""Rates over the stored training samples of the Theorem 3.1 studies: readings of the rows of
:mod:`onelayer.studies.walks.seed_rates` (first steps, direction, edge) and :mod:`onelayer.studies.walks.direction_slopes`
as rates (:class:`~onelayer.rates.Rate`, 95% Wilson intervals) and means (95% t intervals). The thresholds are the
caller's (the chapter's settings)."""

from __future__ import annotations

import numpy as np

from ...rates import mean_interval, rate

__all__ = ["first_step_rates", "direction_rates", "slope_rates", "pooled_edge_rates", "edge_seed_comparison", "with_more_seeds"]


def first_step_rates(rows: list[dict], *, circulant_tol: float, selected_attention: float) -> dict:
    """Over the first-steps rows of :mod:`onelayer.studies.walks.seed_rates` (one training sample each, ``p = 0.7``, the
    paper's size): ``samples``; the
    :class:`~onelayer.rates.Rate` of samples in which all 6 columns of ``V(1)`` peak at the most frequent training
    label (``all_top_1``), the same for ``V(2)`` (``all_top_2``), in which every column of ``V(1)`` peaks at offset
    +1 (``all_plus_one_1``), in which ``V(1)`` is circulant (largest deviation below ``circulant_tol``,
    ``circulant_1``), in which the step-2 test-mean attention on the parent exceeds ``selected_attention``
    (``parent_selected_2``), in which the step-2 positional gap exceeds the token-logit spread (``gap_wins_2``), and
    in which every test prediction is Bayes-optimal at step 3 (``optimal_3``) and at step 2 (``optimal_2``);
    ``(mean, low, high)`` (95% t intervals) of the number of such columns of ``V(1)`` (``mean_top_1``), of ``V(1)``'s
    circulant deviation (``mean_circulant_1``), of the step-2 parent attention, positional gap and token spread
    (``mean_parent_2``, ``mean_gap_2``, ``mean_spread_2``), of the share of test predictions equal to the most
    frequent training label at steps 1 and 2 (``mean_predicts_top_1``, ``mean_predicts_top_2``) and of the
    conditional accuracy at steps 2 and 3 (``mean_conditional_2``, ``mean_conditional_3``); ``min_parent_2``; and
    ``histogram_1`` (samples with 0..6 such columns)."""
    if not rows:
        raise ValueError("rows must not be empty")
    n, K = len(rows), 6
    count = lambda f: rate(sum(bool(f(r)) for r in rows), n)  # noqa: E731
    mean = lambda key: mean_interval([r[key] for r in rows])  # noqa: E731
    return {"samples": n,
            "all_top_1": count(lambda r: r["top_label_columns_1"] == K),
            "all_top_2": count(lambda r: r["top_label_columns_2"] == K),
            "all_plus_one_1": count(lambda r: r["plus_one_columns_1"] == K),
            "circulant_1": count(lambda r: r["circulant_deviation_1"] < circulant_tol),
            "parent_selected_2": count(lambda r: r["parent_attention_2"] > selected_attention),
            "gap_wins_2": count(lambda r: r["positional_gap_2"] > r["token_logit_spread_2"]),
            "optimal_2": count(lambda r: r["optimal_2"]), "optimal_3": count(lambda r: r["optimal_3"]),
            "mean_top_1": mean("top_label_columns_1"), "mean_circulant_1": mean("circulant_deviation_1"),
            "mean_parent_2": mean("parent_attention_2"), "min_parent_2": min(r["parent_attention_2"] for r in rows),
            "mean_gap_2": mean("positional_gap_2"), "mean_spread_2": mean("token_logit_spread_2"),
            "mean_predicts_top_1": mean("predicts_top_label_1"), "mean_predicts_top_2": mean("predicts_top_label_2"),
            "mean_conditional_2": mean("conditional_accuracy_2"), "mean_conditional_3": mean("conditional_accuracy_3"),
            "histogram_1": [sum(r["top_label_columns_1"] == c for r in rows) for c in range(K + 1)]}


def direction_rates(rows: list[dict], *, growth_slope: float) -> dict:
    """Over the direction rows of :mod:`onelayer.studies.walks.seed_rates` (``p = 0.7``, the paper's size, one training sample each): ``samples``;
    ``(mean, low, high)`` (95% t intervals) of the best power ``a`` of ``(Pi^T)^a`` under the log-loss and the squared
    loss (``log_power``, ``squared_power``), of Lemma C.7's smallest remainder ``min_beta ||V - beta Pi^T||_F`` at
    step 1 and at the last step (``residual_first``, ``residual_last``) and of its log-log slope (``slope``); the
    :class:`~onelayer.rates.Rate` of samples whose ``V`` is closer in direction to ``sqrt(Pi^T)`` than to ``Pi^T``
    under the log-loss (``log_sqrt_closer``) and closer to ``Pi^T`` under the squared loss (``squared_Pi_closer``),
    and in which the remainder grows (slope above ``growth_slope``, ``grows``)."""
    if not rows:
        raise ValueError("rows must not be empty")
    n = len(rows)
    count = lambda f: rate(sum(bool(f(r)) for r in rows), n)  # noqa: E731
    mean = lambda key: mean_interval([r[key] for r in rows])  # noqa: E731
    return {"samples": n, "log_power": mean("log_best_power"), "squared_power": mean("squared_best_power"),
            "residual_first": mean("residual_first"), "residual_last": mean("residual_last"), "slope": mean("slope"),
            "log_sqrt_closer": count(lambda r: r["log_d_sqrt"] < r["log_d_Pi"]),
            "squared_Pi_closer": count(lambda r: r["squared_d_Pi"] < r["squared_d_sqrt"]),
            "grows": count(lambda r: r["slope"] > growth_slope)}


def slope_rates(rows: list[dict], *, slope_tol: float) -> dict:
    """Theorem 3.1 item 3's rate over the samples of :mod:`onelayer.studies.walks.direction_slopes` (``p = 0.7``, the
    paper's size, log-loss): the log-log slope of the distance of ``V``'s direction to each sample's own ``sqrt(C^T)``
    target, fitted from the study's ``from_record``: ``samples``, ``from_step``, ``slope`` (``(mean, low, high)``, a 95% t
    interval), ``lowest``/``highest`` (the extreme samples) and ``near_half`` (the :class:`~onelayer.rates.Rate` of
    samples whose slope lies within ``slope_tol`` of ``-1/2``)."""
    if len(rows) < 2:
        raise ValueError("rows must hold at least two samples")
    slopes = [r["slope"] for r in rows]
    return {"samples": len(rows), "from_step": int(rows[0]["from_step"]), "slope": mean_interval(slopes),
            "lowest": min(slopes), "highest": max(slopes),
            "near_half": rate(sum(abs(v + 0.5) <= slope_tol for v in slopes), len(rows))}


def pooled_edge_rates(rows: list[dict]) -> dict:
    """``{K: (optimal on the parent, other lag)}``: the two :class:`~onelayer.rates.Rate` of the edge runs ``rows`` (of
    :mod:`onelayer.studies.walks.seed_rates`) of each ring size, pooled over ``p``."""
    out = {}
    for K in sorted({r["K"] for r in rows}):
        sub = [r for r in rows if r["K"] == K]
        out[K] = (rate(sum(r["top_lag"] == 1 and not np.isnan(r["T0"]) for r in sub), len(sub)),
                  rate(sum(r["top_lag"] != 1 for r in sub), len(sub)))
    return out


def edge_seed_comparison(old: dict, cells: list[dict]) -> list[dict]:
    """Per ``p`` of the edge study's ``cells`` (:mod:`onelayer.studies.walks.edge_seeds`' summary): optimal on the
    parent and another lag over the 40 stored samples of ``walks-seed-rates`` (``old``: ``p`` -> its row of
    :func:`onelayer.studies.walks.edge.edge_rates`), over all 200 samples, and over the 160 new ones (seeds 40-199)
    alone, each ``k/n = x [95% Wilson interval]``; ``earlier_same``: whether the study's own seeds 0-39 give the old
    counts (it recomputes them bit for bit: the same batches)."""
    out = []
    for p in sorted({c["p"] for c in cells}):
        by = {c["seeds"]: c for c in cells if c["p"] == p}
        row = {"p": p, "optimal_parent_40": old[p]["optimal_parent"], "other_lag_40": old[p]["other_lag"]}
        for label in ("all", "new"):
            c = by[label]
            row[f"optimal_parent_{label}"] = rate(c["optimal_parent"], c["runs"]).text(2)
            row[f"other_lag_{label}"] = rate(c["other_lag"], c["runs"]).text(2)
            row[f"runs_{label}"] = c["runs"]
        row["other_lags_all"] = by["all"]["other_lags"]
        row["earlier_same"] = (by["earlier"]["optimal_parent"], by["earlier"]["other_lag"]) == (
            old[p]["optimal_parent_rate"].k, old[p]["other_lag_rate"].k)
        out.append(row)
    return out


def with_more_seeds(rows: list[dict], K: int, members: list[dict]) -> list[dict]:
    """The edge runs ``rows`` at ring size ``K`` with the runs of the edge study's ``members``
    (:mod:`onelayer.studies.walks.edge_seeds`) in place of ``rows``' runs at each ``p`` the study has."""
    more = [row for m in members for row in m["result"]["rows"]]
    ps = {r["p"] for r in more}
    return [r for r in rows if r["K"] == K and r["p"] not in ps] + more
