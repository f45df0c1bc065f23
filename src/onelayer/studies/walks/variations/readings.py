"""Readings of the variations' stored runs and studies (``book/walks/variations.ipynb``): the rates over the seeds of
:mod:`onelayer.studies.walks.variations.seeds` and the words they support, the rows read off one lag-2 run
(:func:`~onelayer.studies.walks.variations.lag.lag_check`) or one chain run
(:func:`~onelayer.studies.walks.variations.non_circulant.chain_run`), and the rates of the stored baseline and
no-position studies. A rate is a :class:`onelayer.rates.Rate` (``k/n`` with its 95% Wilson interval).
"""

from __future__ import annotations

import numpy as np

from ....rates import rate

__all__ = ["logit_scale_rates", "lag_rates", "logit_scale_verdict", "lag_verdict", "share_text", "lag_row",
           "chain_rows", "chain_numbers", "linear_rates", "baseline_rates", "chain_kinds", "check_stored"]


def logit_scale_rates(rows: list[dict]) -> list[dict]:
    """Per walk parameter of the logit-scale rows of the seed study: ``T0`` of both scales over the seeds
    (``T0_one``, ``T0_scaled``: the per-seed steps, ``nan`` for a run never optimal), the seeds slower with
    ``1/sqrt(d)`` than with scale 1 on the same sample (a run never optimal counts as slower) and the seeds that reach
    the same end state with ``1/sqrt(d)`` (every test prediction optimal and attention on the parent above 0.99 at the
    last step), each a rate; the seeds that do not reach it (``other_seeds``) and their largest final attention on the
    parent (``other_parent_max``)."""
    out = []
    for p in sorted({r["p"] for r in rows}):
        sub = [r for r in rows if r["p"] == p]
        one = np.array([r["T0_one"] for r in sub], dtype=float)
        scaled = np.array([r["T0_inv_sqrt_d"] for r in sub], dtype=float)
        slower = sum(not np.isfinite(b) or (np.isfinite(a) and b > a) for a, b in zip(one, scaled))
        ends = [r["optimal_inv_sqrt_d"] >= 1 - 1e-12 and r["parent_inv_sqrt_d"] > 0.99 for r in sub]  # tol: a fraction, 1 up to round-off
        others = [r for r, e in zip(sub, ends) if not e]
        out.append({"p": p, "seeds": len(sub), "T0_one": one, "T0_scaled": scaled,
                    "slower": rate(slower, len(sub)), "same_end": rate(sum(ends), len(sub)),
                    "other_seeds": [r["seed"] for r in others],
                    "other_parent_max": max((r["parent_inv_sqrt_d"] for r in others), default=float("nan"))})
    return out


def lag_rates(rows: list[dict], selected: float) -> list[dict]:
    """Per walk parameter of the lag rows of the seed study (largest first): the seeds whose test-mean attention on
    ``x_(N-lag)`` after step 2 is above ``selected``, the seeds attending most to ``x_(N-lag)`` at the end, and the
    seeds whose every test prediction is optimal at the end (rates), with the lowest step-2 attention, the per-seed
    ``T0`` and the lags other seeds attend to most at the end (``other_lags``)."""
    out = []
    for p in sorted({r["p"] for r in rows}, reverse=True):
        sub = [r for r in rows if r["p"] == p]
        step2 = [r["lag_attention"][1] for r in sub]
        out.append({"p": p, "seeds": len(sub), "selected_2": rate(sum(a > selected for a in step2), len(sub)),
                    "lowest_2": min(step2), "on_lag_end": rate(sum(r["top_lag_end"] == r["lag"] for r in sub), len(sub)),
                    "optimal_end": rate(sum(r["optimal_end"] >= 1 - 1e-12 for r in sub), len(sub)),  # tol: as above
                    "other_lags": sorted({r["top_lag_end"] for r in sub if r["top_lag_end"] != r["lag"]}),
                    "T0": [r["T0"] for r in sub]})
    return out


def logit_scale_verdict(rates: list[dict]) -> str:
    """"holds in every seed" / "holds in most seeds" (both rates' intervals above 1/2 at every ``p``) / "fails"."""
    if all(r["slower"].k == r["slower"].n and r["same_end"].k == r["same_end"].n for r in rates):
        return "holds in every seed"
    if all(r["slower"].low > 0.5 and r["same_end"].low > 0.5 for r in rates):
        return "holds in most seeds"
    return "fails in a large share of seeds"


def lag_verdict(rates: list[dict], exact: bool) -> str:
    """The lag-2 verdict: the formula's exactness and, per ``p``, whether the step-2 selection holds in every seed,
    in most (interval above 1/2), or not; "holds" where it does in most seeds at every ``p``, else "partly"."""
    if not exact:
        return "fails (the first-step formula)"
    parts, most = [], True
    for r in rates:
        sel = r["selected_2"]
        word = "every seed" if sel.k == sel.n else "most seeds" if sel.low > 0.5 else "a minority of seeds" \
            if sel.high < 0.5 else "about half of the seeds"
        most &= sel.low > 0.5 or sel.k == sel.n
        parts.append(f"{word} at p={r['p']:g}")
    return ("holds" if most else "partly") + ": formula exact; attention on x_(N-2) after step 2 in " + ", ".join(parts)


