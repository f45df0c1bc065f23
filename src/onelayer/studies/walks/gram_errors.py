"""The stored study of Figures 4 and 5 against the size of the seeded Gram error (Theorem 4.1's chapter).

At ``p = 1`` the paper's recipe stays in the symmetric state of Theorem 4.1 only as long as nothing breaks the
symmetry; in a float64 run the paper's round-off does, and the book stands in for round-off with a seeded relative
error of the positional Gram matrix (:func:`onelayer.studies.walks.sensitivity.scaled_model`), so that every machine
computes the same run. The size of that error is a reading, not a fact of the paper [ours]. This study runs
:func:`onelayer.studies.walks.sensitivity.figure45_seeds` (Figures 4 and 5 over many training samples) for each error size,
positional reading and squared norm ``||p_i||^2``; the reading's own default sizes (``2*10^-12`` for sinusoidal
positions, 0 for exactly orthogonal ones) are in the ``walks-seed-rates`` study.

``python -m onelayer study walks-figure45-gram-errors`` runs it (:data:`STUDY`, about 8 minutes on one core): one
member per error size, reading and norm, the block of 40 samples the first script trained together (a batch of other
samples moves the last bits). :func:`payload` gives it in the first script's layout (``meta``, ``rows``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import sensitivity
from ..runner import Member, Study

__all__ = ["Settings", "QUICK", "STUDY", "payload"]


@dataclass(frozen=True)
class Settings:
    """Relative Gram error sizes, positional readings, squared norms (those of ``walks-seed-rates``), training samples
    (data seeds ``0 .. seeds - 1``) per cell; ``N``, ``M``, ``n``: ``None`` for the paper's size."""

    errors: tuple[float, ...] = (1e-15, 1e-12, 1e-9, 1e-6)
    readings: tuple[str, ...] = ("exact", "sin")
    norms: tuple = (20.0, 40.0, "M/16", "M/8", "M/2")
    seeds: int = 40
    N: int | None = None
    M: int | None = None
    n: int | None = None


#: The ``--quick`` settings (seconds): two sizes, one reading and norm, two samples, short walks.
QUICK = Settings(errors=(1e-12, 1e-6), readings=("exact",), norms=(40.0,), seeds=2, N=25, M=100, n=100)


def _key(error, reading, norm) -> str:
    return f"e{error:.0e}-{reading}-{str(norm).replace('/', 'over')}"


def members(settings: Settings) -> list[Member]:
    """One member per (error, reading, norm), e.g. ``e1e-12-sin-Mover16``: the block of ``seeds`` samples."""
    return [Member(_key(e, r, n), {"error": e, "reading": r, "norm": n}, cost=float(settings.seeds))
            for e in settings.errors for r in settings.readings for n in settings.norms]


def run_member(settings: Settings, member: Member) -> dict:
    """``{"rows": ...}``: :func:`~onelayer.studies.walks.sensitivity.figure45_seeds` of the member's cell."""
    c, f = settings, member.fields
    size = {} if c.N is None else {"N": c.N, "M": c.M, "n_train": c.n, "n_test": c.n}
    return {"rows": sensitivity.figure45_seeds(f["norm"], positions=f["reading"], seeds=range(c.seeds),
                                               relative_gram_error=f["error"], **size)}


def _rows(settings: Settings, records: list[dict]) -> list[dict]:
    by_key = {r["key"]: r["result"]["rows"] for r in records}
    return [row for e in settings.errors for r in settings.readings for n in settings.norms for row in by_key[_key(e, r, n)]]


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per (error, reading, norm): the samples that reproduce Figure 4, Figure 5 and both (the rows are the members')."""
    rows = _rows(settings, records)
    return {"cells": [{"error": e, "reading": r, "norm": n,
                       **{k: sum(bool(x[k]) for x in rows if (x["relative_gram_error"], x["positions"], x["norm"]) == (e, r, n))
                          for k in ("fig4_reproduced", "fig5_reproduced", "both")}}
                      for e in settings.errors for r in settings.readings for n in settings.norms]}


def payload(stored: dict) -> dict:
    """A stored study (:func:`onelayer.studies.registry.load`) in the first script's layout: ``meta`` (``quick``,
    ``settings``) and ``rows`` (one per sample and cell, in the script's order)."""
    raw = stored["settings"]
    settings = Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()})
    return {"meta": {"quick": stored["quick"], "settings": {k: v for k, v in raw.items() if v is not None}},
            "rows": _rows(settings, stored["members"])}


STUDY = Study(name="walks-figure45-gram-errors", stored="walks/data/figure45_gram_errors.json",
              kind="walks-figure45-gram-errors", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize,
              description="Walks, Theorem 4.1: Figures 4/5 over 40 training samples per size of the seeded Gram error, "
                          "positional reading and norm")
