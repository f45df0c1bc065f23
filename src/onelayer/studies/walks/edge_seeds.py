"""The edge of Theorem 3.1 at ``K = 6``, ``p`` in ``{0.99, 0.999}``, over 200 training samples per ``p`` (issue 31).

The stored study ``walks-seed-rates`` measures the edge with 40 samples per ``(K, p)``; at ``K = 6``, ``p = 0.999`` its
21/40 Bayes-optimal runs on the parent is the one cell an independent re-run (other code, other seeds) found
significantly different (Fisher p < 0.05). This study repeats the same measurement
(:func:`onelayer.studies.walks.edge.edge_table`: the paper's size, 50 steps from zero, ``eta = 1``, each seed its own
1000 training and 1000 test walks) on data seeds ``0 .. 199``: a superset of the 40 seeds of ``walks-seed-rates``.
A member is a block of 40 consecutive seeds at one ``p``, trained together as ``walks-seed-rates`` trains its blocks,
so the block of seeds ``0 .. 39`` is exactly that study's cell (bit for bit), and the summary counts the new seeds
``40 .. 199`` separately as well. ``python -m onelayer study walks-edge-seeds`` runs it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..runner import Member, Study
from . import edge

__all__ = ["Settings", "QUICK", "STUDY"]


@dataclass(frozen=True)
class Settings:
    """Ring size, walk parameters, seeds per ``p`` (``0 .. seeds - 1``), seeds per member (a block trained together),
    the seeds of the earlier study (``0 .. old_seeds - 1``) and the sizes (``None``: the paper's)."""

    K: int = 6
    ps: tuple[float, ...] = (0.99, 0.999)
    seeds: int = 200
    block: int = 40
    old_seeds: int = 40
    N: int | None = None
    M: int | None = None
    n: int | None = None


#: The ``--quick`` settings (seconds): two blocks of two seeds at short walks.
QUICK = Settings(seeds=4, block=2, old_seeds=2, N=25, M=100, n=100)


def members(settings: Settings) -> list[Member]:
    """One member per ``p`` and block of seeds, e.g. ``k6-p0.999-s040-079``."""
    c = settings
    if c.seeds % c.block or c.old_seeds % c.block:
        raise ValueError(f"seeds ({c.seeds}) and old_seeds ({c.old_seeds}) must be multiples of block ({c.block})")
    return [Member(f"k{c.K}-p{p:.3f}-s{lo:03d}-{lo + c.block - 1:03d}", {"K": c.K, "p": p, "first": lo, "count": c.block},
                   cost=float(c.block))
            for p in c.ps for lo in range(0, c.seeds, c.block)]


def run_member(settings: Settings, member: Member) -> dict:
    """``{"rows": ...}``: :func:`~onelayer.studies.walks.edge.edge_table` of the member's ``p`` and seeds."""
    c, f = settings, member.fields
    size = {} if c.N is None else {"N": c.N, "M": c.M, "n_train": c.n, "n_test": c.n}
    return {"rows": edge.edge_table((f["p"],), seeds=range(f["first"], f["first"] + f["count"]), Ks=(f["K"],), **size)}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per ``p`` and seed range (all seeds, the earlier study's ``0 .. old_seeds - 1``, the new ones): runs,
    Bayes-optimal on the parent and locked onto another lag (counts ``k`` of ``n``, with the 95% Wilson interval)."""
    rows = [row for r in records for row in r["result"]["rows"]]
    out = []
    for p in settings.ps:
        for label, keep in (("all", lambda s: True), ("earlier", lambda s: s < settings.old_seeds),
                            ("new", lambda s: s >= settings.old_seeds)):
            sub = [r for r in rows if r["p"] == p and keep(r["seed"])]
            (e,) = edge.edge_rates(sub)
            good, other = e["optimal_parent_rate"], e["other_lag_rate"]
            out.append({"K": settings.K, "p": p, "seeds": label, "runs": len(sub),
                        "optimal_parent": good.k, "optimal_parent_low": good.low, "optimal_parent_high": good.high,
                        "other_lag": other.k, "other_lag_low": other.low, "other_lag_high": other.high,
                        "other_lags": e["other_lags"]})
    return {"cells": out}


STUDY = Study(name="walks-edge-seeds", stored="walks/data/edge_seeds.json", kind="walks-edge-seeds", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorem 3.1: the edge at K=6, p in {0.99, 0.999}, over 200 training samples per p "
                          "(a superset of walks-seed-rates' 40)",
              # attention weights lie in [0, 1]; on a run locked onto another lag the parent's weight is about 1e-16,
              # whose relative error is round-off (1e-9 under jitter): floats agree within 1e-12 absolute or 1e-9 relative
              atol=1e-12)
