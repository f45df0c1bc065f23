"""Chapter "Theorem 5: the heads specialize" (``book/trees/forward_training.ipynb``).

One tracked training run of the structured two-head model from zero (:func:`training_run`: the three figures over
training, the sign table, the role events and the attention player all read it; one seed, an illustration) and two
short runs at the summaries' learning rate for the rescaling figure (:func:`paper_lr_runs`, one seed), stored (``python
-m onelayer study trees-forward-training-runs``, :mod:`onelayer.studies.trees.forward_training_runs`); and two stored
studies of evidence: :func:`seeded_runs` (``python -m onelayer study trees-forward-training-seeds``), the
two-head run over 20 data seeds (:func:`seed_rates`) and the variant with learned value maps over 20 random starts per
initialisation scale (:func:`split_curves`); :func:`rescaling_runs` (``python -m onelayer study
trees-forward-rescaling-seeds``), the rescaling check over 20 data seeds (:func:`rescaling_seeds`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from ...registry import register
from ...scrubber import frame_numbers, scrub
from ...seeding import numpy_rng
from ...trees.forward import dynamics
from ...studies.trees import forward_training_runs as runs_study, stored_study
from ...studies.trees import analysis, forward_rescaling as rescaling_study, forward_seeded_training as seeded_training
from ...figures.trees_forward import (accuracy_by_type_figure, attention_by_step_figure, lv_split_figure, rescaling_figure,
                                      roles_figure, scalars_figure)
from ...trees.forward.layout import STEP_TYPES, perfect_forward_batch
from ...trees.shared import embeddings
from ...verdicts import trees_forward_training as verdicts

__all__ = ["Settings", "SETTINGS", "training_run", "phase_marks", "scalars", "accuracy_by_type", "roles",
           "paper_lr_runs", "rescaling", "rescaling_runs", "rescaling_seeds", "attention_steps_player",
           "attention_steps_frames", "seeded_runs", "lv_split", "seed_rates", "split_curves", "step_range", "split_at", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows.

    ``S = 25``, ``m = 3``, ``batch_size = 256`` [summary]; ``lr = 2`` under the per-position mean loss [guess] (the
    summaries' 0.2 [summary] is ``paper_lr``, used by the rescaling check with ``paper_lr_steps`` steps; the mean
    loss at 2 follows the same dynamics as 0.2 summed over positions up to the time scale); 1,000 steps, the
    recording interval, the learned-value-map runs and the player's frames [guess].
    """

    S: int = 25
    m: int = 3
    steps: int = 1000
    quick_steps: int = 60  #: quick mode (``python -m onelayer make --quick``)
    lr: float = 2.0
    batch_size: int = 256
    step_seed: int = 0  #: the training trees of the one GD step written out under Theorem 5
    record_every: int = 20
    paper_lr: float = 0.2
    paper_lr_steps: int = 200
    paper_lr_quick_steps: int = 20
    #: the two comparisons at equal eta_eff * t: (step of the lr 0.2 run, step of the main run)
    rescaling_pairs: tuple[tuple[int, int], ...] = ((200, 20), (200, 140))
    #: two runs at equal eta_eff * t count as one trajectory when their losses differ by less than this share [guess]
    rescaling_tol: float = 0.01
    #: learned value maps (issue 14, stored study): a run "splits" a block when one head writes at least this share
    #: of it; the verdict reads the first threshold, the figure shows both [guess]
    lv_thresholds: tuple[float, ...] = (0.94, 0.8)
    #: frames of the attention player (recorded steps of the main run), its training tree and resolution
    scrub_steps: tuple[int, ...] = (0, 20, 40, 60, 100, 140, 200, 300, 400, 500, 600, 800, 1000)
    scrub_seed: int = 4


SETTINGS = Settings()


def _settings(quick: bool) -> Settings:
    s = SETTINGS
    if quick:
        s = replace(s, steps=s.quick_steps, scrub_steps=tuple(t for t in s.scrub_steps if t <= s.quick_steps))
    return s


def training_run(quick: bool = False):
    """The tracked two-head training run (one-hot embeddings, from zero, snapshots at ``scrub_steps``): ``(A,
    history)``, member ``main`` of the stored study ``trees-forward-training-runs`` (``quick``: trained here), read once
    per mode (``training_run()`` and ``training_run(False)`` are the same run)."""
    return _training_run(bool(quick))


def _runs_settings(quick: bool) -> runs_study.Settings:
    """The study settings of the chapter's runs (``quick``: its quick mode)."""
    s = _settings(quick)
    return runs_study.Settings(S=s.S, m=s.m, steps=s.steps, lr=s.lr, batch_size=s.batch_size,
                               record_every=s.record_every, scrub_steps=s.scrub_steps, paper_lr=s.paper_lr,
                               paper_lr_steps=s.paper_lr_quick_steps if quick else s.paper_lr_steps)


@functools.lru_cache(maxsize=2)
def _stored_runs(quick: bool) -> dict:
    """key -> result of every member of ``trees-forward-training-runs`` (``quick``: computed here)."""
    return runs_study.results(_runs_settings(quick), stored=not quick)


