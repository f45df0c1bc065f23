"""The heads x depth sweep with several seeds per cell, and where multi-head full models fail.

:func:`seeded_sweep` repeats :func:`onelayer.trees.forward.limits.run_config`
(the stored sweep's protocol: learning rate 2, mean normalisation, batch 256,
small Gaussian initialisation 0.01 for full heads, zero for the structured
two-head model, training on to twice the convergence time) over seeds and
reports per cell the median and range of the steps to converge and of the
greedy whole-path accuracy on random test trees. :func:`failure_profile`
splits a trained model's test accuracy by goal depth and by tree size, which
locates where the 2-4 full-head models fail.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...validation import check_int, check_int_sequence
from ..shared.embeddings import one_hot_embeddings
from .layout import random_forward_batch
from .limits import architecture, params_from_json, run_config
from .model import greedy_decode

__all__ = ["seeded_sweep", "failure_profile", "cell_summary"]


def failure_profile(row: dict, *, test_trees: int = 512, max_depth: int = 6, seed: int = 70_000) -> dict:
    """Greedy whole-path accuracy of a stored run (``keep_params=True``) by goal depth and by tree size.

    Returns ``{"by_goal_depth": {depth: (count, acc)}, "by_size": {"<=15"|"16-30"|">30": (count, acc)},
    "beyond_training_depth": acc of goals deeper than the training depth m, "within": acc of the others}``.
    """
    if not isinstance(row, dict):
        raise TypeError("row must be a run dict from run_config(keep_params=True)")
    A = one_hot_embeddings(row["S"])
    arch = architecture(row["arch"])
    batch, trees = random_forward_batch(row["S"], check_int("test_trees", test_trees, low=1),
                                        np.random.default_rng(check_int("seed", seed, low=0)),
                                        max_depth=check_int("max_depth", max_depth, low=1))
    ok = greedy_decode(params_from_json(row), arch, A, batch).answer_correct.numpy()
    depth = batch.goal_depth.numpy() if hasattr(batch.goal_depth, "numpy") else np.asarray(batch.goal_depth)
    size = np.array([t.n for t in trees])
    by_depth = {int(k): (int((depth == k).sum()), float(ok[depth == k].mean())) for k in np.unique(depth)}
    bins = {"<=15": size <= 15, "16-30": (size > 15) & (size <= 30), ">30": size > 30}
    by_size = {k: (int(v.sum()), float(ok[v].mean())) for k, v in bins.items() if v.any()}
    deep = depth > row["m"]
    return {"by_goal_depth": by_depth, "by_size": by_size,
            "beyond_training_depth": float(ok[deep].mean()) if deep.any() else float("nan"),
            "within": float(ok[~deep].mean()) if (~deep).any() else float("nan")}


def cell_summary(rows: Sequence[dict]) -> dict:
    """Median, min and max of ``steps_to_converge`` (converged runs) and ``test_path_accuracy`` over seeds."""
    conv = [r["steps_to_converge"] for r in rows if r["steps_to_converge"] is not None]
    acc = [r["test_path_accuracy"] for r in rows]
    return {"seeds": len(rows), "converged": len(conv),
            "steps_median": float(np.median(conv)) if conv else float("nan"),
            "steps_range": (min(conv), max(conv)) if conv else None,
            "acc_median": float(np.median(acc)), "acc_range": (min(acc), max(acc))}


def seeded_sweep(*, depths: Sequence[int] = (2,), archs: Sequence[str] = ("two_head", "full1", "full2", "full3", "full4"),
                 seeds: Sequence[int] = (0, 1, 2), budget: int = 1000, test_trees: int = 256,
                 profile: bool = True) -> list[dict]:
    """Every (architecture, depth, seed) with :func:`~onelayer.trees.forward.limits.run_config` (``S = 2^(m+1) + 9``); one dict per cell.

    Each cell has ``arch, m`` and :func:`cell_summary` fields, the per-seed
    ``runs`` (steps to converge, test accuracy) and, with ``profile``, the
    per-seed :func:`failure_profile` (``beyond_training_depth``, ``within``).
    The default (``m = 2``, 15 runs) takes about a minute on one core; the
    full sweep (``m = 2..5``, five seeds) would take about 5 x 45 minutes.
    """
    depths = check_int_sequence("depths", depths, low=1, high=6)
    seeds = check_int_sequence("seeds", seeds, low=0)
    budget = check_int("budget", budget, low=1)
    cells = []
    for m in depths:
        S = 2 ** (m + 1) + 9
        for name in archs:
            architecture(name)
            rows = [run_config(name, m=m, S=S, steps=budget, lr=2.0, init_scale=0.0 if name == "two_head" else 0.01,
                               seed=s, record_every=25, test_trees=test_trees, stop_at_convergence=True,
                               keep_params=profile) for s in seeds]
            cell = {"arch": name, "m": m, **cell_summary(rows),
                    "runs": [{"seed": r["seed"], "steps_to_converge": r["steps_to_converge"],
                              "test_path_accuracy": r["test_path_accuracy"]} for r in rows]}
            if profile:
                for run, r in zip(cell["runs"], rows):
                    p = failure_profile(r, test_trees=test_trees)
                    run["beyond_training_depth"], run["within"] = p["beyond_training_depth"], p["within"]
            cells.append(cell)
    return cells
