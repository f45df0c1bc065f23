"""The heads x depth runs with several seeds per cell, and where multi-head full models fail.

Two ways to run it:

* :func:`seeded_grid` runs a small grid live (the chapter's ``m = 2`` cells).
* The study ``trees-forward-seeds`` (:data:`STUDY`; ``python -m onelayer study trees-forward-seeds --jobs 2``)
  repeats the stored heads x depth runs of :mod:`onelayer.studies.trees.forward_limits` cell by
  cell with the *same* protocol (:func:`~onelayer.studies.trees.forward_limits.heads_depth_kwargs`)
  for further seeds (1 and 2; seed 0 is the limits study itself), one member per (cell, seed), and
  stores every run with its :func:`failure_profile` (the parameters are not stored). About half an
  hour of one core per seed, most of it at ``m = 5``.

:func:`seeded_grid` repeats :func:`onelayer.studies.trees.forward_limits.run_config`
(the limits study's protocol: learning rate 2, mean normalisation, batch 256,
small Gaussian initialisation 0.01 for full heads, zero for the structured
two-head model, training on to twice the convergence time) over seeds and
reports per cell the median and range of the steps to converge and of the
greedy whole-path accuracy on random test trees. :func:`failure_profile`
splits a trained model's test accuracy by goal depth and by tree size, which
locates where the 2-4 full-head models fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...validation import check_bool, check_int, check_int_sequence
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.forward.decoding import greedy_decode
from ...trees.forward.layout import random_forward_batch
from ..runner import Member, Study
from .forward_limits import architecture, heads_depth_cells, heads_depth_kwargs, params_from_json, run_config
from .stored_study import float64

__all__ = ["seeded_grid", "failure_profile", "cell_summary", "stored_run", "Settings", "members", "run_member",
           "summarize", "STUDY", "stored_cells", "all_seeds", "depth_offset_profile", "profile_rows", "cell_rows"]


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


def seeded_grid(*, depths: Sequence[int] = (2,), archs: Sequence[str] = ("two_head", "full1", "full2", "full3", "full4"),
                 seeds: Sequence[int] = (0, 1, 2), budget: int = 1000, test_trees: int = 256,
                 profile: bool = True) -> list[dict]:
    """Every (architecture, depth, seed) with :func:`~onelayer.studies.trees.forward_limits.run_config` (``S = 2^(m+1) + 9``); one dict per cell.

    Each cell has ``arch, m`` and :func:`cell_summary` fields, the per-seed
    ``runs`` (steps to converge, test accuracy) and, with ``profile``, the
    per-seed :func:`failure_profile` (``beyond_training_depth``, ``within``).
    The default (``m = 2``, 15 runs) takes about a minute on one core; the
    full grid (``m = 2..5``, five seeds) would take about 5 x 45 minutes.
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


def _profile_json(p: dict) -> dict:
    return {"by_goal_depth": {str(k): list(v) for k, v in p["by_goal_depth"].items()},
            "by_size": {k: list(v) for k, v in p["by_size"].items()},
            "beyond_training_depth": p["beyond_training_depth"], "within": p["within"]}


def stored_run(name: str, m: int, seed: int, *, quick: bool = False) -> dict:
    """One run of the heads x depth protocol at ``seed``, with its failure profile on its own test trees.

    The profile uses the run's test trees (``test_trees`` and seed ``70_000 + seed``, as
    :func:`~onelayer.studies.trees.forward_limits.run_config`), so its counts add up to the test set
    and its accuracies average to ``test_path_accuracy``. The parameters are dropped.
    """
    kwargs = heads_depth_kwargs(name, m, quick=check_bool("quick", quick), seed=seed)
    row = run_config(name, keep_params=True, **kwargs)
    row["profile"] = _profile_json(failure_profile(row, test_trees=kwargs["test_trees"], max_depth=row["test_max_depth"],
                                                   seed=70_000 + kwargs["seed"]))
    del row["params"]
    return row


@dataclass(frozen=True)
class Settings:
    """The study's settings: the seeds run in every heads x depth cell (seed 0 is the limits study's), and whether the
    cells are the quick protocol's (:func:`~onelayer.studies.trees.forward_limits.heads_depth_kwargs`)."""

    seeds: tuple[int, ...] = (1, 2)
    quick: bool = False


def _key(name: str, m: int, seed: int) -> str:
    return f"m{m}-{name.replace('_', '-')}-s{seed:03d}"


def members(settings: Settings) -> list[Member]:
    """One member per (cell, seed), e.g. ``m4-full2-s001``; cost: the cell's step budget times its tree size."""
    seeds = check_int_sequence("seeds", settings.seeds, low=0)
    return [Member(_key(name, m, seed), {"arch": name, "m": m, "seed": seed},
                   cost=float(heads_depth_kwargs(name, m, quick=settings.quick)["steps"] * 2 ** (m + 1)))
            for name, m in heads_depth_cells(quick=settings.quick) for seed in seeds]