@functools.lru_cache(maxsize=2)
def _training_run(quick: bool):
    return embeddings.one_hot_embeddings(SETTINGS.S), stored_study.history(_stored_runs(quick)["main"])


def phase_marks(quick: bool = False):
    """The phase times of the run (first recorded step at which each step type's accuracy reaches 1/2, and their
    order) and the marks the figures draw: ``(phases, marks)``."""
    _, hist = training_run(quick)
    found = dynamics.phase_times(hist.steps, hist["accuracy"])
    return found, {f"{name} >= 1/2": found[name] for name in ("forward", "backward", "turning")}


@register("trees-forward-scalars", "Trees II, Theorem 5: loss and the symmetry-reduced scalars of both heads over training, one seed (Figure 9 analogue)")
def scalars(quick: bool = False):
    """The loss and the twelve symmetry-reduced scalars over training, with the phase marks."""
    _, hist = training_run(quick)
    found, marks = phase_marks(quick)
    fig = scalars_figure(hist.steps, hist["loss"], hist["scalars"], marks)
    return fig, {"phases": found, "max_residual": float(hist["residual"].max()), "table": analysis.curve_rows(hist)}


@register("trees-forward-accuracy-by-type", "Trees II, Theorem 5: teacher-forced accuracy of backward, turning and forward steps over training, one seed")
def accuracy_by_type(quick: bool = False):
    """Teacher-forced accuracy of each step type over training."""
    _, hist = training_run(quick)
    found, marks = phase_marks(quick)
    fig = accuracy_by_type_figure(hist.steps, hist["accuracy"], marks, title="teacher-forced accuracy by step type")
    return fig, {"phases": found, "final_accuracy": {name: float(hist["accuracy"][-1, j])
                                                     for j, name in enumerate(STEP_TYPES[:3])}}


@register("trees-forward-roles", "Trees II, Theorem 5: where each head attends over training (traversal target, next-stage tokens) and the sign table, one seed")
def roles(quick: bool = False):
    """Where each head looks over training, the steps at which each head passes a role threshold, and the learned
    signs beside the construction's."""
    A, hist = training_run(quick)
    _, marks = phase_marks(quick)
    fig = roles_figure(hist.steps, hist["roles"], marks)
    return fig, {"role_events": dynamics.role_events(hist.steps, hist["roles"]),
                 "table": dynamics.sign_table(hist.params, A)}


def paper_lr_runs(quick: bool = False) -> dict:
    """Two runs at the summaries' learning rate ``paper_lr`` (``paper_lr_steps`` steps), under the mean and under
    the sum over positions (both with the factor 1/2), data seed 0: ``{"mean": History, "sum": History}``; stored
    beside :func:`training_run`, read once per mode."""
    return _paper_lr_runs(bool(quick))


@functools.lru_cache(maxsize=2)
def _paper_lr_runs(quick: bool) -> dict:
    stored = _stored_runs(quick)
    return {norm: stored_study.history(stored[f"paper-lr-{norm}"]) for norm in ("mean", "sum")}


@register("trees-forward-rescaling", "Trees II, Theorem 5: per-position loss of the main run (lr 2) and of lr 0.2 (mean, sum over positions) against eta_eff t, one seed")
def rescaling(quick: bool = False):
    """The per-position loss of the main run and of the two :func:`paper_lr_runs` against ``eta_eff * t``, and
    (full mode) the losses at equal ``eta_eff * t`` (``pairs``)."""
    s = SETTINGS
    _, hist = training_run(quick)
    short = paper_lr_runs(quick)
    runs, pairs, rows = rescaling_study.loss_curves(hist, short, lr=s.lr, paper_lr=s.paper_lr, m=s.m,
                                                    pairs=None if quick else s.rescaling_pairs)
    fig = rescaling_figure(runs)
    return fig, {"pairs": pairs, "table": rows}


@functools.lru_cache(maxsize=1)
def rescaling_runs() -> dict:
    """The stored rescaling study (``trees-forward-rescaling-seeds``, :mod:`onelayer.studies.trees.forward_rescaling`):
    the runs of :func:`paper_lr_runs` and the main run's first steps, over 20 data seeds."""
    return stored_study.summary(rescaling_study.STUDY)


@register("trees-forward-rescaling-seeds", "Trees II, Theorem 5 (table): lr 0.2 (mean, sum over positions) against lr 2 at equal eta_eff t over 20 data seeds: relative loss gaps on a fixed batch")
def rescaling_seeds(quick: bool = False):
    """The rescaling check over the stored seeds: each run at ``paper_lr`` (mean, sum over positions) against the
    run at ``lr`` (mean) at every recorded step with equal ``eta_eff * t``, losses on one fixed batch
    (:func:`onelayer.studies.trees.forward_rescaling.gap_summary`, tolerance ``rescaling_tol``). ``quick`` reads the same
    stored file."""
    s = SETTINGS
    stored = rescaling_runs()
    table, summaries = rescaling_study.seed_table(stored, lr=s.lr, paper_lr=s.paper_lr, tol=s.rescaling_tol)
    return None, {"seeds": stored["seeds"], "tol": s.rescaling_tol, "table": table,
                  "summaries": {k: {**v, "within": v["within"].text(), "within_k": v["within"].k}
                                for k, v in summaries.items()},
                  "settings": {k: stored[k] for k in ("m", "S", "batch_size", "eval_size", "eval_seed")}}


