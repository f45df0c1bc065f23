"""The two training runs the chapter "Theorem 4: it generalizes to unseen trees" draws, stored: the study
``trees-backward-generalization-runs``.

The chapter trains the backward model by SGD from ``B = 0`` (one seed) with one-hot and with Gaussian (non-orthogonal,
``d = S``) embeddings and evaluates it on 1,024 random test trees at every checkpoint
(:func:`onelayer.studies.trees.backward_generalization.test_record`; the Gaussian run also records the
:func:`~onelayer.studies.trees.analysis.h_stats` of ``H``). Retraining both took more than half of the chapter's
execution, so they are stored here and the chapter loads them.

Members ``one-hot`` and ``gaussian``: the run in float64, stored with
:func:`~onelayer.studies.trees.stored_study.history_record` (:func:`~onelayer.studies.trees.stored_study.history`
reads it back). :func:`test_set` and :func:`embedding_matrix` are the test trees and the embeddings of a setting.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...seeding import generator, numpy_rng
from ...trees.backward import layout, model
from ...trees.shared import embeddings
from ..runner import Member, Study
from . import analysis
from .backward_generalization import test_record
from .inputs import gaussian_embeddings
from .stored_study import float64, history_record

__all__ = ["Settings", "QUICK", "test_set", "embedding_matrix", "train_run", "members", "run_member", "summarize",
           "STUDY"]


@dataclass(frozen=True)
class Settings:
    """The chapter's run: ``S``, ``m``, ``steps``, ``lr``, training ``seed``, checkpoints every ``checkpoint_every``
    steps; the test trees (``test_trees`` of depth at most ``test_max_depth``, seed ``test_seed``); the Gaussian
    embeddings' seed."""

    S: int = 31
    m: int = 4
    steps: int = 1500
    lr: float = 1.0
    seed: int = 0
    test_trees: int = 1024
    test_seed: int = 7
    test_max_depth: int = 7
    checkpoint_every: int = 100
    gaussian_seed: int = 1


#: ``--quick``: the chapter's quick mode (256 test trees, 200 steps, checkpoints every 50).
QUICK = Settings(test_trees=256, steps=200, checkpoint_every=50)


def test_set(settings: Settings):
    """The random test trees (0-3 children, depth cap ``test_max_depth``, any non-root goal): ``(batch, trees)``."""
    s = settings
    return layout.random_tree_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)


def embedding_matrix(settings: Settings, gaussian: bool = False):
    """One-hot embeddings, or (``gaussian``) Gaussian ones in ``d = S`` dimensions (seed ``gaussian_seed``)."""
    S = settings.S
    return gaussian_embeddings(S, S, generator(settings.gaussian_seed)) if gaussian else embeddings.one_hot_embeddings(S)


def train_run(settings: Settings, gaussian: bool = False, *, test=None, progress: bool = False):
    """The run (SGD from ``B = 0``) evaluated on ``test`` (default :func:`test_set`) at every checkpoint: a
    :class:`~onelayer.training.History` (``gaussian``: also the ``H`` statistics)."""
    s = settings
    test = test_set(s)[0] if test is None else test
    A = embedding_matrix(s, gaussian)
    record = {"test": test_record(A, test), **(analysis.h_records(A) if gaussian else {})}
    return model.train_backward(A, m=s.m, steps=s.steps, lr=s.lr, seed=s.seed,
                                record_at=list(range(0, s.steps + 1, s.checkpoint_every)), record=record,
                                progress=progress)


def members(settings: Settings) -> list[Member]:
    """``one-hot`` and ``gaussian``."""
    return [Member(key, {"gaussian": key == "gaussian"}, cost=float(settings.steps)) for key in ("one-hot", "gaussian")]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`train_run` of the member's embeddings in float64, as a stored history."""
    with float64():
        return history_record(train_run(settings, member.fields["gaussian"]))


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Each run's last training loss."""
    return {r["key"]: {"final_loss": r["result"]["records"]["loss"][-1]} for r in records}


STUDY = Study(name="trees-backward-generalization-runs", stored="trees/data/backward_generalization_runs.json",
              kind="trees-backward-generalization-runs", settings=Settings(), quick=QUICK, members=members,
              run_member=run_member, summarize=summarize,
              description="Trees, Theorem 4: the chapter's one-hot and Gaussian training runs (1500 steps, test "
                          "record every 100 steps), one seed")
