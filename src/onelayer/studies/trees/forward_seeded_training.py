"""Training the forward structured models over many seeds at once: rates instead of one run (issue 22).

Two experiments of the chapter "Theorem 5: the heads specialize" are claims about training runs, so they are
measured over seeds with :func:`onelayer.training.train` with ``members=True`` (every member keeps its own parameters and its own
stream of training trees; a member reproduces the separate run of the same seed up to summation order):

* :func:`two_head_seeds`: the two-head model with fixed value maps (head 1 swaps, head 2 copies the stage) from
  zero, one member per *data* seed (zero initialisation leaves the data stream as the only source of chance), as
  :func:`onelayer.studies.trees.analysis.tracked_training` trains it. Every ``record_every`` steps each member's
  teacher-forced accuracy by step type and its :func:`~onelayer.trees.forward.dynamics.role_metrics` are recorded on
  the same fixed batch; :func:`two_head_summary` turns them into each run's phase times, role events, final accuracy
  and sign agreement with the construction.
* :func:`learned_values_seeds`: the structured logits with a trainable dense value map per head
  (:mod:`onelayer.studies.trees.forward_learned_values`), one member per initialisation seed (the seed also draws the
  training trees, as :func:`~onelayer.studies.trees.forward_learned_values.train_learned_values`), recorded at chosen steps:
  each head's share of the node blocks and of the stage block, and the teacher-forced chain rate.
  :func:`split_curve` turns them into the rate of runs whose split exceeds a threshold at each recorded step.

The study ``trees-forward-training-seeds`` (:data:`STUDY`; ``python -m onelayer study trees-forward-training-seeds``)
runs both with the chapter's settings and stores them: one member per batched call of the pre-runner script (the
two-head model; the learned value maps at each initialisation scale), its seeds trained together as above, so its
numbers are that script's. About five minutes of one core (about fifteen on a shared, loaded machine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import BatchedHistory, stack_params, train
from ...rates import mean_interval, rate
from ...validation import check_float, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings, one_hot_embeddings
from ...trees.shared.data import LossOptions
from ...trees.forward.model import ForwardArchitecture, init_params, member_inputs, member_loss, two_head
from ...trees.forward.decoding import accuracy_by_type, teacher_forced_correct
from ...trees.forward.dynamics import role_events, phase_times, role_metrics, sign_table
from ...trees.forward.layout import STEP_TYPES, forward_target_vectors, perfect_forward_batch
from ..runner import Member, Study
from .forward_learned_values import division_of_labour, learned_value_params, lv_head_outputs, lv_teacher_forced_correct
from .stored_study import float64

__all__ = ["stacked_data", "batched_structured_loss", "two_head_seeds", "two_head_summary", "learned_values_seeds",
           "split_curve", "theorem5_holds", "specialized", "seed_readings", "split_curves", "Settings", "members", "run_member", "summarize", "STUDY"]


def stacked_data(A: torch.Tensor, m: int, batch_size: int, rngs: Sequence[np.random.Generator]) -> dict:
    """One fresh batch of ``batch_size`` perfect trees of depth ``m`` per member, drawn from that member's generator,
    stacked along a leading member axis: tokens ``X (R, B, L, 2d+2)``, targets ``Y (R, B, K, 2d+2)``, ``query``,
    ``keymask (R, B, K, L)`` and ``target_mask (R, B, K)``. Perfect trees of one depth share every length."""
    A = check_embeddings(A)
    m = check_int("m", m, low=1, high=8)
    batch_size = check_int("batch_size", batch_size, low=1)
    if not rngs or not all(isinstance(r, np.random.Generator) for r in rngs):
        raise TypeError("rngs must be a non-empty sequence of numpy Generators")
    return member_inputs([perfect_forward_batch(m, A.shape[1], batch_size, rng) for rng in rngs], A)


def batched_structured_loss(params: dict, data: dict, *, values, options: LossOptions = LossOptions()) -> torch.Tensor:
    """Each member's teacher-forced squared loss ``(R,)`` (:func:`onelayer.trees.forward.model.member_loss`) for
    structured logits with fixed ``values`` roles (a tuple such as ``("swap", "stage")``) or ``values="learned"``
    (dense value maps ``WV1, WV2, ...``)."""
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    if values != "learned" and not (isinstance(values, tuple) and values):
        raise ValueError("values must be 'learned' or a non-empty tuple of head roles")
    roles = ("learned",) * sum(1 for n in params if n.startswith("WV")) if values == "learned" else values
    return member_loss(params, ForwardArchitecture("structured", roles), data, options)


def _member(params: dict, b: int) -> dict:
    return {n: p[b] for n, p in params.items()}


def two_head_seeds(A: torch.Tensor, *, m: int = 3, steps: int = 1000, lr: float = 2.0, batch_size: int = 256,
                   seeds: Sequence[int] = tuple(range(20)), options: LossOptions = LossOptions(),
                   record_every: int = 20, eval_size: int = 256, eval_seed: int = 123) -> BatchedHistory:
    """The two-head model (fixed value maps) from zero, one member per data seed, trained together.

    Member ``b`` draws its training trees from ``numpy.random.default_rng(seeds[b])``, as
    :func:`~onelayer.studies.trees.analysis.tracked_training` with ``seed=seeds[b]`` does. Records every
    ``record_every`` steps, on the fixed batch of ``eval_size`` training trees (seed ``eval_seed``):
    ``"accuracy"`` ``(T, R, 3)`` (backward, turning, forward) and ``"roles"`` ``(T, R, 12)``.
    """
    A = check_embeddings(A)
    seeds = check_int_sequence("seeds", seeds, low=0)
    m = check_int("m", m, low=1, high=8)
    arch = two_head()
    ev = perfect_forward_batch(m, A.shape[1], check_int("eval_size", eval_size, low=1),
                               np.random.default_rng(check_int("eval_seed", eval_seed, low=0)))
    rngs = [np.random.default_rng(s) for s in seeds]
    init = stack_params([init_params(arch, A) for _ in seeds])

    def loss_fn(p):
        return batched_structured_loss(p, stacked_data(A, m, batch_size, rngs), values=arch.roles, options=options)

    def accuracy(p):
        out = []
        for b in range(len(seeds)):
            acc = accuracy_by_type(teacher_forced_correct(_member(p, b), arch, A, ev), ev)
            out.append([acc[name] for name in STEP_TYPES[:3]])
        return np.asarray(out)

    def roles(p):
        return np.stack([role_metrics(_member(p, b), arch, A, ev) for b in range(len(seeds))])

    return train(init, loss_fn, members=True, steps=check_int("steps", steps, low=1), lr=lr,
                      record={"accuracy": accuracy, "roles": roles}, record_every=record_every)


def two_head_summary(hist: BatchedHistory, A: torch.Tensor, seeds: Sequence[int]) -> list[dict]:
    """One dict per member of :func:`two_head_seeds`: its phase times (accuracy 1/2 per step type) and their
    order, its role events (:func:`~onelayer.trees.forward.dynamics.role_events`), its final accuracies and the
    count of non-zero construction entries whose learned sign agrees."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    if hist.size != len(seeds):
        raise ValueError(f"seeds must have one entry per member ({hist.size}), got {len(seeds)}")
    rows = []
    for b, seed in enumerate(seeds):
        acc, roles = hist["accuracy"][:, b], hist["roles"][:, b]
        table = sign_table(_member(hist.params, b), A)
        fixed = [r for r in table if r["agree"] != "free"]
        rows.append({"seed": int(seed), "phases": phase_times(hist.steps, acc),
                     "events": role_events(hist.steps, roles),
                     "final_accuracy": [float(v) for v in acc[-1]],
                     "signs_agree": sum(r["agree"] == "yes" for r in fixed), "signs_fixed": len(fixed)})
    return rows


