"""The scaling chapter's trees half, stored: the study ``trees-scaling-population``.

The chapter's backward rows join the exact population recursion of each size
(:func:`~onelayer.studies.trees.scaling.rows.population_rows`) with the stored SGD runs of ``trees-scaling``, compares
those runs with the population curve along the whole run
(:func:`~onelayer.studies.trees.scaling.rows.trajectory_gaps`) and measures the seconds per step
(:func:`~onelayer.studies.trees.scaling.runs.step_times`). These are deterministic readings (the seconds aside) that
took most of the chapter's execution, so they are stored once and loaded.

Members: ``population-depth`` and ``population-labels`` (the rows of each grid, without their wall times),
``gaps-depth`` (the trajectory gaps of the depth grid, from the stored ``trees-scaling`` runs) and ``times-depth``
(the measured seconds per step: a measured field, stored with the member and never compared).
``python -m onelayer study trees-scaling-population`` runs it (about ten seconds on one core).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...registry import load as load_study
from ...runner import Member, Study
from .rows import population_rows, trajectory_gaps
from .runs import step_times
from .stored import load_stored

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]


@dataclass(frozen=True)
class Settings:
    """The step size of the population recursion and the grids (``"depth"``: m = 2..6; ``"labels"``: S = 15..255)."""

    lr: float = 1.0
    grids: tuple[str, ...] = ("depth", "labels")


#: ``--quick``: the same (the grids are small; the gaps need the stored ``trees-scaling`` runs).
QUICK = Settings()


def members(settings: Settings) -> list[Member]:
    """The population rows of each grid, the depth grid's trajectory gaps and its seconds per step."""
    return ([Member(f"population-{g}", {"kind": "population", "grid": g}) for g in settings.grids]
            + [Member("gaps-depth", {"kind": "gaps", "grid": "depth"}), Member("times-depth", {"kind": "times"})])


def run_member(settings: Settings, member: Member) -> dict:
    """``{"rows": ...}`` of the member's reading (``times-depth``: ``{"times": ...}``, a measured field)."""
    f = member.fields
    if f["kind"] == "population":
        return {"rows": [{k: v for k, v in r.items() if k != "population_seconds"}
                         for r in population_rows(f["grid"], lr=settings.lr)]}
    if f["kind"] == "gaps":
        return {"rows": trajectory_gaps(load_stored(), f["grid"])}
    if f["kind"] == "times":
        return {"times": step_times("depth")}
    raise ValueError(f"member {member.key!r} has an unknown kind {f['kind']!r}")


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The population steps of each grid, by member key."""
    return {r["key"]: [row["population_steps"] for row in r["result"]["rows"]] for r in records
            if r["key"].startswith("population")}


STUDY = Study(name="trees-scaling-population", stored="trees/data/scaling_population.json",
              kind="trees-scaling-population", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize, rtol=0.0, atol=1e-12, measured=("times",),
              description="Trees, scaling: population steps of the depth and labels grids, the SGD runs' gaps to the "
                          "population curve, and the measured seconds per step")


def load(settings: Settings, path=None) -> dict:
    """The stored study, refused (``ValueError``) unless run with ``settings``: ``population`` (grid -> rows),
    ``gaps`` (the depth grid's rows) and ``times`` (the measured seconds per step)."""
    data = load_study(STUDY.name, path=path)
    if Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in data["settings"].items()}) != settings:
        raise ValueError(f"the stored study {STUDY.name} has settings {data['settings']}, not {settings}: run "
                         f"`python -m onelayer study {STUDY.name}`")
    by_key = {r["key"]: r for r in data["members"]}
    return {"population": {g: by_key[f"population-{g}"]["result"]["rows"] for g in settings.grids},
            "gaps": by_key["gaps-depth"]["result"]["rows"], "times": by_key["times-depth"]["measured"]["times"]}
