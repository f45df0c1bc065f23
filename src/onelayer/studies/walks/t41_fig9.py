"""The recorded runs of the paper's Figure 9 in the Theorem 4.1 chapter, stored: the study ``walks-t41-fig9``.

Figure 9 is Figure 5 at ``K = 20``, ``N = 101`` (``r = 5``), ``p = 1``, 50 GD steps from zero. The chapter draws it
in the theorem's setting (the exact population, exactly orthogonal positions) and lists the paper's recipe beside it
(1000 sampled walks, seed 0, sinusoidal positions with the seeded Gram error
:data:`onelayer.studies.walks.theorem41.GRAM_ERROR`). Both runs (:func:`onelayer.studies.walks.experiment.run` on
:func:`onelayer.studies.walks.theorem41.deterministic_setup`) are stored here with every record (``V`` and the
attention profile at each step); the chapter draws them. Figure 5 (``K = 6``) stays the chapter's live run.

Members: one per recipe, ``population`` and ``sin``. ``python -m onelayer study walks-t41-fig9`` runs it;
:func:`load` gives each run's :class:`~onelayer.training.History` (records only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...training import History
from ..registry import load as load_study
from ..runner import Member, Study
from .experiment import run
from .theorem41 import GRAM_ERROR, deterministic_setup

__all__ = ["Settings", "QUICK", "RECIPES", "members", "run_member", "summarize", "STUDY", "load"]

#: The two recipes: member key -> the options of :func:`~onelayer.studies.walks.theorem41.deterministic_setup`.
RECIPES = {"population": {"train": "population", "positions": "exact"},
           "sin": {"train": "sample", "positions": "sin", "gram_error": GRAM_ERROR}}


@dataclass(frozen=True)
class Settings:
    """Ring size, ``r`` (``N = rK + 1``), GD steps, and the recipes run (keys of :data:`RECIPES`)."""

    K: int = 20
    r: int = 5
    steps: int = 50
    recipes: tuple[str, ...] = ("population", "sin")


#: ``--quick``: a small ring, a few steps (seconds).
QUICK = Settings(K=4, r=3, steps=3)


def members(settings: Settings) -> list[Member]:
    """One member per recipe; cost hint: the steps."""
    return [Member(name, {"recipe": name}, cost=float(settings.steps)) for name in settings.recipes]


def run_member(settings: Settings, member: Member) -> dict:
    """The run's recorded ``steps`` and ``records``."""
    s = settings
    hist = run(deterministic_setup(s.K, s.r, **RECIPES[member.fields["recipe"]]), steps=s.steps)
    return {"steps": hist.steps, "records": hist.records}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Which members the file holds."""
    return {"members": sorted(r["key"] for r in records)}


STUDY = Study(name="walks-t41-fig9", stored="walks/data/t41_fig9.json", kind="walks-t41-fig9", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorem 4.1: the recorded runs of the paper's Figure 9 (K = 20, N = 101, p = 1), "
                          "in the theorem's setting and with the paper's recipe")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`) and ``runs`` (recipe key ->
    :class:`~onelayer.training.History` with the stored records as NumPy arrays)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data["settings"].items()})
    by_key = {r["key"]: r["result"] for r in data["members"]}
    return {"settings": settings,
            "runs": {name: History(steps=np.asarray(by_key[name]["steps"]),
                                   records={k: np.asarray(v) for k, v in by_key[name]["records"].items()})
                     for name in settings.recipes}}
