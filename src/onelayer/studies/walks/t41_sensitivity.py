"""Which reconstructed choices decide Figures 4 and 5 on one training sample, stored: the study ``walks-t41-sensitivity``.

The Theorem 4.1 chapter's three sensitivity tables are rows of
:func:`onelayer.studies.walks.sensitivity.figure45_row` on data seed 0: sinusoidal positions with the seeded Gram error
over seven squared norms in float64 and in float32, and exactly orthogonal positions without Gram error over two norms
in both precisions. Each row trains two 50-step runs at the paper's size; together they took a third of the
chapter's execution. They are stored here and the chapter loads them. The float32 rows are this machine's round-off
(stored as the run gave them: JSON keeps every float32 value exactly).

Members: one per row, ``sin-float64-n00-1`` (reading, precision, index and name of the norm). ``python -m onelayer
study walks-t41-sensitivity`` runs it; :func:`load` gives the three tables in the chapter's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import load as load_study
from ..runner import Member, Study
from .sensitivity import RELATIVE_GRAM_ERROR, figure45_row

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]


@dataclass(frozen=True)
class Settings:
    """The squared norms of the sinusoidal rows (with the seeded Gram error ``relative_gram_error``) and of the exactly
    orthogonal rows (no Gram error), the precisions, and the runs' steps, walks and data seed."""

    norms: tuple = ("1", 40.0, "M/8", "M/4", "M/2", "M", "2M")
    exact_norms: tuple[str, ...] = ("M/16", "M/2")
    dtypes: tuple[str, ...] = ("float64", "float32")
    relative_gram_error: float = RELATIVE_GRAM_ERROR
    steps: int = 50
    n_train: int = 1000
    n_test: int = 1000
    seed: int = 0


#: ``--quick``: two norms, short runs on few walks (seconds).
QUICK = Settings(norms=("1", "M/2"), exact_norms=("M/2",), steps=10, n_train=100, n_test=100)


def _key(positions: str, dtype: str, index: int, norm) -> str:
    return f"{positions}-{dtype}-n{index:02d}-{str(norm).replace('/', 'over')}"


def _cells(settings: Settings) -> list[tuple[str, str, int, object]]:
    """``(positions, dtype, index, norm)`` of every row, in the chapter's order (reading, precision, norm)."""
    s = settings
    return ([("sin", d, i, n) for d in s.dtypes for i, n in enumerate(s.norms)]
            + [("exact", d, i, n) for d in s.dtypes for i, n in enumerate(s.exact_norms)])


def members(settings: Settings) -> list[Member]:
    """One member per row; cost hint: the steps (every row trains the same two runs)."""
    return [Member(_key(*cell), {"positions": cell[0], "dtype": cell[1], "norm": cell[3]}, cost=float(settings.steps))
            for cell in _cells(settings)]


def run_member(settings: Settings, member: Member) -> dict:
    """The row of :func:`~onelayer.studies.walks.sensitivity.figure45_row`."""
    s, f = settings, member.fields
    error = s.relative_gram_error if f["positions"] == "sin" else 0.0
    return figure45_row(f["norm"], dtype=f["dtype"], relative_gram_error=error, positions=f["positions"],
                        steps=s.steps, n_train=s.n_train, n_test=s.n_test, seed=s.seed)


def _tables(settings: Settings, records: list[dict]) -> dict:
    by_key = {r["key"]: r["result"] for r in records}
    rows = {(pos, d): [] for pos, d, _, _ in _cells(settings)}
    for cell in _cells(settings):
        rows[cell[:2]].append(by_key[_key(*cell)])
    return {"sin": {d: rows[("sin", d)] for d in settings.dtypes},
            "exact": [r for d in settings.dtypes for r in rows[("exact", d)]]}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The rows each figure reproduced: ``both`` per member."""
    return {"both": {r["key"]: r["result"]["both"] for r in records}}


STUDY = Study(name="walks-t41-sensitivity", stored="walks/data/t41_sensitivity.json", kind="walks-t41-sensitivity",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorem 4.1: Figures 4 and 5 on one training sample against the squared norm of the "
                          "positions, their reading and the precision")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`), ``sin`` (dtype -> rows over
    ``norms``, sinusoidal positions with the Gram error) and ``exact`` (the exactly orthogonal rows, float64 first)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data["settings"].items()})
    return {"settings": settings, **_tables(settings, data["members"])}
