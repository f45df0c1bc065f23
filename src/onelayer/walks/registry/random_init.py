"""Recipes of the chapter ``random_init``: Figures 6, 11, 12, 13 and the ordering, from the stored sweep."""

from __future__ import annotations

import functools
from pathlib import PurePath

import numpy as np

from ...registry import register
from ..settings import RANDOM_INIT_QUICK



@functools.lru_cache(maxsize=2)
def random_init_sweep(quick: bool = False) -> dict:
    """The sweep the random-initialisation recipes select from: the stored file, or (``quick``) a tiny live sweep."""
    from .. import random_init as ri

    if quick:
        return ri.sweep(normalizations=("keys_and_query",), readings=(("mean", 0.01), ("sum", 0.1)), seeds=(0,),
                        **RANDOM_INIT_QUICK)
    return ri.load()


def _rerun(run: dict, quick: bool) -> dict:
    """Run a stored setting again from scratch (the quick sweep is already live)."""
    from .. import random_init as ri

    return run if quick else ri.run_config(ri.RunConfig(**run["config"]))


def _closest_reading(data: dict) -> tuple:
    """``(normalize, reduction, lr)`` whose ``p = 1`` runs have the smallest mean :func:`table_distance` over seeds."""
    from .. import random_init as ri

    dist = {}
    for r in data["runs"]:
        c = r["config"]
        if c["p"] == 1.0:
            dist.setdefault((c["normalize"], c["reduction"], c["lr"]), []).append(ri.table_distance(r))
    score = {k: (np.mean(d) if np.all(np.isfinite(d)) else np.inf) for k, d in dist.items()}
    return min(score, key=score.get)


@register("walks-fig6", "Random init (sigma=0.01, eta=0.01, keys and query normalised): optimal predictions, KL and attention, p = 0.5 and 1 (paper's Figure 6)")
def _fig6(quick: bool):
    from .. import random_init as ri

    if quick:  # a tiny live run of the same setting
        runs = {f"p = {p:g}": ri.run_config(ri.RunConfig(p=p), **RANDOM_INIT_QUICK) for p in (0.5, 1.0)}
    else:  # the stored runs the chapter draws (seed 0 of the stored sweep)
        runs = {f"p = {p:g}": ri.find_run(random_init_sweep(False), p=p, normalize="keys_and_query", reduction="mean", lr=0.01)
                for p in (0.5, 1.0)}
    fig = ri.figure_curves(runs, title="keys and query normalised, mean loss, eta = 0.01 (the paper's numbers)")
    rows = [{"run": name, "step": int(t), **{k: r["curves"][k][i] for k in ri.RECORD_KEYS}}
            for name, r in runs.items() for i, t in enumerate(r["steps"])]
    return fig, {"setting": dict(ri.PAPER), "table": rows}


@register("walks-random-init-ordering", "Random init: which of p = 0.5 and p = 1 is learned first, for every normalisation, loss reduction, step size and seed")
def _random_init_ordering(quick: bool):
    from .. import random_init as ri

    data = random_init_sweep(quick)
    rows = ri.ordering_table(data)
    return ri.figure_ordering(rows), {"source": "quick live sweep" if quick else PurePath(ri.STORED).name,
                                      "paper_pattern_count": sum(r["paper_pattern"] for r in rows), "table": rows}


@register("walks-fig11", "Random init, p=0.5: V over training and the final attention of the run that attends most to the parent (paper's Figure 11)")
def _fig11(quick: bool):
    from .. import random_init as ri

    data = random_init_sweep(quick)
    half = [r for r in data["runs"] if r["config"]["p"] == 0.5]
    learned = [r for r in half if r["curves"]["optimal_fraction"][-1] >= 0.95] or half
    run = _rerun(max(learned, key=lambda r: r["curves"]["parent_attention"][-1]), quick)
    return ri.figure_value_snapshots(run), {"config": run["config"], "final": {k: v[-1] for k, v in run["curves"].items()},
                                            "profile": run["profile"]}


def _closest_run(quick: bool) -> dict:
    from .. import random_init as ri

    data = random_init_sweep(quick)
    normalize, reduction, lr = _closest_reading(data)
    return _rerun(ri.find_run(data, p=1.0, normalize=normalize, reduction=reduction, lr=lr, seed=0), quick)


@register("walks-fig12", "Random init, p=1: V at steps 100, 400, 700, 1000 under the reading closest to the authors' table (paper's Figure 12)")
def _fig12(quick: bool):
    from .. import random_init as ri

    run = _closest_run(quick)
    return ri.figure_value_snapshots(run), {"config": run["config"], "V": run["V"]}


@register("walks-fig13", "Random init, p=1: weighted average token X S of one sequence with its variance, ours against the authors' table (paper's Figure 13)")
def _fig13(quick: bool):
    from .. import random_init as ri

    run = _closest_run(quick)
    rows = []
    for step, entry in sorted(run["table"].items(), key=lambda kv: int(kv[0])):
        authors = ri.AUTHORS_TABLE.get(int(step))
        for k, (ex, var) in enumerate(zip(entry["example"], entry["variance"])):
            rows.append({"step": int(step), "coordinate": k + 1, "example": ex, "variance": var,
                         "authors_example": authors[0][k] if authors else None,
                         "authors_variance": authors[1][k] if authors else None})
    return ri.figure_weighted_token(run), {"config": run["config"], "table_distance": ri.table_distance(run), "table": rows}


@register("walks-fig6-closest-reading", "Random init: Figure 6 under the reading closest to the authors' table and with a 3x larger step (seed 0)")
def _fig6_closest(quick: bool):
    from .. import random_init as ri

    data = random_init_sweep(quick)
    normalize, reduction, lr = _closest_reading(data)
    readings = [(reduction, lr)] + ([] if quick else [("mean", 3.0)])
    runs = {f"p = {p:g}, {red}, lr={step:g}": _rerun(ri.find_run(data, p=p, normalize=normalize, reduction=red, lr=step), quick)
            for p in (0.5, 1.0) for red, step in readings}
    fig = ri.figure_curves(runs, title=f"Figure 6 under the closest reading and with a 3x larger step ({normalize}, seed 0)")
    return fig, {"closest_reading": {"normalize": normalize, "reduction": reduction, "lr": lr},
                 "final": {name: {k: v[-1] for k, v in r["curves"].items()} for name, r in runs.items()}}


@register("walks-random-init-explorer-default", "Random init: the sweep explorer's default state: stored curves of keys and query normalised, mean loss, lr=0.01, seed 0")
def _random_init_explorer_default(quick: bool):
    from .. import random_init as ri

    data = random_init_sweep(quick)
    normalize, reduction, lr, seed = "keys_and_query", "mean", 0.01, 0  # the explorer's defaults
    runs = {f"p = {p:g}": ri.find_run(data, p=p, normalize=normalize, reduction=reduction, lr=lr, seed=seed) for p in data["meta"]["ps"]}
    rows = [{"run": name, "step": int(t), **{k: r["curves"][k][i] for k in ri.RECORD_KEYS}}
            for name, r in runs.items() for i, t in enumerate(r["steps"])]
    return ri.sweep_explorer(data), {"source": "quick live sweep" if quick else PurePath(ri.STORED).name, "normalize": normalize,
                                     "reduction": reduction, "lr": lr, "seed": seed, "table": rows}
