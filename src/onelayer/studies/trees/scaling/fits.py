"""Fits of the trees scaling study: power laws of every measured series, local slopes, the linear model of ``T / S``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ....power_laws import fit_power_law

__all__ = ["fit_table", "local_slopes", "linear_model"]


def fit_table(depth_rows: Sequence[Mapping], label_rows: Sequence[Mapping] = (), time_rows: Sequence[Mapping] = (),
              forward_rows: Sequence[Mapping] = ()) -> list[dict]:
    """Power-law fits ``y ~ c x^slope`` of every measured series; rows ``series, x, slope, r2, points``.

    The population series is also fitted on the sizes that have stored SGD
    runs only, for a like-for-like comparison. Depth grid: against the number
    of nodes ``n``, of tokens ``N`` and the depth ``m`` (a power law in ``m`` is a poor description of an
    exponential; its ``r2`` shows it). Labels grid: against ``S``. Wall
    time: against ``n``. Forward: converged runs only, against ``n``.
    """
    out = []

    def add(series, rows, x, y):
        xs = [r[x] for r in rows if y in r]
        ys = [r[y] for r in rows if y in r]
        if sum(1 for v in ys if v is not None and not math.isnan(v)) >= 2:
            ys = [float("nan") if v is None else v for v in ys]
            fit = fit_power_law(xs, ys)
            out.append({"series": series, "x": x, "slope": fit.slope, "r2": fit.r2, "points": fit.n})

    for x in ("n_nodes", "tokens", "m"):
        add("depth: population", depth_rows, x, "population_steps")
        add("depth: population, sizes with SGD runs", [r for r in depth_rows if "sampled_median" in r], x,
            "population_steps")
        add("depth: sampled median", depth_rows, x, "sampled_median")
    add("labels: population", label_rows, "S", "population_steps")
    add("labels: population, sizes with SGD runs", [r for r in label_rows if "sampled_median" in r], "S",
        "population_steps")
    add("labels: sampled median", label_rows, "S", "sampled_median")
    add("time: batched trainer per step", time_rows, "n_nodes", "sampled_s_per_step")
    add("time: population per step", time_rows, "n_nodes", "population_s_per_step")
    add("forward two-head (stored)", forward_rows, "n_nodes", "steps_to_converge")
    return out


def local_slopes(rows: Sequence[Mapping], x: str = "n_nodes", y: str = "population_steps") -> list[float]:
    """Log-log slopes between consecutive sizes: ``log(y_{i+1}/y_i) / log(x_{i+1}/x_i)`` (``nan`` where missing)."""
    pairs = [(float(r[x]), float("nan") if r.get(y) is None else float(r[y])) for r in rows]
    if len(pairs) < 2:
        raise ValueError("local_slopes needs at least two rows")
    out = []
    for (x0, y0), (x1, y1) in zip(pairs, pairs[1:]):
        ok = x0 > 0 and x1 > 0 and x0 != x1 and y0 > 0 and y1 > 0
        out.append(math.log(y1 / y0) / math.log(x1 / x0) if ok else float("nan"))
    return out


def linear_model(rows: Sequence[Mapping], y: str = "population_steps") -> dict[str, float]:
    """Least squares of ``T / S`` on the number of tokens ``N``: ``T ~ S (c1 N + c0)`` (module docstring).

    Returns ``c1``, ``c0``, ``r2`` (of ``T / S``) and ``max_rel_error`` (largest
    ``|model / T - 1|`` over the rows); rows without a value of ``y`` are skipped.
    """
    keep = [r for r in rows if y in r and r[y] is not None and not math.isnan(r[y])]
    if len({r["tokens"] for r in keep}) < 2:
        raise ValueError(f"linear_model needs rows with a value of {y!r} at two or more token counts")
    N = np.array([r["tokens"] for r in keep], dtype=float)
    per = np.array([r[y] / r["S"] for r in keep], dtype=float)
    c1, c0 = np.polyfit(N, per, 1)
    pred = c1 * N + c0
    total = float(((per - per.mean()) ** 2).sum())
    r2 = 1.0 - float(((per - pred) ** 2).sum()) / total if total > 0 else 1.0
    return {"c1": float(c1), "c0": float(c0), "r2": r2, "max_rel_error": float(np.abs(pred / per - 1).max())}
