"""The stored rate of Theorem 3.1 item 3 over many training samples (issue 22): how fast ``V``'s direction reaches the
sample's own square-root target, one log-log slope per sample (:func:`onelayer.studies.walks.direction.target_slopes`).

The samples are data seeds ``0 .. 39``, the 40 training samples of the ``"direction"`` experiment of
:mod:`onelayer.studies.walks.seed_rates` (seed 0 is the theorem chapter's one-sample run). ``python -m onelayer study
walks-direction-slopes`` runs the study (:data:`STUDY`, about two minutes on one core). Its one member is the block of
all 40 samples, trained together as the first script trained them (a batch of fewer samples moves the last bits).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..runner import Member, Study
from .direction import target_slopes

__all__ = ["Settings", "QUICK", "STUDY"]


@dataclass(frozen=True)
class Settings:
    """Walk parameter, samples (seeds ``0 .. seeds - 1``), GD steps, recorded steps and the first fitted record (the
    chapter's run), and the sizes of the walks and the model."""

    p: float = 0.7
    seeds: int = 40
    steps: int = 1000
    n_records: int = 40
    from_record: int = 10
    N: int = 97
    M: int = 1000
    n_train: int = 1000


#: The ``--quick`` settings (seconds): short walks, a short run, few samples.
QUICK = Settings(seeds=3, steps=60, n_records=12, from_record=4, N=25, M=100, n_train=200)


def members(settings: Settings) -> list[Member]:
    """One member: the samples ``0 .. seeds - 1``, trained together (``p0.700-s000-039``)."""
    return [Member(f"p{settings.p:.3f}-s000-{settings.seeds - 1:03d}", {"p": settings.p, "seeds": settings.seeds},
                   cost=float(settings.seeds * settings.steps))]


def run_member(settings: Settings, member: Member) -> dict:
    """``{"samples": rows}``: :func:`~onelayer.studies.walks.direction.target_slopes` on the member's samples."""
    c = asdict(settings)
    del c["p"], c["seeds"]
    return {"samples": target_slopes(member.fields["p"], seeds=tuple(range(member.fields["seeds"])), **c)}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The old file's payload: ``samples``, one row per seed."""
    return {"samples": [row for r in records for row in r["result"]["samples"]]}


STUDY = Study(name="walks-direction-slopes", stored="walks/data/direction_slopes.json", kind="walks-direction-slopes",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorem 3.1 item 3: the rate at which V's direction reaches the sample's own target, "
                          "over 40 training samples")
