"""The stored sampled runs of the trees scaling study: the study ``trees-scaling`` and reading it.

A member is one size of one grid (``depth``: ``m = 2..5`` with ``S = n``; ``labels``: ``m = 3`` with ``S = 15..127``):
eight SGD runs (seeds ``0..7``) trained together in one
:func:`~onelayer.studies.trees.scaling.runs.sampled_run` call, as the first script did, with a budget of
``budget_factor`` times the largest population crossing step of the three default criteria (stored as
``population_crossings``) and fine record windows around them. The member's result is that call's dict without its
wall-clock ``seconds`` and ``seconds_per_step`` (a measurement of the machine, not of the runs: the study's provenance
keeps its wall time, and the adopted file keeps the first script's); no chapter reads them.

``python -m onelayer study trees-scaling`` runs it (about 15 minutes on one core, ``--quick``: two tiny sizes,
seconds); :func:`load_stored` gives it in the layout of the first script's file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import forward_limits as limits
from ...registry import load
from ...runner import Member, Study
from ..scaling.criteria import _DEFAULTS, LABEL_DEPTH, SAMPLED_DEPTHS, SAMPLED_LABEL_SIZES, nodes
from ..scaling.runs import population_run, sampled_run

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "FORWARD_LIMITS", "load_stored", "compute",
           "load_forward_limits"]

#: The stored forward heads x depth runs, inside the data directory (:data:`onelayer.studies.trees.forward_limits.STORED`).
FORWARD_LIMITS = limits.STORED


@dataclass(frozen=True)
class Settings:
    """The sizes ``(m, S)`` of the two grids, the seeds trained together per size, SGD's ``lr``, ``batch_size`` and
    ``protocol``, the budget factor over the population crossings and the record points of
    :func:`~onelayer.studies.trees.scaling.runs.sampled_run`."""

    depth_sizes: tuple[tuple[int, int], ...] = tuple((m, nodes(m)) for m in SAMPLED_DEPTHS)
    label_sizes: tuple[tuple[int, int], ...] = tuple((LABEL_DEPTH, S) for S in SAMPLED_LABEL_SIZES)
    seeds: tuple[int, ...] = tuple(range(8))
    lr: float = 1.0
    batch_size: int = 256
    protocol: str = "sgd"
    budget_factor: float = 1.5
    record_points: int = 100


#: ``--quick``: one tiny size per grid, two seeds, batches of 16.
QUICK = Settings(depth_sizes=((2, 7),), label_sizes=((2, 9),), seeds=(0, 1), batch_size=16, record_points=20)


def members(settings: Settings) -> list[Member]:
    """One member per grid and size, ``depth-m2-S007`` ...; cost hint ``S * n`` (the larger sizes take far longer)."""
    return [Member(key=f"{grid}-m{m}-S{S:03d}", fields={"grid": grid, "m": m, "S": S}, cost=float(S * nodes(m)))
            for grid, sizes in (("depth", settings.depth_sizes), ("labels", settings.label_sizes)) for m, S in sizes]


def _population_crossings(m: int, S: int, lr: float) -> list[float]:
    """Population steps of the three default criteria (``nan`` for one not met within twice the attention crossing)."""
    first = population_run(m, S, lr=lr, stop=_DEFAULTS[0])
    run = population_run(m, S, lr=lr, max_steps=2 * int(first["steps"][-1]) + 10)
    return [float(c.crossing(run["steps"], run)) for c in _DEFAULTS]


def run_member(settings: Settings, member: Member) -> dict:
    s, m, S = settings, member.fields["m"], member.fields["S"]
    focus = _population_crossings(m, S, s.lr)
    steps = int(math.ceil(s.budget_factor * np.nanmax(focus)))
    run = sampled_run(m, S, steps=steps, seeds=s.seeds, lr=s.lr, batch_size=s.batch_size, protocol=s.protocol,
                      record_points=s.record_points, focus=focus)
    for wall in ("seconds", "seconds_per_step"):
        del run[wall]
    run["population_crossings"] = dict(zip([c.describe() for c in _DEFAULTS], focus))
    return run


def _grids(records: list[dict]) -> dict[str, list[dict]]:
    runs: dict[str, list[dict]] = {"depth": [], "labels": []}
    for r in sorted(records, key=lambda r: (r["fields"]["m"], r["fields"]["S"])):
        runs[r["fields"]["grid"]].append(r["result"])
    return {grid: rows for grid, rows in runs.items() if rows}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per grid and size, the budget and the steps at which each seed crossed each default criterion."""
    return {grid: [{"m": r["m"], "S": r["S"], "budget": r["budget"], "crossings": r["crossings"]} for r in rows]
            for grid, rows in _grids(records).items()}


STUDY = Study(name="trees-scaling", stored="trees/data/scaling.json", kind="trees-scaling-sweep", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Trees: steps to converge against depth and number of labels (eight SGD seeds per size)")


def _layout(settings: dict, records: list[dict]) -> dict:
    """The first script's layout: the shared settings and ``runs``: grid -> one run per size, by ``m`` then ``S``."""
    return {"quick": False, **{k: settings[k] for k in ("lr", "batch_size", "protocol", "seeds", "budget_factor")},
            "runs": _grids(records)}


def load_stored(path=None) -> dict:
    """The stored study (``path``: another file of it) in the first script's layout: ``lr``, ``batch_size``,
    ``protocol``, ``seeds``, ``budget_factor`` and ``runs`` (``{"depth": [...], "labels": [...]}``, one dict of
    :func:`~onelayer.studies.trees.scaling.runs.sampled_run` per size, with its ``population_crossings``)."""
    data = load(STUDY.name, path=path)
    return {**_layout(data["settings"], data["members"]), "quick": data["quick"]}


def compute(settings: Settings = QUICK) -> dict:
    """Run every member of ``settings`` here and now (the chapters' quick mode: :data:`QUICK`, seconds) and return
    them in :func:`load_stored`'s layout."""
    from dataclasses import asdict

    records = [{"fields": dict(m.fields), "result": run_member(settings, m)} for m in members(settings)]
    return {**_layout(asdict(settings), records), "quick": settings == QUICK}


def load_forward_limits(path=None) -> dict:
    """The stored forward heads x depth runs (:func:`onelayer.studies.trees.forward_limits.load_stored`)."""
    return limits.load_stored(path)