def _attention_draw(quick: bool):
    A, hist = training_run(quick)
    s = SETTINGS
    tree = perfect_forward_batch(s.m, s.S, 1, numpy_rng(s.scrub_seed))
    return lambda t: attention_by_step_figure(hist.snapshots[t], A, tree, title=f"after {t} training steps")


def attention_steps_player():
    """The precomputed player: both heads' attention on one training tree at the recorded steps ``scrub_steps``."""
    return scrub(_attention_draw(False), SETTINGS.scrub_steps, label="training step", name="trees-forward-attention-steps",
                 fmt="{:d}",
                 alt="Attention of head 1 (swap) and head 2 (stage) at every chain-of-thought step of one depth-3 "
                     "training tree, one row per step and one column per token, after {value} training steps")


@register("trees-forward-attention-steps-frames", "Trees II, Theorem 5 player (frames): attention of both heads at "
                                                  "every step of one depth-3 training tree, over training (one seed)")
def attention_steps_frames(quick: bool = False):
    """The numbers behind every frame of :func:`attention_steps_player` (quick: the frames of the short run)."""
    return None, frame_numbers(_attention_draw(quick), _settings(quick).scrub_steps, labels="training step", fmt="{:d}")


@functools.lru_cache(maxsize=1)
def seeded_runs() -> dict:
    """The stored study ``trees-forward-training-seeds`` (:mod:`onelayer.studies.trees.forward_seeded_training`)."""
    return stored_study.summary(seeded_training.STUDY)


@register("trees-forward-seed-rates", "Trees II, Theorem 5 (table): the two-head run over 20 data seeds: how often each claim holds, and when the heads specialize")
def seed_rates(quick: bool = False):
    """Per stored two-head run (one per data seed): final accuracies, sign agreement, phase order and role events;
    and the rates over runs with Wilson intervals, the mean specialisation steps with t intervals. ``quick`` reads the
    same stored file."""
    two = seeded_runs()["two_head"]
    runs = two["runs"]
    rates, steps, table = seeded_training.seed_readings(runs)
    summary = [{"claim": k, "rate": v.text()} for k, v in rates.items()] + \
              [{"claim": f"step of {k}", "rate": verdicts.runs_mean_text(v)} for k, v in steps.items()]
    return None, {"settings": {k: two[k] for k in ("m", "S", "steps", "lr", "batch_size", "record_every")},
                  "summary": summary, "table": table, "rates": {k: v.text() for k, v in rates.items()}}


def split_curves() -> list[dict]:
    """The learned-value-map split over steps of the stored runs at each threshold of ``lv_thresholds``
    (:func:`onelayer.studies.trees.forward_seeded_training.split_curves`)."""
    return seeded_training.split_curves(seeded_runs()["learned_values"], SETTINGS.lv_thresholds)


def step_range(table: list[dict], name: str) -> str:
    """The first and last step in the column ``name`` of :func:`seed_rates`' per-seed table (``"head 1 traversal"``,
    ``"head 2 stage"``) as ``"a to b"``, or ``"a"`` when every seed has the same step; seeds that never got there are
    left out."""
    steps = sorted(int(r[name]) for r in table if r[name] is not None)
    if not steps:
        raise ValueError(f"no seed reached {name!r}")
    return " to ".join(dict.fromkeys(map(str, (steps[0], steps[-1]))))


def split_at(curves: list[dict], scale: float, threshold: float, step: int, key: str = "node split"):
    """One entry of :func:`split_curves`: the rate ``key`` ("node split", "stage split" or "all chains right") at
    initialisation scale ``scale``, threshold ``threshold`` and recorded step ``step``."""
    found = [r[key] for r in curves if r["init"] == scale and r["threshold"] == threshold and r["step"] == step]  # exact: stored settings
    if not found:
        raise ValueError(f"no split curve at init {scale:g}, threshold {threshold:g}, step {step}")
    return found[0]


@register("trees-forward-lv-split", "Trees II, Theorem 5: learned value maps: share of runs (20 random starts) in which one head writes most of the node blocks, against training steps")
def lv_split(quick: bool = False):
    """The node-block split rate against training steps (Wilson 95% intervals), one line per (initialisation scale,
    threshold). ``quick`` reads the same stored file."""
    rows = split_curves()
    fig = lv_split_figure(rows, SETTINGS.lv_thresholds)
    table = [{"init": r["init"], "threshold": r["threshold"], "step": r["step"], "node split": r["node split"].text(),
              "stage split": r["stage split"].text(), "all chains right": r["all chains right"].text()} for r in rows]
    return fig, {"table": table}


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_forward_training.rows` of the stored seed study, its
    split curves and the rescaling table over data seeds."""
    stored = seeded_runs()
    return verdicts.rows(SETTINGS, two_head=stored["two_head"], learned_values=stored["learned_values"],
                         curves=split_curves(), rescaling=rescaling_seeds()[1])