def learned_values_seeds(A: torch.Tensor, *, m: int = 2, steps: int = 1200, lr: float = 2.0, heads: int = 2,
                         init_scale: float = 0.01, seeds: Sequence[int] = tuple(range(20)), batch_size: int = 128,
                         record_at: Sequence[int] = (300, 600, 1200), options: LossOptions = LossOptions(),
                         eval_size: int = 128, eval_seed: int = 50_000) -> BatchedHistory:
    """The learned-value-map model, one member per seed, trained together.

    Member ``b`` starts from :func:`~onelayer.studies.trees.forward_learned_values.learned_value_params` with generator seed
    ``10_000 + seeds[b]`` and draws its trees from ``numpy.random.default_rng(seeds[b])``, as
    :func:`~onelayer.studies.trees.forward_learned_values.train_learned_values` does. Records at ``record_at`` (and steps 0
    and ``steps``), on the fixed batch of ``eval_size`` trees (seed ``eval_seed``): ``"node_share"`` and
    ``"stage_share"`` ``(T, R, heads)`` (:func:`~onelayer.studies.trees.forward_learned_values.division_of_labour`) and
    ``"chain"`` ``(T, R)`` (share of teacher-forced chains right at every step).
    """
    A = check_embeddings(A)
    seeds = check_int_sequence("seeds", seeds, low=0)
    m = check_int("m", m, low=1, high=8)
    init_scale = check_float("init_scale", init_scale, low=0.0)
    steps = check_int("steps", steps, low=1)
    record_at = check_int_sequence("record_at", record_at, low=0, high=steps)
    ev = perfect_forward_batch(m, A.shape[1], check_int("eval_size", eval_size, low=1),
                               np.random.default_rng(check_int("eval_seed", eval_seed, low=0)))
    Y = forward_target_vectors(ev, A)
    rngs = [np.random.default_rng(s) for s in seeds]
    init = stack_params([learned_value_params(A, heads=heads, init_scale=init_scale,
                                              gen=torch.Generator().manual_seed(10_000 + s)) for s in seeds])

    def loss_fn(p):
        return batched_structured_loss(p, stacked_data(A, m, batch_size, rngs), values="learned", options=options)

    def shares(p):
        out = []
        for b in range(len(seeds)):
            dol = division_of_labour(lv_head_outputs(_member(p, b), A, ev), Y, ev.target_mask)
            out.append([dol["node_share"], dol["stage_share"]])
        return np.asarray(out)  # (R, 2, heads)

    def chain(p):
        return np.asarray([float((lv_teacher_forced_correct(_member(p, b), A, ev) | ~ev.target_mask).all(1)
                                 .double().mean()) for b in range(len(seeds))])

    return train(init, loss_fn, members=True, steps=steps, lr=lr, record={"shares": shares, "chain": chain},
                      record_every=steps, record_at=list(record_at))


