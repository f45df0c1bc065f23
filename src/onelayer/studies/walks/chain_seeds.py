"""The variations chapter's seeded chains, stored: the study ``walks-chain-seeds``.

Beyond the ring the chapter asks whether the model learns any Markov chain: 20 random doubly stochastic chains and
20 chains with independent Dirichlet(1) rows, each trained from zero for 20 GD steps on its own 1000 walks
(:func:`onelayer.studies.walks.chains.chain_table`), give the rates its table and verdict quote. They are evidence, not
an illustration, so they are stored here and the chapter loads them; the two single chains it draws stay live.

A member is one chain (``doubly-stochastic-c007``, ``non-uniform-c013``): :func:`~onelayer.studies.walks.chains.chain_row`.
``python -m onelayer study walks-chain-seeds`` runs it (about half a minute on one core); :func:`load` gives the rows in
the order of :func:`~onelayer.studies.walks.chains.chain_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import load as load_study
from ..runner import Member, Study
from .chains import CHAIN_KINDS, chain_row

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]


@dataclass(frozen=True)
class Settings:
    """Chains per family (seeds ``0 .. n_chains - 1``), GD steps, and the sizes of
    :func:`~onelayer.studies.walks.chains.chain_row`."""

    n_chains: int = 20
    steps: int = 20
    K: int = 6
    N: int = 97
    M: int = 1000
    n_train: int = 1000
    n_test: int = 1000
    seed: int = 0


#: ``--quick``: two chains per family, short walks, few steps (seconds).
QUICK = Settings(n_chains=2, steps=4, N=25, M=200, n_train=200, n_test=200)


def _key(kind: str, chain_seed: int) -> str:
    return f"{kind.replace(' ', '-')}-c{chain_seed:03d}"


def members(settings: Settings) -> list[Member]:
    """One member per family and chain seed."""
    return [Member(_key(kind, c), {"kind": kind, "chain_seed": c}, cost=float(settings.steps))
            for kind in CHAIN_KINDS for c in range(settings.n_chains)]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`~onelayer.studies.walks.chains.chain_row` of the member's chain."""
    s = settings
    return chain_row(member.fields["kind"], member.fields["chain_seed"], K=s.K, steps=s.steps, N=s.N, M=s.M,
                     n_train=s.n_train, n_test=s.n_test, seed=s.seed)


def _rows(settings: Settings, records: list[dict]) -> list[dict]:
    by_key = {r["key"]: r["result"] for r in records}
    return [by_key[_key(kind, c)] for kind in CHAIN_KINDS for c in range(settings.n_chains)]


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per family: chains and chains learned (parent attention above 0.99 and every prediction optimal)."""
    rows = _rows(settings, records)
    return {kind: {"chains": sum(r["kind"] == kind for r in rows),
                   "learned": sum(r["kind"] == kind and r["learned"] for r in rows)} for kind in CHAIN_KINDS}


STUDY = Study(name="walks-chain-seeds", stored="walks/data/chain_seeds.json", kind="walks-chain-seeds",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, variations: 20 doubly stochastic and 20 Dirichlet chains, each trained from zero "
                          "for 20 GD steps")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`) and ``rows`` (one per
    chain, in the order of :func:`~onelayer.studies.walks.chains.chain_table`)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**data["settings"])
    return {"settings": settings, "rows": _rows(settings, data["members"])}