def run_member(settings: Settings, member: Member) -> dict:
    """One run (:func:`stored_run`) without its wall seconds."""
    f = member.fields
    with float64():
        row = stored_run(f["arch"], f["m"], f["seed"], quick=settings.quick)
    del row["seconds"]
    return row


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: ``seeds`` and every run, sorted by training depth, architecture and seed."""
    return {"seeds": list(settings.seeds),
            "runs": sorted((r["result"] for r in records), key=lambda r: (r["m"], r["arch"], r["seed"]))}


STUDY = Study(name="trees-forward-seeds", stored="trees/data/forward_seeds.json", kind="trees-forward-seeds",
              settings=Settings(), quick=Settings(seeds=(1,), quick=True), members=members, run_member=run_member,
              summarize=summarize,
              description="Trees II: the heads x depth runs for seeds 1 and 2, with each run's failure profile")


def stored_cells(runs: Sequence[dict]) -> list[dict]:
    """Group stored runs by (architecture, m) in the limits study's order: one :func:`cell_summary` dict per cell with its runs."""
    cells: dict[tuple[str, int], list[dict]] = {}
    for r in runs:
        cells.setdefault((r["arch"], r["m"]), []).append(r)
    out = []
    for (name, m), rows in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0] != "two_head", kv[0][0])):
        rows = sorted(rows, key=lambda r: r["seed"])
        out.append({"arch": name, "m": m, **cell_summary(rows), "runs": rows})
    return out


def all_seeds(limits: dict, seeded: dict) -> list[dict]:
    """The heads x depth runs of every seed: seed 0 from the limits study (no profile), the others from this study.

    ``limits`` is the limits study's summary (with ``heads_depth``), ``seeded`` this study's (with ``runs``).
    Raises ``ValueError`` if the seeded file repeats seed 0 or covers cells the limits study does not.
    """
    if not isinstance(limits, dict) or "heads_depth" not in limits:
        raise TypeError("limits must be the limits study's summary (with 'heads_depth')")
    if not isinstance(seeded, dict) or "runs" not in seeded:
        raise TypeError("seeded must be this study's summary (with 'runs')")
    base = [{**r, "profile": None} for r in limits["heads_depth"]]
    cells = {(r["arch"], r["m"]) for r in base}
    for r in seeded["runs"]:
        if r["seed"] == 0:
            raise ValueError("seeded runs must not repeat seed 0 (the limits study has it)")
        if (r["arch"], r["m"]) not in cells:
            raise ValueError(f"seeded run {r['arch']} m={r['m']} is not a cell of the limits study")
    return base + list(seeded["runs"])


def depth_offset_profile(runs: Sequence[dict], arch: str, *, converged_only: bool = True) -> dict[int, tuple[int, float]]:
    """Test whole-path accuracy of ``arch`` by ``goal depth - m``, pooled over every run with a profile.

    Returns ``{offset: (count, accuracy)}``; offsets ``<= 0`` are goals no deeper than the training trees.
    With ``converged_only`` (default) runs that never fit their training trees are left out: the
    question is how a fitted model generalises.
    """
    check_bool("converged_only", converged_only)
    counts: dict[int, list[float]] = {}
    for r in runs:
        if r["arch"] != arch or not r.get("profile") or (converged_only and r["steps_to_converge"] is None):
            continue
        for depth, (n, acc) in r["profile"]["by_goal_depth"].items():
            c = counts.setdefault(int(depth) - r["m"], [0, 0.0])
            c[0] += n
            c[1] += n * acc
    return {k: (n, hits / n) for k, (n, hits) in sorted(counts.items())}


def _whole(x: float):
    return int(x) if float(x).is_integer() else x


def cell_rows(cells: Sequence[dict]) -> list[dict]:
    """Table rows of :func:`stored_cells`: seeds, converged runs, steps to converge and test accuracy (median, min, max)."""
    rows = []
    for c in cells:
        lo, hi = c["steps_range"] if c["steps_range"] else (None, None)
        rows.append({"arch": c["arch"], "m": c["m"], "seeds": c["seeds"], "converged": c["converged"],
                     "steps median": None if c["converged"] == 0 else _whole(c["steps_median"]), "steps min": lo, "steps max": hi,
                     "test acc median": c["acc_median"], "test acc min": c["acc_range"][0], "test acc max": c["acc_range"][1]})
    return rows


def profile_rows(runs: Sequence[dict], archs: Sequence[str] = ("full2", "full3", "full4")) -> list[dict]:
    """Per (architecture, m): test accuracy pooled over the runs with a profile, by goal depth and by tree size.

    Keys: ``arch, m, runs``, ``"goal depth <= m"``, ``"goal depth > m"`` and one key per size bin of
    :func:`failure_profile` (``"size <=15"``, ``"size 16-30"``, ``"size >30"``); ``None`` where no test
    tree falls in the group. The training trees have ``2^(m+1) - 1`` nodes (7, 15, 31, 63 for m = 2..5).
    """
    archs = [architecture(a) and a for a in archs]
    out = []
    for m in sorted({r["m"] for r in runs}):
        for arch in archs:
            sub = [r for r in runs if r["arch"] == arch and r["m"] == m and r.get("profile")]
            if not sub:
                continue
            row = {"arch": arch, "m": m, "runs": len(sub)}
            groups: dict[str, list[float]] = {}
            for r in sub:
                for d, (n, acc) in r["profile"]["by_goal_depth"].items():
                    g = groups.setdefault("goal depth <= m" if int(d) <= m else "goal depth > m", [0, 0.0])
                    g[0] += n
                    g[1] += n * acc
                for b, (n, acc) in r["profile"]["by_size"].items():
                    g = groups.setdefault(f"size {b}", [0, 0.0])
                    g[0] += n
                    g[1] += n * acc
            for key in ("goal depth <= m", "goal depth > m", "size <=15", "size 16-30", "size >30"):
                n, hits = groups.get(key, (0, 0.0))
                row[key] = hits / n if n else None
            out.append(row)
    return out
