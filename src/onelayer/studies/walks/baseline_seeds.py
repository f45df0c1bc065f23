"""The variations chapter's linear baseline over 20 seeds, stored: the study ``walks-baseline-seeds``.

The chapter's verdict on the linear autoregressive baseline is a rate over training samples: at 30 and at 1000
training walks, 20 seeds each, how many runs of the linear model ``f = V x_{N-1}`` and of the transformer make every
prediction Bayes-optimal, and where the linear model is ahead (:func:`onelayer.studies.walks.rebuttal.baseline_seed`).
Those 40 pairs of runs are evidence, so they are stored here and the chapter loads them; its small table over five
sizes and three seeds stays live.

A member is one size and seed (``n0030-s007``). ``python -m onelayer study walks-baseline-seeds`` runs it (well under
a minute on one core); :func:`load` gives, per size, the per-seed lists in the layout of
:func:`~onelayer.studies.walks.rebuttal.linear_baseline_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..registry import load as load_study
from ..runner import Member, Study
from .rebuttal import baseline_seed

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]


@dataclass(frozen=True)
class Settings:
    """Walk parameter, numbers of training walks, seeds, and the options of
    :func:`~onelayer.studies.walks.rebuttal.baseline_seed`."""

    p: float = 0.7
    ns: tuple[int, ...] = (30, 1000)
    seeds: tuple[int, ...] = tuple(range(20))
    steps: int = 50
    lr: float = 1.0
    epsilon: float = 0.1
    K: int = 6
    N: int = 97


#: ``--quick``: two seeds, short walks, few steps (seconds).
QUICK = Settings(ns=(30, 100), seeds=(0, 1), steps=5, N=25)


def _key(n: int, seed: int) -> str:
    return f"n{n:04d}-s{seed:03d}"


def members(settings: Settings) -> list[Member]:
    """One member per number of training walks and seed; cost hint: the walks."""
    return [Member(_key(n, s), {"n": n, "seed": s}, cost=float(n)) for n in settings.ns for s in settings.seeds]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`~onelayer.studies.walks.rebuttal.baseline_seed` of the member's size and seed."""
    s = settings
    return baseline_seed(s.p, member.fields["n"], member.fields["seed"], steps=s.steps, lr=s.lr, epsilon=s.epsilon,
                         K=s.K, N=s.N)


def _rows(settings: Settings, records: list[dict]) -> list[dict]:
    by_key = {r["key"]: r["result"] for r in records}
    rows = []
    for n in settings.ns:
        runs = [by_key[_key(n, s)] for s in settings.seeds]
        rows.append({"n": n, "linear_optimal_seeds": [r["linear_optimal"] for r in runs],
                     "transformer_optimal_seeds": [r["transformer_optimal"] for r in runs],
                     "transformer_parent_seeds": [r["transformer_parent"] for r in runs]})
    return rows


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per size: the seeds whose linear run and whose transformer run make every test prediction optimal."""
    return {str(r["n"]): {"linear_all_optimal": sum(x >= 1.0 for x in r["linear_optimal_seeds"]),
                          "transformer_all_optimal": sum(x >= 1.0 for x in r["transformer_optimal_seeds"])}
            for r in _rows(settings, records)}


STUDY = Study(name="walks-baseline-seeds", stored="walks/data/baseline_seeds.json", kind="walks-baseline-seeds",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, variations: the linear baseline against the transformer at 30 and 1000 training "
                          "walks, 20 seeds each")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`) and ``rows`` (per number
    of training walks: ``n`` and the per-seed lists ``linear_optimal_seeds``, ``transformer_optimal_seeds``,
    ``transformer_parent_seeds``, in the order of the seeds)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data["settings"].items()})
    return {"settings": settings, "rows": _rows(settings, data["members"])}
