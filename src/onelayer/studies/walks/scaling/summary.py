"""Reductions of a scaling study: fitted power laws, the cost model and the rounded tables."""

from __future__ import annotations

import math

import numpy as np

from ....power_laws import fit_power_law
from ....rates import mean_interval


def _x_of(axis: str) -> str:
    return "M" if axis == "M" else "N"


def slopes(study: dict, critical=None) -> dict[str, dict]:
    """Fitted power laws ``y ~ c x^slope`` of a study (and of :func:`~onelayer.studies.walks.scaling.critical.critical_M` rows).

    Keys ``"<quantity> vs <axis>"`` with quantity ``T_parent``, ``T_optimal``,
    ``log_odds2`` and ``seconds_per_step``; values ``{"slope", "prefactor",
    "r2", "n"}`` (``n`` = number of sizes used; sizes whose value is ``nan``
    are left out; a fit needs two). ``"T_parent vs M (slow)"`` fits only the
    sizes whose ``T_parent`` exceeds the smallest value of the grid, plus the
    first size that reaches it.
    """
    out = {}

    def add(key, x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        good = ~np.isnan(y) & (y > 0)
        if good.sum() >= 2 and np.unique(x[good]).size >= 2:
            f = fit_power_law(x[good], y[good])
            out[key] = {"slope": f.slope, "prefactor": f.prefactor, "r2": f.r2, "n": f.n}

    for axis, rows in study.items():
        if not rows:
            continue
        x = [r[_x_of(axis)] for r in rows]
        for q in ("T_parent", "T_optimal", "log_odds2", "seconds_per_step"):
            add(f"{q} vs {axis}", x, [r[q] for r in rows])
        if axis == "M":
            T = np.array([r["T_parent"] for r in rows], dtype=float)
            if np.isfinite(T).any():
                low = np.nanmin(T)
                first = np.flatnonzero(T == low)[0]
                keep = (T > low) | (np.arange(T.size) == first)
                keep &= np.arange(T.size) <= first
                add("T_parent vs M (slow)", np.asarray(x)[keep], T[keep])
    if critical:
        add(f"M_crit vs N ({critical[0]['criterion']})", [r["N"] for r in critical], [r["M_crit"] for r in critical])
    return out


def cost_model(study: dict) -> dict[str, float]:
    """Least squares ``t / members = c + a n N + b M N`` over every timed size of a study.

    ``t`` is ``seconds_per_step`` (all members), ``n`` the training walks per
    member. Returns ``c_us`` (a fixed cost per member and step, microseconds),
    ``a_ns`` and ``b_ns`` (nanoseconds per attention entry and per positional
    entry) and ``max_rel_err`` (the largest relative deviation of a timed size
    from the fit; the fit minimises relative errors); ``nan`` when fewer than
    three sizes were timed.
    """
    rows = [r for rows in study.values() for r in rows if np.isfinite(r["member_seconds_per_step"])]
    if len(rows) < 3:
        return {"c_us": float("nan"), "a_ns": float("nan"), "b_ns": float("nan"), "max_rel_err": float("nan")}
    X = np.array([[1.0, r["n_train"] * r["N"], r["M"] * r["N"]] for r in rows], dtype=float)
    t = np.array([r["member_seconds_per_step"] for r in rows])
    coef, *_ = np.linalg.lstsq(X / t[:, None], np.ones_like(t), rcond=None)
    rel = np.abs(X @ coef - t) / t
    return {"c_us": float(coef[0] * 1e6), "a_ns": float(coef[1] * 1e9), "b_ns": float(coef[2] * 1e9),
            "max_rel_err": float(rel.max())}


def _fmt(x, digits: int = 3):
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return float("nan")
    if x == int(x) and abs(x) < 1e6:
        return int(x)
    return float(f"{x:.{digits}g}")


def table(study: dict, *, wall: bool = False) -> list[dict]:
    """Rounded rows for the chapter: sizes, steps (median [min-max], converged seeds), step-2 log-odds.

    ``wall=True`` adds the milliseconds per GD step (machine-dependent: print
    them in an ``nbval-ignore-output`` cell).
    """
    out = []
    for axis, rows in study.items():
        for r in rows:
            row = {"sweep": axis, "N": r["N"], "M": r["M"]}
            for q in ("T_parent", "T_optimal"):
                row[q] = _fmt(r[q])
                row[f"{q} range"] = f"{_fmt(r[q + '_min'])}-{_fmt(r[q + '_max'])}"
                row[f"{q} ok"] = f"{r[q + '_converged']}/{r['seeds']}"
            row["log_odds2"] = _fmt(r["log_odds2"])
            row["needed"] = _fmt(r["log_odds_needed"])
            if wall:
                row["ms/step"] = _fmt(1e3 * r["seconds_per_step"])
            out.append(row)
    return out


def critical_table(rows: list[dict]) -> list[dict]:
    """Rounded rows of :func:`~onelayer.studies.walks.scaling.critical.critical_M`."""
    return [{"N": r["N"], "criterion": r["criterion"], "M_crit": _fmt(r["M_crit"]),
             "range": f"{_fmt(r['M_crit_min'])}-{_fmt(r['M_crit_max'])}", "ok": f"{r['selected']}/{r['seeds']}",
             "ceil(N^1.5)": r["M_for_N"],
             "M_crit/N^1.5": _fmt(r["ratio"])} for r in rows]


def seed_slopes(x, per_size: list[list[float]]) -> list[float]:
    """One fitted power-law exponent per seed: ``per_size[i][b]`` is seed ``b``'s value at size ``x[i]``; a seed with a
    ``nan`` (never selected) at some size is fitted on its other sizes, and left out with fewer than two."""
    values = np.asarray(per_size, dtype=float)  # (sizes, seeds)
    x = np.asarray(x, dtype=float)
    out = []
    for b in range(values.shape[1]):
        good = np.isfinite(values[:, b]) & (values[:, b] > 0)
        if good.sum() >= 2:
            out.append(fit_power_law(x[good], values[good, b]).slope)
    return out


def seed_exponents(series: dict) -> dict[str, dict]:
    """For each named series (name -> ``(x, per_size)`` as :func:`seed_slopes` takes): the exponents fitted seed by
    seed, their number, mean and 95% t interval over seeds, and that mean and interval as a text."""
    out = {}
    for key, (x, per_size) in series.items():
        slopes = seed_slopes(x, per_size)
        mean, low, high = mean_interval(slopes)
        out[key] = {"slopes": slopes, "n": len(slopes), "mean": mean, "low": low, "high": high,
                    "text": f"{mean:.2f} [{low:.2f}, {high:.2f}] (mean over {len(slopes)} seeds, 95% t interval)"}
    return out