def split_curve(node_share, *, threshold: float) -> list:
    """Rates over steps: ``node_share`` ``(T, R, heads)`` (one row per recorded step) -> one
    :class:`~onelayer.rates.Rate` per step, the runs in which one head writes at least ``threshold`` of the node
    blocks."""
    threshold = check_float("threshold", threshold, low=0.0, high=1.0, low_open=True)
    shares = np.asarray(node_share, dtype=np.float64)
    if shares.ndim != 3 or shares.shape[1] < 1:
        raise ValueError(f"node_share must have shape (steps, runs, heads), got {shares.shape}")
    top = shares.max(-1)
    return [rate(int((row >= threshold).sum()), row.size) for row in top]


def _interval(values) -> dict:
    vals = [float(v) for v in values if np.isfinite(v)]
    if len(vals) < 2:
        return {"n": len(vals), "mean": float(vals[0]) if vals else float("nan"), "low": float("nan"), "high": float("nan")}
    mean, low, high = mean_interval(vals)
    return {"n": len(vals), "mean": float(mean), "low": float(low), "high": float(high)}


def _json_safe(x):
    """``nan`` (a role or phase never reached) as ``None``, recursively."""
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v) for v in x]
    if isinstance(x, float) and not np.isfinite(x):
        return None
    return x


@dataclass(frozen=True)
class Settings:
    """The study's settings (the pre-runner script's): ``seeds`` seeds ``0 .. seeds - 1``; the two-head model at
    ``m = 3``, ``S = 25`` (one-hot), learning rate 2, batch 256, recorded every 20 steps, for ``two_head_steps``; the
    learned value maps at ``m = 2``, ``S = 17``, learning rate 2, batch 128, for ``lv_steps``, recorded at
    ``lv_record_at``, from each initialisation scale of ``lv_scales``."""

    seeds: int = 20
    two_head_steps: int = 1000
    lv_steps: int = 1800
    lv_record_at: tuple[int, ...] = (300, 600, 1200, 1800)
    lv_scales: tuple[float, ...] = (0.01, 0.1)


def _lv_key(scale: float) -> str:
    return f"learned-values-init{scale:g}"


def members(settings: Settings) -> list[Member]:
    """``two-head`` and ``learned-values-init<scale>`` (one per initialisation scale), each over every seed."""
    seeds = check_int("seeds", settings.seeds, low=1)
    return [Member("two-head", {"part": "two_head"}, cost=float(settings.two_head_steps * 256 * seeds))] + \
        [Member(_lv_key(scale), {"part": "learned_values", "init_scale": float(scale)},
                cost=float(settings.lv_steps * 128 * seeds)) for scale in settings.lv_scales]


