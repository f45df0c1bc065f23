"""The learning rate and the loss normalisation only rescale time, measured over many data seeds (issue 22).

The chapter "Theorem 5: the heads specialize" trains at learning rate 2 under the per-position mean loss, ten times
the summaries' 0.2, and claims that the learning rate and the normalisation only rescale time: runs at equal
``eta_eff * t`` (``eta_eff`` the learning rate times the factor the normalisation puts in front of the per-position
mean, ``2m + 1`` for the sum over the chain's positions) are at the same point of one trajectory. From zero the
parameters start fixed, but every step draws a fresh batch of training trees, so a run depends on its data seed, and
the comparison is made over seeds.

:func:`rescaling_seeds` trains the two-head model (fixed value maps, as
:func:`onelayer.studies.trees.analysis.tracked_training`) for each run setting ``(reduction, lr, steps,
record_every)``, one member per data seed (member ``b`` draws its trees from ``numpy.random.default_rng(seeds[b])``,
as :func:`~onelayer.trees.forward.model.train_forward` with ``seed=seeds[b]``; a member reproduces that separate run
up to summation order), with :func:`onelayer.training.train` with ``members=True``. At every recorded step it evaluates each member's
loss, per-position mean with the factor 1/2, on one fixed batch of training trees, so that the comparison is between
parameters, not between the mini-batches they were trained on. :func:`compare` puts two runs side by side at the
recorded steps where their ``eta_eff * t`` coincide.

The study ``trees-forward-rescaling-seeds`` (:data:`STUDY`; ``python -m onelayer study trees-forward-rescaling-seeds``)
runs the chapter's three settings over 20 seeds: one member per run setting, its 20 seeds trained together as above
(so a member is the batched call the pre-runner script made, and its numbers are that script's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import BatchedHistory, stack_params, train
from ...rates import mean_interval, rate
from ...validation import check_choice, check_float, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings, one_hot_embeddings
from ...trees.shared.data import REDUCTIONS, LossOptions
from ...trees.forward.model import init_params, two_head
from ..runner import Member, Study
from .forward_seeded_training import batched_structured_loss, stacked_data
from .stored_study import float64

__all__ = ["RUNS", "eta_eff", "rescaling_seeds", "compare", "gap_summary", "percent_text", "seed_table", "loss_curves", "Settings", "members", "run_member",
           "summarize", "STUDY"]

#: The chapter's three run settings ``(reduction, lr, steps, record_every)``: the summaries' learning rate 0.2 under
#: the mean and under the sum over positions, and the chapter's learning rate 2 under the mean, recorded every 2
#: steps so that its ``eta_eff * t`` meets both others' (multiples of 4 and of 28 for ``m = 3``).
RUNS: tuple[tuple[str, float, int, int], ...] = (("mean", 0.2, 200, 20), ("sum", 0.2, 200, 20), ("mean", 2.0, 140, 2))


def eta_eff(reduction: str, lr: float, m: int) -> float:
    """The effective step size on the per-position mean scale: ``lr`` for the mean, ``lr * (2m + 1)`` for the sum
    over the chain's ``2m + 1`` positions (every perfect tree of depth ``m`` has that many), rounded to 12 decimals
    (0.2 * 7 is 1.4, not 1.4000000000000001)."""
    check_choice("reduction", reduction, REDUCTIONS)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    m = check_int("m", m, low=1, high=8)
    return round(lr * (2 * m + 1 if reduction == "sum" else 1), 12)


def _check_runs(runs) -> tuple[tuple[str, float, int, int], ...]:
    if not isinstance(runs, (list, tuple)) or not runs:
        raise TypeError("runs must be a non-empty sequence of (reduction, lr, steps, record_every)")
    out = []
    for run in runs:
        if not isinstance(run, (list, tuple)) or len(run) != 4:
            raise ValueError(f"every run must be (reduction, lr, steps, record_every), got {run!r}")
        reduction, lr, steps, every = run
        out.append((check_choice("reduction", reduction, REDUCTIONS), check_float("lr", lr, low=0.0, low_open=True),
                    check_int("steps", steps, low=1), check_int("record_every", every, low=1)))
    return tuple(out)


def rescaling_seeds(A: torch.Tensor, *, m: int = 3, batch_size: int = 256, seeds: Sequence[int] = tuple(range(20)),
                    runs=RUNS, eval_size: int = 256, eval_seed: int = 123) -> list[BatchedHistory]:
    """One batched run per entry of ``runs`` (``(reduction, lr, steps, record_every)``), one member per data seed,
    from zero. Each history records ``"eval_loss"`` ``(T, R)``: the loss under the per-position mean with the factor
    1/2 on the fixed batch of ``eval_size`` training trees drawn with seed ``eval_seed`` (the batch
    :func:`~onelayer.studies.trees.analysis.tracked_training` evaluates on)."""
    A = check_embeddings(A)
    m = check_int("m", m, low=1, high=8)
    batch_size = check_int("batch_size", batch_size, low=1)
    seeds = check_int_sequence("seeds", seeds, low=0)
    runs = _check_runs(runs)
    eval_size = check_int("eval_size", eval_size, low=1)
    eval_seed = check_int("eval_seed", eval_seed, low=0)
    arch = two_head()
    ev = stacked_data(A, m, eval_size, [np.random.default_rng(eval_seed) for _ in seeds])  # one batch, R copies
    out = []
    for reduction, lr, steps, every in runs:
        rngs = [np.random.default_rng(s) for s in seeds]
        options = LossOptions(reduction, True)

        def loss_fn(p, rngs=rngs, options=options):
            return batched_structured_loss(p, stacked_data(A, m, batch_size, rngs), values=arch.roles, options=options)

        def eval_loss(p):
            return batched_structured_loss(p, ev, values=arch.roles).numpy()

        init = stack_params([init_params(arch, A) for _ in seeds])
        out.append(train(init, loss_fn, members=True, steps=steps, lr=lr, record={"eval_loss": eval_loss}, record_every=every))
    return out


def compare(a: dict, b: dict) -> list[dict]:
    """Two stored runs (``{"eta_eff": float, "steps": [...], "eval_loss": (T, R)}``) at every recorded step of ``a``
    whose ``eta_eff * t`` is also a recorded ``eta_eff * t`` of ``b`` (matched to 9 digits, 0 left out): one dict per
    such point with ``eta_t``, the two steps, both runs' losses ``(R,)`` and the relative gaps
    ``|loss_a - loss_b| / loss_b`` ``(R,)``."""
    for name, run in (("a", a), ("b", b)):
        if not isinstance(run, dict) or not {"eta_eff", "steps", "eval_loss"} <= set(run):
            raise TypeError(f"{name} must be a stored run with eta_eff, steps and eval_loss")
    times_b = {round(b["eta_eff"] * t, 9): i for i, t in enumerate(b["steps"])}
    la, lb = np.asarray(a["eval_loss"], dtype=np.float64), np.asarray(b["eval_loss"], dtype=np.float64)
    if la.shape[1:] != lb.shape[1:]:
        raise ValueError(f"a and b must have the same members, got {la.shape[1:]} and {lb.shape[1:]}")
    rows = []
    for i, t in enumerate(a["steps"]):
        key = round(a["eta_eff"] * t, 9)
        if t == 0 or key not in times_b:
            continue
        j = times_b[key]
        rows.append({"eta_t": key, "step_a": int(t), "step_b": int(b["steps"][j]), "loss_a": la[i], "loss_b": lb[j],
                     "gap": np.abs(la[i] - lb[j]) / lb[j]})
    return rows


def gap_summary(a: dict, b: dict, *, tol: float) -> dict:
    """What :func:`compare` finds, over seeds: the common ``eta_t`` points, the largest relative gap over points and
    seeds, the seeds whose every gap is below ``tol`` (a :class:`~onelayer.rates.Rate`), how many (point, seed) pairs
    have ``loss_a < loss_b``, and at the last common point the steps, both mean losses, the mean gap with its t
    interval and the seed-to-seed spread of ``loss_b`` (sample standard deviation over the mean)."""
    tol = check_float("tol", tol, low=0.0, low_open=True)
    points = compare(a, b)
    if not points:
        raise ValueError("a and b have no common eta_eff * t beyond 0")
    gaps = np.stack([p["gap"] for p in points])  # (points, seeds)
    last = points[-1]
    mean, low, high = mean_interval(last["gap"])
    return {"eta_t": [p["eta_t"] for p in points], "seeds": int(gaps.shape[1]), "largest_gap": float(gaps.max()),
            "within": rate(int((gaps.max(0) < tol).sum()), int(gaps.shape[1])),
            "a_below": int(sum((p["loss_a"] < p["loss_b"]).sum() for p in points)), "pairs": int(gaps.size),
            "last": {"eta_t": last["eta_t"], "step_a": last["step_a"], "step_b": last["step_b"],
                     "loss_a": float(last["loss_a"].mean()), "loss_b": float(last["loss_b"].mean()),
                     "gap": (mean, low, high), "spread": float(last["loss_b"].std(ddof=1) / last["loss_b"].mean())}}


@dataclass(frozen=True)
class Settings:
    """The study's settings (the pre-runner script's): one-hot embeddings, ``m = 3``, ``S = 25``, batch 256, ``seeds``
    data seeds ``0 .. seeds - 1`` per run setting of ``runs``, losses on the fixed batch of ``eval_size`` trees drawn
    with ``eval_seed``."""

    seeds: int = 20
    m: int = 3
    S: int = 25
    batch_size: int = 256
    runs: tuple[tuple[str, float, int, int], ...] = RUNS
    eval_size: int = 256
    eval_seed: int = 123


def _key(run) -> str:
    reduction, lr, steps, every = run
    return f"{reduction}-lr{lr:g}-t{steps}-every{every}"


def members(settings: Settings) -> list[Member]:
    """One member per run setting, e.g. ``mean-lr0.2-t200-every20`` (its ``seeds`` members trained together)."""
    return [Member(_key(run), {"reduction": run[0], "lr": run[1], "steps": run[2], "record_every": run[3]},
                   cost=float(run[2] * settings.seeds)) for run in _check_runs(settings.runs)]


def run_member(settings: Settings, member: Member) -> dict:
    """One run setting over every seed: the stored run (``eta_eff``, recorded ``steps``, ``eval_loss`` and
    ``train_loss``, one column per seed)."""
    f = member.fields
    with float64():
        (h,) = rescaling_seeds(one_hot_embeddings(settings.S), m=settings.m, batch_size=settings.batch_size,
                               seeds=list(range(settings.seeds)),
                               runs=((f["reduction"], f["lr"], f["steps"], f["record_every"]),),
                               eval_size=settings.eval_size, eval_seed=settings.eval_seed)
    return {"reduction": f["reduction"], "lr": f["lr"], "steps_run": f["steps"],
            "eta_eff": eta_eff(f["reduction"], f["lr"], settings.m), "steps": [int(t) for t in h.steps],
            "eval_loss": h["eval_loss"].tolist(), "train_loss": h["loss"].tolist()}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: the settings it prints and the runs in the order of ``settings.runs``."""
    by_key = {r["key"]: r["result"] for r in records}
    return {"seeds": list(range(settings.seeds)), "m": settings.m, "S": settings.S, "batch_size": settings.batch_size,
            "eval_size": settings.eval_size, "eval_seed": settings.eval_seed,
            "runs": [by_key[_key(run)] for run in settings.runs]}


