"""The stored heavier scaling grids: the study ``walks-scaling`` and reading it in the first script's layout.

A member is one row of :func:`~onelayer.studies.walks.scaling.runs.measure` (one ``p``, one grid and one size
``(N, M)``, every seed trained together in one batched call) or one row of
:func:`~onelayer.studies.walks.scaling.critical.critical_M` (one criterion, one number of training walks, one ``N``).
Sixteen seeds; ``p = 0.7`` and ``p = 0.5``; the grid over ``N`` at ``M = 1000`` extended to ``N = 577`` with 1000 and
with 4000 training walks (the second shows that the lost seeds are a sampling effect); the grid over ``M`` and along
``M = N^{3/2}`` (to ``N = 385``); the critical ``M`` for both criteria up to ``N = 769`` at ``p = 0.7``, with 1000
and with 4000 training walks (``"<criterion>, more walks"``).

A row's ``seconds_per_step`` and ``member_seconds_per_step`` are wall-clock readings of the machine that ran it: the
study declares them *measured* (:class:`~onelayer.studies.runner.Study`), so they are stored with the member, shown
but not compared by ``study verify``, and left out of the comparison across engines. The rows keep the fields the
first script stored (the per-seed lists of :func:`~onelayer.studies.walks.scaling.runs.measure` and
:func:`~onelayer.studies.walks.scaling.critical.critical_M` are left out: the live chapter computes them).

``python -m onelayer study walks-scaling`` runs it (about 6 minutes on one core; ``--quick``: seconds);
:func:`load` gives it in the first script's layout (``meta``, ``studies``, ``critical``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ....walks.positions import M_for
from ...registry import load as load_study
from ...runner import Member, Study
from .critical import critical_M
from .runs import CRITICAL_CRITERIA, CRITICAL_N, CURVE_N, M_FIXED, M_GRID, N_FIXED, measure

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "STORED", "KIND", "load"]

#: Where the stored study lives, relative to the data directory (:func:`onelayer.paths.data_path`).
STORED = "walks/data/scaling.json"
#: The ``kind`` of the stored file (:mod:`onelayer.store`).
KIND = "walks-scaling"
#: The grids of ``measure``: the stored name and the name in a member key.
GRIDS = (("N", "N"), ("M", "M"), ("curve", "curve"), ("N_more_walks", "N-more-walks"))
#: The fields of a ``measure`` row that the study stores (the first script's), the measured ones last.
ROW_KEYS = ("axis", "N", "M", "K", "p", "seeds", "n_train", "T_parent", "T_parent_min", "T_parent_max",
            "T_parent_converged", "T_optimal", "T_optimal_min", "T_optimal_max", "T_optimal_converged", "log_odds2",
            "log_odds_needed", "seconds_per_step", "member_seconds_per_step")
#: The fields of a ``critical_M`` row that the study stores.
CRITICAL_KEYS = ("N", "criterion", "M_crit", "M_crit_min", "M_crit_max", "selected", "seeds", "M_for_N", "ratio")
#: The wall-clock readings of a row (measured, never compared).
MEASURED = ("seconds_per_step", "member_seconds_per_step")


@dataclass(frozen=True)
class Settings:
    """The grids: ``ps``, the seeds, training walks (``n_train``, and ``n_more`` for the ``N_more_walks`` grid and
    the ``", more walks"`` critical rows), test walks, GD steps, timed steps, the sizes of each grid and the ``p`` of
    the critical rows."""

    ps: tuple[float, ...] = (0.7, 0.5)
    seeds: tuple[int, ...] = tuple(range(16))
    n_train: int = 1000
    n_more: int = 4000
    n_test: int = 1000
    steps: int = 16
    timing_steps: int = 4
    big_N: tuple[int, ...] = (13, 25, 49, 97, 193, 289, 385, 577)
    Ms: tuple[int, ...] = M_GRID
    curve_N: tuple[int, ...] = CURVE_N + (385,)
    critical_N: tuple[int, ...] = CRITICAL_N + (385, 769)
    critical_p: float = 0.7
    M_fixed: int = M_FIXED
    N_fixed: int = N_FIXED


#: ``--quick``: three seeds, three sizes per grid, fewer walks and steps (seconds).
QUICK = Settings(seeds=(0, 1, 2), n_train=200, n_more=600, n_test=200, steps=8, timing_steps=2, big_N=(13, 25, 49),
                 Ms=(100, 400, 1600), curve_N=(13, 25, 49), critical_N=(13, 25, 49))


def _sizes(settings: Settings, grid: str) -> list[tuple[int, int]]:
    s = settings
    if grid in ("N", "N_more_walks"):
        return [(N, s.M_fixed) for N in s.big_N]
    if grid == "M":
        return [(s.N_fixed, M) for M in s.Ms]
    return [(N, M_for(N)) for N in s.curve_N]


def _critical_sets(settings: Settings) -> list[tuple[str, str, int]]:
    """``(stored name, criterion, training walks)`` of the critical rows, in the first script's order."""
    return [(name, criterion, walks) for criterion in CRITICAL_CRITERIA
            for name, walks in ((criterion, settings.n_train), (f"{criterion}, more walks", settings.n_more))]


