"""What a model without positions can reach, stored: the study ``walks-no-position-bounds``.

The variations chapter's case against dropping the positions rests on two tables: the exact best accuracy of any
function of the visit histogram (:func:`onelayer.studies.walks.histogram_bound.histogram_bayes_bound`, ``p`` x ``N``)
and, per ``p``, that accuracy at small ``N`` with a linear map of the histogram fitted on 20000 walks
(:func:`onelayer.studies.walks.chains.no_position_capacity_row`). Both are exact enumerations or large fits, the same
on every run, and evidence rather than an illustration: they are stored here and the chapter loads them.

Members: ``bound-p0.50-N013`` (one ``p`` and ``N`` of the bound table) and ``capacity-p0.50`` (one row of the capacity
table). ``python -m onelayer study walks-no-position-bounds`` runs it (under a minute on one core); :func:`load` gives
both tables in the order of :func:`~onelayer.studies.walks.histogram_bound.histogram_bound_table` and
:func:`~onelayer.studies.walks.chains.no_position_capacity_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import load as load_study
from ..runner import Member, Study
from .chains import no_position_capacity_row
from .histogram_bound import histogram_bound_table

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]


@dataclass(frozen=True)
class Settings:
    """``p`` and ``N`` of the bound table; ``p`` of the capacity table, its exact lengths, the linear fit's length,
    walks and seed; the ring size."""

    bound_ps: tuple[float, ...] = (0.5, 0.7, 1.0)
    bound_Ns: tuple[int, ...] = (13, 25, 49, 97)
    capacity_ps: tuple[float, ...] = (0.5, 0.7, 1.0)
    exact_Ns: tuple[int, ...] = (7, 13, 17)
    linear_N: int = 97
    walks: int = 20000
    seed: int = 0
    K: int = 6


#: ``--quick``: short walks, few of them (seconds).
QUICK = Settings(bound_ps=(0.5, 0.7), bound_Ns=(7, 13), capacity_ps=(0.5,), exact_Ns=(7,), linear_N=13, walks=500)


def _bound_key(p: float, N: int) -> str:
    return f"bound-p{p:.2f}-N{N:03d}"


def _capacity_key(p: float) -> str:
    return f"capacity-p{p:.2f}"


def members(settings: Settings) -> list[Member]:
    """One member per ``p`` and ``N`` of the bound table and per ``p`` of the capacity table; cost hint: ``N``, and
    the walks of the fit."""
    s = settings
    return ([Member(_bound_key(p, N), {"kind": "bound", "p": p, "N": N}, cost=float(N)) for p in s.bound_ps
             for N in s.bound_Ns]
            + [Member(_capacity_key(p), {"kind": "capacity", "p": p}, cost=float(s.walks)) for p in s.capacity_ps])


def run_member(settings: Settings, member: Member) -> dict:
    """The row of the bound table (``p``, ``N``, ``bound``, ``chance``, ``bayes``) or of the capacity table."""
    s, f = settings, member.fields
    if f["kind"] == "bound":
        return histogram_bound_table((f["p"],), (f["N"],), K=s.K)[0]
    return no_position_capacity_row(f["p"], K=s.K, exact_Ns=s.exact_Ns, linear_N=s.linear_N, n=s.walks, seed=s.seed)


def _tables(settings: Settings, records: list[dict]) -> dict:
    by_key = {r["key"]: r["result"] for r in records}
    s = settings
    return {"bound": [by_key[_bound_key(p, N)] for p in s.bound_ps for N in s.bound_Ns],
            "capacity": [by_key[_capacity_key(p)] for p in s.capacity_ps]}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Both tables."""
    return _tables(settings, records)


STUDY = Study(name="walks-no-position-bounds", stored="walks/data/no_position_bounds.json",
              kind="walks-no-position-bounds", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize,
              description="Walks, variations: the best accuracy of any function of the visit histogram (exact) and "
                          "of a linear map of it, without positions")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`), ``bound`` and
    ``capacity`` (the two tables' rows)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data["settings"].items()})
    return {"settings": settings, **_tables(settings, data["members"])}