STUDY = Study(name="trees-forward-rescaling-seeds", stored="trees/data/forward_rescaling_seeds.json",
              kind="trees-forward-rescaling-seeds", settings=Settings(),
              quick=Settings(seeds=2, m=2, S=15, batch_size=16, runs=(("mean", 0.2, 8, 4), ("sum", 0.2, 8, 4),
                                                                       ("mean", 2.0, 4, 1)), eval_size=16),
              members=members, run_member=run_member, summarize=summarize,
              description="Trees II, Theorem 5: learning rate 0.2 (mean, sum over positions) against 2 at equal "
                          "eta_eff t, 20 seeds")


def percent_text(x: float) -> str:
    """``x`` as a percentage with three decimals (``0.01234`` -> ``1.234%``)."""
    return f"{100 * x:.3f}%"


def seed_table(stored: dict, *, lr: float, paper_lr: float, tol: float) -> tuple[list[dict], dict]:
    """The stored study's runs at ``paper_lr`` (mean, sum over positions) against its run at ``lr`` (mean) at every
    recorded step with equal ``eta_eff * t`` (:func:`gap_summary`, tolerance ``tol``): one table row per run and the
    gap summaries by reduction."""
    def run(reduction, lr):
        found = [r for r in stored["runs"] if r["reduction"] == reduction and r["lr"] == lr]  # exact: stored settings
        if not found:
            raise ValueError(f"the stored rescaling study has no run at lr {lr:g} ({reduction}); rerun "
                             f"python -m onelayer study trees-forward-rescaling-seeds")
        return found[0]

    main = run("mean", lr)
    table, summaries = [], {}
    for reduction in ("mean", "sum"):
        other = run(reduction, paper_lr)
        g = gap_summary(other, main, tol=tol)
        summaries[reduction] = g
        last, (mean, low, high) = g["last"], g["last"]["gap"]
        table.append({"run": f"lr {paper_lr:g} ({reduction})", "eta_eff t": f"{g['eta_t'][0]:g} to {g['eta_t'][-1]:g}",
                      "points": len(g["eta_t"]), "steps at the end": f"{last['step_a']} vs {last['step_b']}",
                      "gap at the end": f"{percent_text(mean)} [{percent_text(low)[:-1]}, {percent_text(high)[:-1]}]",
                      "largest gap": percent_text(g["largest_gap"]), "seeds within tol": g["within"].text()})
    return table, summaries