def run_member(settings: Settings, member: Member) -> dict:
    """The two-head model over every seed (settings and one summary per run, :func:`two_head_summary`), or the
    learned value maps at one initialisation scale (shares, chain rates and losses at the recorded steps)."""
    seed_list = list(range(settings.seeds))
    with float64():
        if member.fields["part"] == "two_head":
            A = one_hot_embeddings(25)
            hist = two_head_seeds(A, m=3, steps=settings.two_head_steps, seeds=seed_list)
            return {"m": 3, "S": 25, "steps": settings.two_head_steps, "lr": 2.0, "batch_size": 256, "record_every": 20,
                    "runs": _json_safe(two_head_summary(hist, A, seed_list))}
        scale = member.fields["init_scale"]
        h = learned_values_seeds(one_hot_embeddings(17), m=2, steps=settings.lv_steps, init_scale=scale, seeds=seed_list,
                                 record_at=settings.lv_record_at)
    return {"init_scale": float(scale), "m": 2, "S": 17, "lr": 2.0, "batch_size": 128,
            "steps": [int(t) for t in h.steps], "node_share": h["shares"][:, :, 0].tolist(),
            "stage_share": h["shares"][:, :, 1].tolist(), "chain": h["chain"].tolist(), "loss": h["loss"].tolist()}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: ``seeds``, ``two_head`` and ``learned_values`` (one entry per initialisation scale, in
    the settings' order)."""
    by_key = {r["key"]: r["result"] for r in records}
    return {"seeds": list(range(settings.seeds)), "two_head": by_key["two-head"],
            "learned_values": [by_key[_lv_key(scale)] for scale in settings.lv_scales]}


STUDY = Study(name="trees-forward-training-seeds", stored="trees/data/forward_training_seeds.json",
              kind="trees-forward-training-seeds", settings=Settings(),
              quick=Settings(seeds=2, two_head_steps=20, lv_steps=10, lv_record_at=(5, 10), lv_scales=(0.01,)),
              members=members, run_member=run_member, summarize=summarize,
              description="Trees II, Theorem 5: the two-head run and the learned-value-map split over 20 seeds each")


def theorem5_holds(run: dict) -> bool:
    """A stored two-head run (one of ``two_head["runs"]``) has every step type right and every construction sign."""
    return min(run["final_accuracy"]) == 1.0 and run["signs_agree"] == run["signs_fixed"]  # exact: shares of right steps


def specialized(run: dict) -> bool:
    """A stored two-head run's heads specialize: head 1 takes the traversal role and head 2 the stage role, neither the
    other's."""
    e = run["events"]
    return e["head1 traversal"] is not None and e["head2 stage"] is not None and e["head1 stage"] is None \
        and e["head2 traversal"] is None


def split_curves(blocks: Sequence[dict], thresholds: Sequence[float]) -> list[dict]:
    """The learned-value-map split over steps: for each stored block (``learned_values`` of the summary, one per
    initialisation scale) and each threshold of ``thresholds``, the rate of runs in which one head writes at least that
    share of the node blocks (and of the stage block) at each recorded step, and the share of runs with every chain
    right."""
    out = []
    for block in blocks:
        steps = block["steps"]
        for threshold in thresholds:
            node = split_curve(block["node_share"], threshold=threshold)
            stage = split_curve(block["stage_share"], threshold=threshold)
            chain = np.asarray(block["chain"])
            for i, t in enumerate(steps):
                if t == 0:
                    continue
                out.append({"init": block["init_scale"], "threshold": threshold, "step": int(t),
                            "node split": node[i], "stage split": stage[i],
                            "all chains right": rate(int((chain[i] == 1.0).sum()), chain.shape[1])})  # exact: a share of 128 chains
    return out


def seed_readings(runs: Sequence[dict]) -> tuple[dict, dict, list[dict]]:
    """The stored two-head runs (``two_head["runs"]``, one per data seed) read: the rates over runs of Theorem 5
    (:func:`theorem5_holds`), of the phase order ``forward < backward < turning`` and of the heads' specialisation
    (:func:`specialized`); the steps of the role events and phases per run; one table row per run."""
    n = len(runs)
    order = "forward < backward < turning"
    rates = {"theorem 5 (all step types right, all construction signs)": rate(sum(map(theorem5_holds, runs)), n),
             "phase order " + order: rate(sum(r["phases"]["order"] == order for r in runs), n),
             "heads specialize (each takes its own role only)": rate(sum(map(specialized, runs)), n)}
    steps = {"head 1 traversal": [r["events"]["head1 traversal"] for r in runs],
             "head 2 stage": [r["events"]["head2 stage"] for r in runs],
             **{f"{k} accuracy 1/2": [r["phases"][k] for r in runs] for k in ("forward", "backward", "turning")}}
    table = [{"seed": r["seed"], "final accuracy (b, t, f)": [round(v, 4) for v in r["final_accuracy"]],
              "signs": f"{r['signs_agree']} of {r['signs_fixed']}", "order": r["phases"]["order"],
              "head 1 traversal": r["events"]["head1 traversal"], "head 2 stage": r["events"]["head2 stage"]}
             for r in runs]
    return rates, steps, table
