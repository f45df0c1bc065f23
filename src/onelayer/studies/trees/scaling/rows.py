"""The rows of the trees scaling study: population steps joined with the stored sampled runs, the forward limits study, the printed table."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ....paths import data_path
from ....validation import check_choice
from ..scaling.criteria import Criterion, _criterion, _sizes, nodes, tokens
from ..scaling.runs import population_run
from ..scaling.stored import STUDY, load_forward_limits, load_stored

__all__ = ["population_rows", "sampled_rows", "scaling_rows", "trajectory_gaps", "forward_steps_vs_depth", "scaling_table"]


def population_rows(sizes="depth", *, lr: float = 1.0, criterion: Criterion | str = Criterion(),
                    max_steps: int = 100_000) -> list[dict]:
    """Steps to converge of the exact population recursion for each size (about 2 s for the depth grid).

    ``sizes``: ``"depth"``, ``"labels"`` or a list of ``(m, S)`` pairs. Rows:
    ``m, S, n_nodes, tokens, population_steps`` (float, ``nan`` if not
    reached), ``population_seconds`` (wall time of the run).
    """
    crit = _criterion(criterion)
    rows = []
    for m, S in _sizes(sizes):
        run = population_run(m, S, lr=lr, max_steps=max_steps, stop=crit)
        rows.append({"m": m, "S": S, "n_nodes": nodes(m), "tokens": tokens(m),
                     "population_steps": float(crit.crossing(run["steps"], run)),
                     "population_seconds": run["seconds"]})
    return rows


def sampled_rows(stored: Mapping, grid: str, *, criterion: Criterion | str = Criterion()) -> list[dict]:
    """Steps to converge of the stored sampled runs of one grid, under ``criterion`` (any threshold).

    Rows: ``m, S, n_nodes, tokens, sampled_steps`` (per seed, ``nan`` if
    never within the budget), ``sampled_median/min/max``, ``sampled_converged``
    (number of seeds that converged), ``budget``.
    """
    if not isinstance(stored, Mapping) or "runs" not in stored:
        raise ValueError("stored must be the dict of load_stored() / compute() (it has no 'runs')")
    check_choice("grid", grid, ("depth", "labels"))
    crit = _criterion(criterion)
    rows = []
    for run in stored["runs"][grid]:
        rec = {k: np.asarray(run[k], dtype=float).T for k in ("correct_weight", "accuracy", "loss")}
        steps = crit.crossing(np.asarray(run["steps"]), rec)
        ok = steps[~np.isnan(steps)]
        rows.append({
            "m": run["m"], "S": run["S"], "n_nodes": run["n_nodes"], "tokens": run["tokens"],
            "sampled_steps": steps.tolist(),
            "sampled_median": float(np.median(steps)) if ok.size == steps.size else float("nan"),
            "sampled_min": float(ok.min()) if ok.size else float("nan"),
            "sampled_max": float(steps.max()) if ok.size == steps.size else float("nan"),
            "sampled_converged": int(ok.size), "seeds": len(run["seeds"]), "budget": run["budget"],
        })
    return rows


def scaling_rows(grid: str = "depth", *, sizes=None, stored: Mapping | None = None,
                 criterion: Criterion | str = Criterion(), lr: float = 1.0, population: Sequence[Mapping] | None = None) -> list[dict]:
    """The chapter's table of one grid: population steps (live) joined with the stored sampled runs.

    About 2 s for ``"depth"`` (``m = 2..6``) and 1 s for ``"labels"``
    (``S = 15..255``). ``sizes`` optionally replaces the grid's sizes
    (``(m, S)`` pairs); ``stored=None`` reads the stored study if it exists
    (the stored study ``trees-scaling``; otherwise there are no sampled columns). Adds ``ratio`` = sampled median /
    population steps where both exist. ``population``: the grid's :func:`population_rows`, already computed (the
    stored study ``trees-scaling-population``), instead of running the recursion here.
    """
    check_choice("grid", grid, ("depth", "labels"))
    crit = _criterion(criterion)
    if stored is None and data_path(STUDY.stored).exists():
        stored = load_stored()
    rows = ([dict(r) for r in population] if population is not None
            else population_rows(grid if sizes is None else sizes, lr=lr, criterion=crit))
    if stored is not None:
        if stored.get("lr") != lr:
            raise ValueError(f"the stored sampled runs use lr={stored.get('lr')}; pass lr={stored.get('lr')} or stored=None")
        by_size = {(r["m"], r["S"]): r for r in sampled_rows(stored, grid, criterion=crit)}
        for row in rows:
            extra = by_size.get((row["m"], row["S"]))
            if extra is not None:
                row.update({k: v for k, v in extra.items() if k.startswith("sampled") or k in ("seeds", "budget")})
                row["ratio"] = row["sampled_median"] / row["population_steps"]
    return rows


def trajectory_gaps(stored: Mapping, grid: str = "depth") -> list[dict]:
    """How closely the stored SGD runs follow the population recursion along the whole run (about 1 s per grid).

    For each stored size, the population recursion is run to the stored budget
    and compared at the recorded steps: ``max_weight_gap`` is the largest
    ``|attention on the correct edge (SGD seed) - (population)|`` over the
    recorded steps and seeds (``seed_max_gaps``: the same for each seed; ``at_step``: where; ``population_weight_there``:
    the population value there); ``final_weight`` is the population value at
    the budget.
    """
    if not isinstance(stored, Mapping) or "runs" not in stored:
        raise ValueError("stored must be the dict of load_stored() / compute() (it has no 'runs')")
    check_choice("grid", grid, ("depth", "labels"))
    rows = []
    for run in stored["runs"][grid]:
        pop = population_run(run["m"], run["S"], lr=stored["lr"], max_steps=run["budget"])
        steps = np.asarray(run["steps"])
        sampled = np.asarray(run["correct_weight"], dtype=float)  # (seeds, T)
        gap = np.abs(sampled - pop["correct_weight"][steps][None, :])
        worst = np.unravel_index(np.argmax(gap), gap.shape)
        rows.append({"m": run["m"], "S": run["S"], "max_weight_gap": float(gap.max()),
                     "seed_max_gaps": [float(v) for v in gap.max(axis=1)],
                     "at_step": int(steps[worst[1]]), "population_weight_there": float(pop["correct_weight"][steps[worst[1]]]),
                     "final_weight": float(pop["correct_weight"][-1])})
    return rows


def forward_steps_vs_depth(data: Mapping | None = None, *, arch: str = "two_head") -> list[dict]:
    """Steps to converge against depth of one architecture in the stored forward limits study (no recomputation).

    What the file holds (:mod:`onelayer.studies.trees.forward_limits`): one run per
    (architecture, depth) with seed 0, mini-batch SGD (batch 256), learning
    rate 2, mean normalisation, ``m = 2..5`` with ``S = 2^(m+1) + 9``; a run
    has converged at the first recorded step (every 25 steps for ``m <= 3``, 50
    beyond) at which at least 99% of the teacher-forced chains of 256 fixed
    training trees are exactly right. The two-head model converged at
    ``m = 2, 3, 4`` and not within 3,000 steps (nor, in a longer run stored
    separately, 8,000) at ``m = 5``: that point is censored, its
    ``steps_to_converge`` is ``nan`` and ``lower_bound`` is the budget.

    Parameters
    ----------
    data:
        The loaded JSON (default: :func:`~onelayer.studies.trees.scaling.stored.load_forward_limits`).
    arch:
        ``"two_head"`` (default) or a full-head model ``"full1".."full4"``.

    Returns
    -------
    list of dict
        ``m, S, n_nodes, steps_to_converge, lower_bound, record_every, lr, source``.
    """
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a string, got {type(arch).__name__}")
    if data is None:
        data = load_forward_limits()
    if not isinstance(data, Mapping) or "heads_depth" not in data:
        raise ValueError("data must be the forward limits study (a dict with 'heads_depth')")
    runs = [r for r in data["heads_depth"] if r["arch"] == arch]
    if not runs:
        names = sorted({r["arch"] for r in data["heads_depth"]})
        raise ValueError(f"arch must be one of {names}, got {arch!r}")
    extra = {r["m"]: r for r in data.get("heads_depth_extra", []) if r["arch"] == arch}
    rows = []
    for r in sorted(runs, key=lambda r: r["m"]):
        source = "heads_depth"
        if r["steps_to_converge"] is None and r["m"] in extra:
            r, source = extra[r["m"]], "heads_depth_extra"
        conv = r["steps_to_converge"]
        rows.append({"m": r["m"], "S": r["S"], "n_nodes": nodes(r["m"]),
                     "steps_to_converge": float("nan") if conv is None else float(conv),
                     "lower_bound": float(r["budget"]) if conv is None else float("nan"),
                     "record_every": int(r["steps"][1] - r["steps"][0]), "lr": r["lr"], "source": source})
    return rows


def _sig(x, digits=4):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(f"{x:.{digits}g}")


def scaling_table(rows: Sequence[Mapping]) -> list[dict]:
    """Rounded rows for printing: size, population steps, sampled median [min, max], ratio.

    Every row has the same columns (``None`` where a size has no sampled runs).
    """
    sampled = any("sampled_median" in r for r in rows)
    table = []
    for r in rows:
        row = {"m": r["m"], "S": r["S"], "n": r["n_nodes"], "N": r["tokens"],
               "population": None if math.isnan(r["population_steps"]) else int(r["population_steps"])}
        if sampled:
            has = "sampled_median" in r
            row["SGD median"] = _sig(r["sampled_median"]) if has else None
            row["SGD min"] = _sig(r["sampled_min"]) if has else None
            row["SGD max"] = _sig(r["sampled_max"]) if has else None
            row["converged"] = f"{r['sampled_converged']}/{r['seeds']}" if has else None
            row["SGD / population"] = _sig(r.get("ratio"), 4) if has else None
        table.append(row)
    return table