def loss_curves(hist, short: dict, *, lr: float, paper_lr: float, m: int, pairs=None):
    """The per-position loss (mean, 1/2) of the main run ``hist`` (``lr``, mean) and of the two runs ``short`` at ``paper_lr``
    (``"mean"``, ``"sum"`` over the ``2m + 1`` positions) against ``eta_eff * t``: ``(runs, pairs, rows)``, ``runs``
    label -> (steps, loss, eta_eff, loss factor) as the figure draws them, ``pairs`` the losses at the two step pairs
    ``((t_mean, t_main), (t_sum, t_main))`` of equal ``eta_eff * t`` (``None`` without ``pairs``), ``rows`` one per
    recorded step of each run."""
    positions = 2 * m + 1  # the sum over the chain's positions is the mean times their number
    # (eta_eff of the sum: paper_lr * positions, rounded to the decimal it is, 1.4, not 1.4000000000000001)
    # label -> (steps, loss, effective step size, loss factor), as the chapter draws them
    runs = {f"lr {lr:g}, mean (main run)": (hist.steps, hist["loss"], lr, 1.0),
            f"lr {paper_lr:g}, mean": (short["mean"].steps, short["mean"]["loss"], paper_lr, 1.0),
            f"lr {paper_lr:g}, sum over positions": (short["sum"].steps, short["sum"]["loss"],
                                                       round(paper_lr * positions, 12), float(positions))}
    if pairs is not None:  # the chapter's two comparisons at equal eta_eff * t
        (ta, tb), (tc, td) = pairs
        pairs = [{"a": f"lr {paper_lr:g}, mean, t={ta}", "loss_a": float(short["mean"].at("loss", ta)),
                  "b": f"lr {lr:g}, mean, t={tb}", "loss_b": float(hist.at("loss", tb))},
                 {"a": f"lr {paper_lr:g}, sum/{positions}, t={tc}", "loss_a": float(short["sum"].at("loss", tc) / positions),
                  "b": f"lr {lr:g}, mean, t={td}", "loss_b": float(hist.at("loss", td))}]
    rows = [{"run": label, "step": int(t), "eta_eff_t": float(eta * t), "loss_mean_half": float(loss[i] / factor)}
            for label, (steps, loss, eta, factor) in runs.items() for i, t in enumerate(steps)]
    return runs, pairs, rows