def share_text(r, what: str) -> str:
    """``what`` in every run, in none, or in ``k/n`` of the runs of the rate ``r``."""
    if r.k == r.n:
        return f"confirmed: {what} in every seed ({r.k}/{r.n})"
    if r.k == 0:
        return f"not confirmed: {what} in no seed (0/{r.n})"
    return f"partly: {what} in {r.k}/{r.n} seeds"


def lag_row(p: float, r: dict) -> dict:
    """What the chapter reads off the lag run ``r`` at walk parameter ``p``: the first-step check, the attention on
    ``x_(N-lag)`` after steps 1-3 and on the parent after step 2, the first recorded step from which every test
    prediction is optimal (``T0``) and the final accuracy."""
    T0 = int(r["steps"][np.flatnonzero(r["optimal_fraction"] < 1 - 1e-12)[-1] + 1])
    return {"p": p, **{k: r[k] for k in ("V1_error", "V1_scale", "population_V1_column_max_offsets",
                                         "sample_V1_column_max_offsets", "closed_form_circulant", "closed_form_offsets")},
            "lag_attention_1_3": [float(a) for a in r["lag_attention"][1:4]],
            "parent_attention_2": float(r["parent_attention"][2]), "T0": T0,
            "test_accuracy_end": float(r["test_accuracy"][-1])}


def chain_rows(r: dict) -> list[dict]:
    """What the text reads off the chain run ``r``: the token and positional logit gaps and the parent's attention at
    step 2, the final attention, optimal fraction and accuracy against the Bayes rule, and the distance of ``V``'s
    direction to each candidate at the last step, as ``quantity, value`` rows."""
    rows = [("spread of the token logits, step 2", r["token_spread_step2"]),
            ("parent's positional logit minus the best other, step 2", r["position_gap_step2"]),
            ("attention on the parent, step 2", r["parent_step2"]),
            ("attention on the parent, last step", float(r["parent_attention"][-1])),
            ("share of Bayes-optimal predictions, last step", float(r["optimal_fraction"][-1])),
            ("test accuracy, last step", float(r["test_accuracy"][-1])),
            ("test accuracy of the Bayes rule", float(r["bayes_test"]))]
    rows += [(f"distance of V's direction to {name}", float(d[-1])) for name, d in r["d"].items()]
    return [{"quantity": q, "value": float(v)} for q, v in rows]


def chain_numbers(res: dict) -> dict:
    """The scalars of the chain run ``res`` and its final state (``final``)."""
    keys = ("V1_rel_error", "token_spread_step2", "position_gap_step2", "Pi", "mu", "parent_step2", "T0", "bayes_test")
    out = {k: res[k] for k in keys}
    out["final"] = {"parent_attention": float(res["parent_attention"][-1]), "optimal_fraction": float(res["optimal_fraction"][-1]),
                    "test_accuracy": float(res["test_accuracy"][-1]), **{f"d {k}": float(d[-1]) for k, d in res["d"].items()}}
    return out


def linear_rates(capacity: list[dict], n: int) -> dict[float, object]:
    """The fitted ``V`` at ``N = 97`` of each row of ``capacity``
    (:func:`onelayer.studies.walks.chains.no_position_capacity_table`) as a rate: right on ``k`` of ``n`` fresh walks."""
    # the accuracy is an unweighted mean over n walks: k / n up to round-off
    return {r["p"]: rate(round(r["linear_N97"] * n), n) for r in capacity}


def baseline_rates(rows: list[dict], optimal: float) -> dict:
    """Per number of training walks of the stored baseline rows (:func:`onelayer.studies.walks.baseline_seeds.load`):
    ``{n: {"linear": Rate, "transformer": Rate, "linear_ahead": Rate}}``, the seeds whose run is optimal (at least
    ``optimal`` of the test predictions Bayes-optimal) and those where the linear model has the larger share."""
    out = {}
    for r in rows:
        lin, tra = r["linear_optimal_seeds"], r["transformer_optimal_seeds"]
        n = len(lin)
        out[r["n"]] = {"linear": rate(sum(x >= optimal for x in lin), n),
                       "transformer": rate(sum(x >= optimal for x in tra), n),
                       "linear_ahead": rate(sum(a > b for a, b in zip(lin, tra)), n)}
    return out


def chain_kinds(rows: list[dict]) -> list[dict]:
    """The seeded chain rows (:func:`onelayer.studies.walks.chains.chain_table`) by kind: the rate of learned chains
    (``learned``) and the ``(min, max)`` of the stationary law's spread (``mu_spread``) and of the final attention on
    the parent (``parent_attention``)."""
    out = []
    for kind in ("doubly stochastic", "non-uniform"):
        mine = [r for r in rows if r["kind"] == kind]
        spread, attention = [r["mu_spread"] for r in mine], [r["parent_attention"] for r in mine]
        out.append({"kind": kind, "learned": rate(sum(r["learned"] for r in mine), len(mine)),
                    "mu_spread": (min(spread), max(spread)), "parent_attention": (min(attention), max(attention))})
    return out


def check_stored(study, stored, wanted: dict, names: str) -> None:
    """Refuse (``ValueError``) the stored settings ``stored`` of ``study`` unless each attribute of ``wanted`` has its
    value there; ``names``: the reader's settings that would differ."""
    have = {k: getattr(stored, k) for k in wanted}
    if have != wanted:
        raise ValueError(f"the stored study {study.name} has {', '.join(f'{k}={v}' for k, v in have.items())}; the "
                         f"chapter's {names} differ: run `python -m onelayer study {study.name}`")
