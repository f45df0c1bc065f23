"""The runs the chapter "Theorem 5: the heads specialize" draws, stored: the study ``trees-forward-training-runs``.

The chapter illustrates Theorem 5 with one tracked training run of the structured two-head model from zero
(:func:`onelayer.studies.trees.analysis.tracked_training`, data seed 0, parameter snapshots at the player's steps) and
two short runs at the summaries' learning rate (mean and sum over positions,
:func:`onelayer.trees.forward.model.train_forward`) for its rescaling figure. Retraining them took most of the
chapter's execution, so they are stored here and the chapter loads them; the one gradient step it writes out stays
live.

Members: ``main`` (the tracked run: its records, snapshots and final parameters), ``paper-lr-mean`` and
``paper-lr-sum`` (their recorded losses and final parameters); each trained in float64 and stored with
:func:`~onelayer.studies.trees.stored_study.history_record` (:func:`~onelayer.studies.trees.stored_study.history` reads
it back).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ...trees.forward.model import train_forward, two_head
from ...trees.shared import embeddings
from ...trees.shared.data import LossOptions
from ... import store
from ..registry import load
from ..runner import Member, Study, compute
from .analysis import tracked_training
from .stored_study import float64, history_record

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "results"]


@dataclass(frozen=True)
class Settings:
    """The chapter's main run (``S``, ``m``, ``steps``, ``lr``, ``batch_size``, ``record_every``, snapshots at
    ``scrub_steps``) and its two runs at ``paper_lr`` for ``paper_lr_steps`` steps."""

    S: int = 25
    m: int = 3
    steps: int = 1000
    lr: float = 2.0
    batch_size: int = 256
    record_every: int = 20
    scrub_steps: tuple[int, ...] = (0, 20, 40, 60, 100, 140, 200, 300, 400, 500, 600, 800, 1000)
    paper_lr: float = 0.2
    paper_lr_steps: int = 200


#: ``--quick``: the chapter's quick mode (60 steps, 20 steps at ``paper_lr``).
QUICK = Settings(steps=60, scrub_steps=(0, 20, 40, 60), paper_lr_steps=20)


def members(settings: Settings) -> list[Member]:
    """``main`` and the two runs at ``paper_lr`` (``paper-lr-mean``, ``paper-lr-sum``)."""
    return [Member("main", {"run": "main"}, cost=float(settings.steps)),
            *(Member(f"paper-lr-{norm}", {"run": norm}, cost=float(settings.paper_lr_steps)) for norm in ("mean", "sum"))]


def run_member(settings: Settings, member: Member) -> dict:
    """The member's run in float64, as plain values (:func:`~onelayer.studies.trees.stored_study.history` reads it
    back)."""
    s = settings
    with float64():
        A = embeddings.one_hot_embeddings(s.S)
        run = member.fields["run"]
        if run == "main":
            hist = tracked_training(A, m=s.m, steps=s.steps, lr=s.lr, batch_size=s.batch_size,
                                    record_every=s.record_every, snapshot_at=s.scrub_steps)
        else:
            hist = train_forward(two_head(), A, m=s.m, steps=s.paper_lr_steps, lr=s.paper_lr,
                                 options=LossOptions(run, True), record_every=s.record_every)
    return history_record(hist)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Each run's first and last recorded loss."""
    return {r["key"]: {"initial_loss": r["result"]["records"]["loss"][0], "final_loss": r["result"]["records"]["loss"][-1]}
            for r in records}


STUDY = Study(name="trees-forward-training-runs", stored="trees/data/forward_training_runs.json",
              kind="trees-forward-training-runs", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize,
              description="Trees, Theorem 5: the chapter's tracked two-head run (1000 steps, snapshots) and its two "
                          "runs at lr 0.2 (mean, sum over positions), one seed")


def results(settings: Settings, *, stored: bool = True) -> dict:
    """key -> result of every member: the stored study, refused if it was made with other ``settings``, or (not
    ``stored``) the members of ``settings`` computed here, in this process."""
    if not stored:
        return {m.key: store.from_jsonable(compute(STUDY, settings, m)[1]["result"]) for m in STUDY.member_list(settings)}
    data = load(STUDY.name)
    if data["settings"] != store.to_jsonable(asdict(settings)):
        raise ValueError(f"the stored study {STUDY.name} has other settings than the chapter's; run "
                         f"python -m onelayer study {STUDY.name}")
    return {m["key"]: m["result"] for m in data["members"]}