def _row_key(p: float, grid: str, N: int, M: int) -> str:
    return f"p{p:g}-{dict(GRIDS)[grid]}-N{N:04d}-M{M:05d}"


def _critical_key(criterion: str, walks: int, N: int) -> str:
    return f"critical-{criterion.replace('_', '-')}-walks{walks:05d}-N{N:04d}"


def members(settings: Settings) -> list[Member]:
    """One member per row: ``p0.7-N-N0013-M01000`` ... and ``critical-attention-walks01000-N0013`` ...; cost hint
    the attention entries trained (walks x ``N`` x steps, times the seeds)."""
    s, out = settings, []
    for p in s.ps:
        for grid, _ in GRIDS:
            walks = s.n_more if grid == "N_more_walks" else s.n_train
            for N, M in _sizes(s, grid):
                out.append(Member(key=_row_key(p, grid, N, M), fields={"kind": "row", "p": p, "grid": grid, "N": N,
                                                                        "M": M, "n_train": walks},
                                  cost=float(len(s.seeds) * (walks + s.n_test) * N * (s.steps + s.timing_steps))))
    for name, criterion, walks in _critical_sets(s):
        for N in s.critical_N:
            out.append(Member(key=_critical_key(criterion, walks, N),
                              fields={"kind": "critical", "criterion": criterion, "n_train": walks, "N": N},
                              cost=float(len(s.seeds) * (walks + s.n_test) * N * 4)))
    return out


def run_member(settings: Settings, member: Member) -> dict:
    s, f = settings, member.fields
    if f["kind"] == "row":
        row = measure([(f["N"], f["M"])], p=f["p"], seeds=s.seeds, n_train=f["n_train"], n_test=s.n_test,
                      steps=s.steps, timing_steps=s.timing_steps, axis=f["grid"])[0]
        return {k: row[k] for k in ROW_KEYS}
    row = critical_M([f["N"]], p=s.critical_p, seeds=s.seeds, criterion=f["criterion"], n_train=f["n_train"],
                     n_test=s.n_test)[0]
    return {k: row[k] for k in CRITICAL_KEYS}


def _layout(settings: Settings, records: list[dict]) -> dict:
    """``studies`` (``"p=0.7"`` -> grid -> rows, each row with its measured fields) and ``critical`` (name -> rows),
    in the order of the settings."""
    by_key = {r["key"]: {**r["result"], **r.get("measured", {})} for r in records}
    studies = {f"p={p}": {grid: [by_key[_row_key(p, grid, N, M)] for N, M in _sizes(settings, grid)]
                          for grid, _ in GRIDS} for p in settings.ps}
    critical = {name: [by_key[_critical_key(criterion, walks, N)] for N in settings.critical_N]
                for name, criterion, walks in _critical_sets(settings)}
    return {"studies": studies, "critical": critical}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per ``p`` and grid, and per critical set: the sizes with the steps to converge (upper medians) and the
    critical ``M`` (upper median over seeds)."""
    laid = _layout(settings, records)
    return {"steps": {p: {grid: [{"N": r["N"], "M": r["M"], "T_parent": r["T_parent"], "T_optimal": r["T_optimal"]}
                                 for r in rows] for grid, rows in grids.items()} for p, grids in laid["studies"].items()},
            "critical_M": {name: [{"N": r["N"], "M_crit": r["M_crit"]} for r in rows]
                           for name, rows in laid["critical"].items()}}


STUDY = Study(name="walks-scaling", stored=STORED, kind=KIND, settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize, measured=MEASURED,
              description="Walks: steps to converge and time per step against N and M")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it) in the first script's layout: ``meta`` (``quick``,
    ``defaults``: seeds, walks, test walks, steps, timed steps; ``M_fixed``, ``N_fixed``), ``studies``
    (``"p=0.7"``/``"p=0.5"`` -> ``"N"``, ``"M"``, ``"curve"``, ``"N_more_walks"`` -> rows of
    :func:`~onelayer.studies.walks.scaling.runs.measure`, with their measured seconds) and ``critical``
    (``"attention"``, ``"attention, more walks"``, ``"log_odds"``, ``"log_odds, more walks"`` -> rows of
    :func:`~onelayer.studies.walks.scaling.critical.critical_M`)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{f.name: (tuple(v) if isinstance(v := data["settings"][f.name], list) else v)
                           for f in dataclasses.fields(Settings)})
    s = data["settings"]
    meta = {"quick": data["quick"], "defaults": {"seeds": list(s["seeds"]), "n_train": s["n_train"],
                                                 "n_test": s["n_test"], "steps": s["steps"],
                                                 "timing_steps": s["timing_steps"]},
            "M_fixed": s["M_fixed"], "N_fixed": s["N_fixed"]}
    return {"meta": meta, **_layout(settings, data["members"])}
