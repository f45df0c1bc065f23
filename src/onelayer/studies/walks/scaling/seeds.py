"""The scaling chapter's grids over 20 seeds, stored: the study ``walks-scaling-seeds``.

The chapter "How the cost grows with the size of the problem" reads its verdicts off three grids of
:func:`~onelayer.studies.walks.scaling.runs.measure` (``N`` at ``M = 1000``, ``M`` at ``N = 97``, along
``M = ceil(N^{3/2})``) and the critical ``M`` of :func:`~onelayer.studies.walks.scaling.critical.critical_M` under both
readings of "selected", every size over the same 20 data seeds (independent training samples), with the per-seed
lists the verdicts fit seed by seed. They used to be trained while the chapter executed (about half a minute on one
core); they are evidence, not an illustration, so they are stored here and the chapter loads them. The chapter's
exercise at ``p = 1/2`` stays live.

A member is one size of one grid (all 20 seeds trained together in one batched call, as the chapter trained them) or
one ``N`` of one criterion. The options are :data:`~onelayer.studies.walks.scaling.runs.DEFAULTS` (1000 training and
500 test walks per seed, 10 GD steps, ``p = 0.7``) with seeds ``0 .. 19``; ``--quick`` has the quick options of
:func:`~onelayer.studies.walks.scaling.runs.scaling_study`. A row's ``seconds_per_step`` and
``member_seconds_per_step`` are wall-clock readings of the machine that ran it (measured fields, never compared).
The heavier 16-seed grids (4000 walks, ``p = 1/2``, larger ``N``) are the other stored study, ``walks-scaling``
(:mod:`~onelayer.studies.walks.scaling.stored`).

``python -m onelayer study walks-scaling-seeds`` runs it (about 30 s on one core); :func:`load` gives the grids and
the critical sets in the layout of :func:`~onelayer.studies.walks.scaling.runs.scaling_study` and
:func:`~onelayer.studies.walks.scaling.critical.critical_M`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ....walks.positions import M_for
from ...registry import load as load_study
from ...runner import Member, Study
from .critical import critical_M
from .runs import AXES, CRITICAL_CRITERIA, CRITICAL_N, CURVE_N, DEFAULTS, M_FIXED, M_GRID, N_FIXED, N_GRID, measure

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]

#: The wall-clock readings of a grid row (measured, never compared).
MEASURED = ("seconds_per_step", "member_seconds_per_step")


@dataclass(frozen=True)
class Settings:
    """``p``, the seeds, training and test walks per seed, GD steps, timed steps, and the sizes of each grid and of
    the critical sets (the chapter's: :mod:`~onelayer.studies.walks.scaling.runs`)."""

    p: float = DEFAULTS["p"]
    seeds: tuple[int, ...] = tuple(range(20))
    n_train: int = DEFAULTS["n_train"]
    n_test: int = DEFAULTS["n_test"]
    steps: int = DEFAULTS["steps"]
    timing_steps: int = DEFAULTS["timing_steps"]
    N_grid: tuple[int, ...] = N_GRID
    M_grid: tuple[int, ...] = M_GRID
    curve_N: tuple[int, ...] = CURVE_N
    critical_N: tuple[int, ...] = CRITICAL_N
    M_fixed: int = M_FIXED
    N_fixed: int = N_FIXED


#: ``--quick``: the quick options of ``scaling_study`` (three seeds, 300 walks, 8 steps, three sizes per grid).
QUICK = Settings(seeds=(0, 1, 2), n_train=300, n_test=300, steps=8, N_grid=N_GRID[:3], M_grid=M_GRID[::3],
                 curve_N=CURVE_N[:3], critical_N=CRITICAL_N[:3])


def _sizes(settings: Settings, axis: str) -> list[tuple[int, int]]:
    s = settings
    if axis == "N":
        return [(N, s.M_fixed) for N in s.N_grid]
    if axis == "M":
        return [(s.N_fixed, M) for M in s.M_grid]
    return [(N, M_for(N)) for N in s.curve_N]


def _row_key(axis: str, N: int, M: int) -> str:
    return f"{axis}-N{N:04d}-M{M:05d}"


def _critical_key(criterion: str, N: int) -> str:
    return f"critical-{criterion.replace('_', '-')}-N{N:04d}"


def members(settings: Settings) -> list[Member]:
    """One member per grid size (``N-N0013-M01000``, ``M-...``, ``curve-...``) and per critical ``N`` and criterion
    (``critical-attention-N0013``, ``critical-log-odds-N0013``); cost hint: the attention entries trained."""
    s, seeds, out = settings, len(settings.seeds), []
    for axis in AXES:
        for N, M in _sizes(s, axis):
            out.append(Member(_row_key(axis, N, M), {"kind": "row", "axis": axis, "N": N, "M": M},
                              cost=float(seeds * (s.n_train + s.n_test) * N * (s.steps + s.timing_steps))))
    for criterion in CRITICAL_CRITERIA:
        for N in s.critical_N:
            out.append(Member(_critical_key(criterion, N), {"kind": "critical", "criterion": criterion, "N": N},
                              cost=float(seeds * (s.n_train + s.n_test) * N * 4)))
    return out


def run_member(settings: Settings, member: Member) -> dict:
    """The row of ``measure`` for one size (with its per-seed lists and its measured seconds), or the row of
    ``critical_M`` for one ``N`` and criterion (with its per-seed critical ``M``)."""
    s, f = settings, member.fields
    if f["kind"] == "row":
        return measure([(f["N"], f["M"])], p=s.p, seeds=s.seeds, n_train=s.n_train, n_test=s.n_test, steps=s.steps,
                       timing_steps=s.timing_steps, axis=f["axis"])[0]
    return critical_M([f["N"]], p=s.p, seeds=s.seeds, criterion=f["criterion"], n_train=s.n_train, n_test=s.n_test)[0]


def _layout(settings: Settings, records: list[dict]) -> dict:
    by_key = {r["key"]: {**r["result"], **r.get("measured", {})} for r in records}
    grids = {axis: [by_key[_row_key(axis, N, M)] for N, M in _sizes(settings, axis)] for axis in AXES}
    critical = {criterion: [by_key[_critical_key(criterion, N)] for N in settings.critical_N]
                for criterion in CRITICAL_CRITERIA}
    return {"grids": grids, "critical": critical}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per grid the sizes with their steps to converge (upper medians over seeds), per criterion the critical ``M``."""
    laid = _layout(settings, records)
    return {"steps": {axis: [{"N": r["N"], "M": r["M"], "T_parent": r["T_parent"], "T_optimal": r["T_optimal"]}
                             for r in rows] for axis, rows in laid["grids"].items()},
            "critical_M": {c: [{"N": r["N"], "M_crit": r["M_crit"]} for r in rows] for c, rows in laid["critical"].items()}}


STUDY = Study(name="walks-scaling-seeds", stored="walks/data/scaling_seeds.json", kind="walks-scaling-seeds",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              measured=MEASURED,
              description="Walks, scaling chapter: steps to converge against N and M and the critical M, 20 seeds per "
                          "size, with every seed's numbers")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``seeds`` (tuple), ``grids`` (``"N"``, ``"M"``, ``"curve"``
    -> rows of ``measure``, each with its measured seconds) and ``critical`` (``"attention"``, ``"log_odds"`` -> rows
    of ``critical_M``)."""
    data = load_study(STUDY.name, path=path)
    s = data["settings"]
    settings = Settings(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in s.items()})
    return {"seeds": settings.seeds, **_layout(settings, data["members"])}
