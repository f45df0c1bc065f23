"""The runs the chapter "Theorem 3: gradient descent finds it" draws, stored: the study ``trees-backward-training-runs``.

The chapter compares one mini-batch SGD run from ``B = 0`` (one-hot embeddings, one seed, recording the
:func:`~onelayer.studies.trees.analysis.h_stats` of ``H`` and the attention on the correct edge on a fixed batch) with
exact population gradient descent in ``(h1, h2)`` over the same steps, reads the phases off a longer population run,
and the late-time rate off population runs at larger step sizes. Retraining them took most of the chapter's execution,
so they are stored here and the chapter loads them; the short runs its exercises write out stay live.

Members: ``sgd`` (:func:`sgd_run`), ``population`` (:func:`population_run`, ``steps`` steps), ``phase``
(``phase_steps`` steps at ``lr``) and ``rate-lr<eta>`` for each entry of ``rate_runs`` other than the phase run; each
computed in float64 and stored with :func:`~onelayer.studies.trees.stored_study.history_record`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...seeding import numpy_rng
from ...trees.backward import dynamics, layout, model
from ...trees.shared import embeddings
from ..runner import Member, Study
from . import analysis
from .stored_study import float64, history_record

__all__ = ["Settings", "QUICK", "sgd_run", "population_run", "rate_key", "members", "run_member", "summarize", "STUDY"]


@dataclass(frozen=True)
class Settings:
    """The chapter's runs: SGD (``S``, ``m``, ``steps``, ``lr``, ``batch_size``, ``seed``, recorded every
    ``record_every`` steps on a fixed batch drawn with ``eval_seed``), the phase run (``phase_steps``) and the
    step-size runs ``rate_runs`` (step size, steps)."""

    S: int = 31
    m: int = 4
    steps: int = 1500
    lr: float = 1.0
    batch_size: int = 256
    seed: int = 0
    record_every: int = 10
    eval_seed: int = 5
    phase_steps: int = 3000
    rate_runs: tuple[tuple[float, int], ...] = ((1.0, 3000), (8.0, 3000), (128.0, 4000))


#: ``--quick``: the chapter's quick mode (100 SGD steps, a 300-step phase run, a tenth of each step-size run).
QUICK = Settings(steps=100, phase_steps=300, rate_runs=((1.0, 300), (8.0, 300), (128.0, 400)))


def sgd_run(settings: Settings, *, progress: bool = False):
    """Mini-batch SGD from ``B = 0`` with the :func:`~onelayer.studies.trees.analysis.h_records` of ``H`` on the fixed
    batch (a :class:`~onelayer.training.History`)."""
    s = settings
    A = embeddings.one_hot_embeddings(s.S)
    eval_batch = layout.perfect_tree_batch(s.m, s.S, s.batch_size, numpy_rng(s.eval_seed))
    return model.train_backward(A, m=s.m, steps=s.steps, lr=s.lr, batch_size=s.batch_size, seed=s.seed,
                                record_every=s.record_every, record=analysis.h_records(A, eval_batch), progress=progress)


def population_run(settings: Settings, steps: int, lr: float):
    """Exact population gradient descent in ``(h1, h2)`` for ``steps`` steps at step size ``lr``."""
    return dynamics.population_gd(settings.m, settings.S, steps=steps, lr=lr, record_every=settings.record_every)


def rate_key(lr: float) -> str:
    """The member key of the step-size run at ``lr`` (``rate-lr8``, ``rate-lr128``)."""
    return f"rate-lr{lr:g}"


def members(settings: Settings) -> list[Member]:
    """``sgd``, ``population``, ``phase`` and one ``rate-lr<eta>`` per step-size run that is not the phase run."""
    s = settings
    out = [Member("sgd", {"run": "sgd"}, cost=float(s.steps) * 4),
           Member("population", {"run": "population", "steps": s.steps, "lr": s.lr}, cost=float(s.steps)),
           Member("phase", {"run": "population", "steps": s.phase_steps, "lr": s.lr}, cost=float(s.phase_steps))]
    return out + [Member(rate_key(lr), {"run": "population", "steps": steps, "lr": lr}, cost=float(steps))
                  for lr, steps in s.rate_runs if (lr, steps) != (s.lr, s.phase_steps)]


def run_member(settings: Settings, member: Member) -> dict:
    """The member's run in float64, as a stored history."""
    f = member.fields
    with float64():
        hist = sgd_run(settings) if f["run"] == "sgd" else population_run(settings, f["steps"], f["lr"])
        return history_record(hist)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Each run's last loss."""
    return {r["key"]: {"final_loss": r["result"]["records"]["loss"][-1]} for r in records}


STUDY = Study(name="trees-backward-training-runs", stored="trees/data/backward_training_runs.json",
              kind="trees-backward-training-runs", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize,
              description="Trees, Theorem 3: the chapter's SGD run, population GD beside it, the 3000-step phase run "
                          "and the step-size runs, one seed")
