"""Readings of a sweep: find a run, the step at which it is learned, which ``p`` comes first, the distance to the authors' table."""

from __future__ import annotations

import numpy as np

from ...validation import check_float
from .runs import AUTHORS_TABLE


def find_run(data: dict, *, p: float, normalize: str, reduction: str, lr: float, seed: int = 0) -> dict:
    """The run of a sweep with these settings (``KeyError`` if it is not there)."""
    for r in data["runs"]:
        c = r["config"]
        if (c["p"], c["normalize"], c["reduction"], c["seed"]) == (p, normalize, reduction, seed) and np.isclose(c["lr"], lr):
            return r
    raise KeyError(f"no run with p={p}, normalize={normalize!r}, reduction={reduction!r}, lr={lr}, seed={seed}")


def learned_step(steps, fractions, *, threshold: float = 0.95) -> float:
    """First recorded step from which the optimal-prediction fraction stays ``>= threshold`` (``nan`` if never)."""
    threshold = check_float("threshold", threshold, low=0.0, high=1.0)
    ok = np.asarray(fractions) >= threshold
    steps = np.asarray(steps)
    if ok.size == 0 or not ok[-1]:
        return float("nan")
    bad = np.flatnonzero(~ok)
    return float(steps[0] if bad.size == 0 else steps[bad[-1] + 1])


def ordering_table(data: dict, *, threshold: float = 0.95) -> list[dict]:
    """One row per setting and seed: when ``p = 0.5`` and ``p = 1`` are learned, and which comes first.

    ``T_half`` / ``T_one`` are :func:`learned_step` values (``nan``: not within the
    horizon); ``first`` is ``"p=0.5"``, ``"p=1"``, ``"tie"`` or ``"neither"``;
    ``paper_pattern`` is true when ``p = 0.5`` is learned and ``p = 1`` is not (the
    paper's Figure 6), ``final_*`` are the last optimal fractions and
    ``parent_half`` the final attention on the parent for ``p = 0.5``.
    """
    rows = []
    keyed = {}
    for r in data["runs"]:
        c = r["config"]
        keyed.setdefault((c["normalize"], c["reduction"], c["lr"], c["seed"]), {})[c["p"]] = r
    for (norm, red, lr, seed), by_p in keyed.items():
        if 0.5 not in by_p or 1.0 not in by_p:
            continue
        h, o = by_p[0.5], by_p[1.0]
        Th = learned_step(h["steps"], h["curves"]["optimal_fraction"], threshold=threshold)
        To = learned_step(o["steps"], o["curves"]["optimal_fraction"], threshold=threshold)
        if np.isnan(Th) and np.isnan(To):
            first = "neither"
        elif np.isnan(To) or (not np.isnan(Th) and Th < To):
            first = "p=0.5"
        elif np.isnan(Th) or To < Th:
            first = "p=1"
        else:
            first = "tie"
        rows.append({
            "normalize": norm, "reduction": red, "lr": lr, "effective_lr": lr * (data["meta"]["n_train"] if red == "sum" else 1),
            "seed": seed, "T_half": Th, "T_one": To, "first": first,
            "paper_pattern": bool(not np.isnan(Th) and np.isnan(To)),
            "final_half": h["curves"]["optimal_fraction"][-1], "final_one": o["curves"]["optimal_fraction"][-1],
            "parent_half": h["curves"]["parent_attention"][-1], "lag2_half": h["curves"]["lag2_attention"][-1],
        })
    return rows


def table_distance(run: dict) -> float:
    """How far a ``p = 1`` run's weighted-average-token variances are from the authors' table.

    The mean over the table steps of ``|log10(mean variance ours / mean variance authors)|``
    (0: same size at every step; 1: a factor 10 off on average). ``nan`` if a step is missing.
    """
    gaps = []
    for step, (_, var) in AUTHORS_TABLE.items():
        if str(step) not in run["table"]:
            return float("nan")
        ours = float(np.mean(run["table"][str(step)]["variance"]))
        gaps.append(abs(np.log10(max(ours, 1e-300) / float(np.mean(var)))))
    return float(np.mean(gaps))
