"""Scaling of backward training with the tree size: steps to converge and wall time against depth and labels.

What is measured
----------------
The backward model (:mod:`onelayer.trees.backward.model`, one-hot embeddings,
``B = 0`` at the start, loss = mean over chain-of-thought positions of
``1/2 ||y_hat - y||^2``, learning rate 1, as in the chapter on Theorem 3) is
trained on perfect binary trees of depth ``m`` whose labels are drawn from
``[S]``. Two sweeps:

* **depth**: ``m = 2..6`` with ``S = n = 2^(m+1) - 1`` (every label used, as in
  the paper's ``m = 4, S = 31``);
* **labels**: ``m = 3`` fixed (``n = 15`` nodes) and ``S = 15 .. 255``.

For every size two measurements of the number of steps to converge:

* the exact population recursion in the reduced coordinates ``(h1, h2)``
  (:func:`population_run`: the recursion of
  :func:`onelayer.trees.backward.dynamics.population_gd`, written in closed form so that
  ``m = 6`` takes about a second; tested against it to ``1e-12``), computed live;
* eight sampled runs of mini-batch SGD (batch 256, a fresh batch every step,
  the paper's protocol; ``protocol="fixed"`` gives full-batch GD on a fixed
  sample instead), trained together in one
  :func:`~onelayer.trees.backward.batched.train_backward_members` call (seeds
  0..7); their convergence is measured on a shared batch of 256 fresh
  training trees at about 300 recorded steps (finest, about 0.4% of the step
  count, near the population's crossings). Up to ``m = 5`` (and ``S = 127`` at
  ``m = 3``) these take about 17 minutes on one core and are stored in
  ``book/trees/data/scaling.json`` (:func:`main`; ``make sweeps``).

Result of the stored runs: the eight seeds cross within 4 steps of each other
and 0.1-0.3% after the population recursion (default criterion; the loss
criterion alike; teacher-forced accuracy 100% on 256 trees comes 1-4% later
than in the population, a stricter finite-sample test), and their attention on
the correct edge stays within 1e-3 of the population curve along the whole run
(:func:`trajectory_gaps`): at batch 256, SGD follows the population recursion.

Convergence criterion (:class:`Criterion`)
------------------------------------------
Default: the first step at which the mean teacher-forced attention on the
correct edge reaches 0.9 (``Criterion("attention", 0.9)``). Theorem 1's
mechanism is exactly this attention becoming one-hot, so the criterion
measures the quantity the theory is about; at 0.9 the sharp transition is
complete at every size (the loss is then about 1% of its initial value), the
exact population recursion gives it deterministically, and it does not depend
on the unknown loss normalisation. The alternatives are options:
``"accuracy"`` (teacher-forced accuracy reaches ``threshold``, default 1.0;
this happens much earlier, when the attention on the correct edge is only
about ``2/N``, so it marks the end of the symmetric start rather than
convergence) and ``"loss"`` (loss at most ``threshold`` times its initial
value, default 0.01).

Theory
------
The paper's visible statements (spec section 6) give no rate in ``m`` or
``S``; the spec guesses a bound ``O(poly(n)/(eta t))`` and a size-dependent
step-size threshold. The reduced recursion suggests a heuristic of its own.
At ``B = 0`` the attention is uniform over the ``N`` visible tokens, so the
diagonal ``h1`` moves at rate ``~ (eta / S) / N`` (the ``1/S`` is the share of
one diagonal entry in the population gradient, the ``1/N`` the weight of the
correct edge); the margin needs an ``O(1)`` change before the correct edge
stands out, and then ``O(log N)`` more, at a rate ``~ eta / S``, to carry
most of the attention. Hence ``T ~ (S / eta) (c1 N + c0)``: exactly
proportional to ``S`` at fixed depth, and to ``n^2`` only once ``c1 N``
dominates ``c0``. Measured with the population recursion (lr 1):

* labels sweep (``m = 3``, ``S = 15..255``): slope 1.02 in ``S`` for every criterion;
* depth sweep, ``S = n``: with the accuracy criterion (end of the symmetric
  start) ``T / (S N)`` settles from 0.30 at ``m = 2`` to 0.249 at ``m = 5, 6``
  (slope 2.01 in ``N``); with the default
  criterion ``T ~ S (0.55 N + 35)`` to within 5% (:func:`linear_model`), so the
  fitted slope in ``n`` over ``m = 2..6`` is only 1.35, with local slopes
  (:func:`local_slopes`) rising 1.21, 1.29, 1.40, 1.54 towards 2.

The forward task is not re-run here: :func:`forward_steps_vs_depth` reads the
stored heads x depth sweep of :mod:`onelayer.trees.forward.limits`.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..plots import new_figure
from ..scaling import crossing_steps, fit_power_law, loglog_panel
from ..validation import check_bool, check_choice, check_float, check_int, check_int_sequence
from .backward import batched as backward_batched
from .backward.dynamics import canonical_batch
from .backward.layout import perfect_tree_batch
from .shared.embeddings import one_hot_embeddings
from .shared.losses import LossOptions

__all__ = [
    "CRITERIA",
    "DEFAULT_THRESHOLDS",
    "DEPTHS",
    "LABEL_DEPTH",
    "LABEL_SIZES",
    "SAMPLED_DEPTHS",
    "SAMPLED_LABEL_SIZES",
    "STORED",
    "FORWARD_SWEEP",
    "Criterion",
    "nodes",
    "tokens",
    "population_run",
    "population_steps",
    "sampled_run",
    "size_grid",
    "population_rows",
    "sampled_rows",
    "scaling_rows",
    "trajectory_gaps",
    "step_times",
    "fit_table",
    "linear_model",
    "local_slopes",
    "forward_steps_vs_depth",
    "scaling_figure",
    "scaling_table",
    "load_stored",
    "compute_stored",
    "main",
]

#: Convergence criteria of :class:`Criterion`.
CRITERIA = ("attention", "accuracy", "loss")
#: Default threshold of each criterion.
DEFAULT_THRESHOLDS = {"attention": 0.9, "accuracy": 1.0, "loss": 0.01}
#: Depths of the depth sweep (``S = n``) computed with the population recursion.
DEPTHS = (2, 3, 4, 5, 6)
#: Depths with stored sampled runs.
SAMPLED_DEPTHS = (2, 3, 4, 5)
#: Fixed depth of the labels sweep.
LABEL_DEPTH = 3
#: Label-set sizes of the labels sweep (population recursion).
LABEL_SIZES = (15, 31, 63, 127, 255)
#: Label-set sizes with stored sampled runs.
SAMPLED_LABEL_SIZES = (15, 31, 63, 127)

_ROOT = Path(__file__).resolve().parents[3]
#: Where :func:`main` stores the sampled runs by default.
STORED = _ROOT / "book" / "trees" / "data" / "scaling.json"
#: The stored forward heads x depth sweep (:mod:`onelayer.trees.forward.limits`).
FORWARD_SWEEP = _ROOT / "book" / "trees" / "data" / "forward_sweep.json"


@dataclass(frozen=True)
class Criterion:
    """When a run counts as converged.

    Parameters
    ----------
    name:
        ``"attention"`` (default): mean teacher-forced attention on the correct
        edge ``>= threshold`` (default 0.9). ``"accuracy"``: teacher-forced
        accuracy ``>= threshold`` (default 1.0). ``"loss"``: loss
        ``<= threshold * (loss at step 0)`` (default 0.01).
    threshold:
        In ``(0, 1]`` for ``"attention"``/``"accuracy"``, in ``(0, 1)`` for
        ``"loss"``; ``None`` means the default of the criterion.
    """

    name: str = "attention"
    threshold: float | None = None

    def __post_init__(self):
        check_choice("criterion", self.name, CRITERIA)
        if self.threshold is None:
            object.__setattr__(self, "threshold", DEFAULT_THRESHOLDS[self.name])
        high_open = self.name == "loss"
        thr = check_float("threshold", self.threshold, low=0.0, high=1.0, low_open=True, high_open=high_open)
        object.__setattr__(self, "threshold", thr)

    def describe(self) -> str:
        """One line, e.g. ``"attention on the correct edge >= 0.9"``."""
        return {
            "attention": f"attention on the correct edge >= {self.threshold:g}",
            "accuracy": f"teacher-forced accuracy >= {self.threshold:g}",
            "loss": f"loss <= {self.threshold:g} x initial loss",
        }[self.name]

    def met(self, records: Mapping[str, np.ndarray]) -> np.ndarray:
        """Boolean array: where the criterion holds, from records ``"correct_weight"``, ``"accuracy"``, ``"loss"``."""
        if self.name == "attention":
            return np.asarray(records["correct_weight"]) >= self.threshold
        if self.name == "accuracy":
            return np.asarray(records["accuracy"]) >= self.threshold - 1e-12
        loss = np.asarray(records["loss"], dtype=float)
        return loss <= self.threshold * loss[:1]

    def holds(self, correct_weight: float, accuracy: float, loss: float, initial_loss: float) -> bool:
        """Whether the criterion holds at one step (scalar form of :meth:`met`)."""
        if self.name == "attention":
            return correct_weight >= self.threshold
        if self.name == "accuracy":
            return accuracy >= self.threshold - 1e-12
        return loss <= self.threshold * initial_loss

    def crossing(self, steps, records: Mapping[str, np.ndarray]) -> np.ndarray:
        """First recorded step at which the criterion holds (``nan`` if never); shape ``()`` or ``(B,)``."""
        return crossing_steps(steps, self.met(records).astype(float), 0.5)


#: The three criteria at their default thresholds (all measured on every stored run).
_DEFAULTS = (Criterion("attention"), Criterion("accuracy"), Criterion("loss"))


def _criterion(criterion) -> Criterion:
    if isinstance(criterion, Criterion):
        return criterion
    if isinstance(criterion, str):
        return Criterion(criterion)
    raise TypeError(f"criterion must be a Criterion or one of {CRITERIA}, got {type(criterion).__name__}")


def nodes(m: int) -> int:
    """Number of nodes ``n = 2^(m+1) - 1`` of a perfect binary tree of depth ``m``."""
    m = check_int("m", m, low=1, high=12)
    return 2 ** (m + 1) - 1


def tokens(m: int, *, root_token: bool = True, eos: bool = False) -> int:
    """Teacher-forced sequence length ``N``: ``n - 1`` edges, root token, goal token and the CoT inputs."""
    m = check_int("m", m, low=1, high=12)
    prompt = 2 ** (m + 1) - 2 + int(check_bool("root_token", root_token)) + 1
    return prompt + m + int(check_bool("eos", eos)) - 1


def _check_size(m, S):
    m = check_int("m", m, low=1, high=12)
    S = check_int("S", S, low=nodes(m))
    return m, S


# --- exact population recursion ---------------------------------------------------------------------------------


def _canonical_arrays(m, S, root_token, eos):
    """Indicator and token arrays of the canonical tree (one perfect tree, leaf goal), one-hot blocks without the empty symbol."""
    b = canonical_batch(m, S, root_token=root_token, eos=eos)
    first, second = b.first[0].numpy(), b.second[0].numpy()
    q = b.query[0].numpy()
    tf, ts = b.target_first[0].numpy(), b.target_second[0].numpy()
    L, K = first.size, q.size
    keep = np.arange(L)[None, :] <= q[:, None]
    cur = first[q][:, None]
    diag = ((second[None, :] == cur) & keep).astype(float)  # key's child is the current node: score h1
    off = ((second[None, :] != cur) & (second[None, :] != S) & keep).astype(float)  # other nodes: score h2
    X = np.zeros((L, 2 * S))
    rows = np.arange(L)
    X[rows[first < S], first[first < S]] = 1.0
    X[rows[second < S], S + second[second < S]] = 1.0
    Y = np.zeros((K, 2 * S))
    Y[np.arange(K), tf] = 1.0
    Y[np.arange(K), S + ts] = 1.0
    hit = (first[None, :] == tf[:, None]) & (second[None, :] == ts[:, None]) & keep
    return diag, off, np.where(keep, 0.0, -np.inf), X, Y, hit, tf, ts


def population_run(
    m: int,
    S: int,
    *,
    lr: float = 1.0,
    max_steps: int = 100_000,
    stop: Criterion | str | None = None,
    options: LossOptions = LossOptions(),
    root_token: bool = True,
    eos: bool = False,
) -> dict[str, np.ndarray]:
    """Exact population gradient descent on ``(h1, h2)`` from zero (one-hot embeddings), in closed form.

    The same recursion as :func:`onelayer.trees.backward.dynamics.population_gd`:
    ``h1 <- h1 - eta/S dl/dh1``, ``h2 <- h2 - eta/(S(S-1)) dl/dh2`` with ``l``
    the loss of the canonical tree, whose gradient is computed by hand here
    (``dl/ds_i = 2c w_i <x_i - y_hat, y_hat - y>``) instead of by autograd,
    about 10x faster. Every step is recorded.

    Parameters
    ----------
    m, S:
        Depth and number of labels (``S >= 2^(m+1) - 1``).
    lr:
        Step size ``eta`` (default 1, the paper's).
    max_steps:
        Most updates to run.
    stop:
        Optional :class:`Criterion`: stop at the first step where it holds.
    options, root_token, eos:
        Loss normalisation and layout, as in :mod:`onelayer.trees.backward.model`.

    Returns
    -------
    dict
        ``steps``, ``h1``, ``h2``, ``loss``, ``correct_weight``, ``accuracy``
        (arrays over the steps ``0..T``) and ``seconds`` (wall time).
    """
    m, S = _check_size(m, S)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    max_steps = check_int("max_steps", max_steps, low=0)
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    crit = None if stop is None else _criterion(stop)
    start = time.perf_counter()
    diag, off, neg, X, Y, hit, tf, ts = _canonical_arrays(m, S, root_token, eos)
    K = diag.shape[0]
    c = 0.5 if options.half else 1.0
    scale = c / K if options.reduction == "mean" else c
    h1 = h2 = 0.0
    out = {k: [] for k in ("h1", "h2", "loss", "correct_weight", "accuracy")}
    for t in range(max_steps + 1):
        s = h1 * diag + h2 * off + neg
        w = np.exp(s - s.max(1, keepdims=True))
        w /= w.sum(1, keepdims=True)
        yh = w @ X
        r = yh - Y
        out["h1"].append(h1)
        out["h2"].append(h2)
        out["loss"].append(scale * float((r * r).sum()))
        out["correct_weight"].append(float((w * hit).sum(1).mean()))
        out["accuracy"].append(float(((yh[:, :S].argmax(1) == tf) & (yh[:, S:].argmax(1) == ts)).mean()))
        if t == max_steps or (crit is not None and crit.holds(out["correct_weight"][-1], out["accuracy"][-1],
                                                              out["loss"][-1], out["loss"][0])):
            break
        ds = 2 * scale * w * (r @ X.T - (yh * r).sum(1, keepdims=True))
        h1 -= lr / S * float((ds * diag).sum())
        h2 -= lr / (S * (S - 1)) * float((ds * off).sum())
    result = {k: np.asarray(v) for k, v in out.items()}
    result["steps"] = np.arange(result["h1"].size)
    result["seconds"] = time.perf_counter() - start
    return result


def population_steps(m: int, S: int, *, lr: float = 1.0, criterion: Criterion | str = Criterion(),
                     max_steps: int = 100_000, **kwargs) -> float:
    """Steps the exact population recursion needs to meet ``criterion`` (``nan`` if not within ``max_steps``)."""
    crit = _criterion(criterion)
    run = population_run(m, S, lr=lr, max_steps=max_steps, stop=crit, **kwargs)
    return float(crit.crossing(run["steps"], run))


# --- sampled runs ------------------------------------------------------------------------------------------------


def _record_grid(budget: int, points: int, focus: Sequence[float] = ()) -> list[int]:
    """Recorded steps: ``points`` linear and ``points`` geometric ones in ``0..budget``, plus fine windows.

    Around every step ``t`` in ``focus`` (e.g. the population's crossing
    steps), ``points // 2`` further steps evenly spaced in ``[0.9 t, 1.1 t]``.
    """
    lin = np.linspace(0, budget, points + 1).round().astype(int)
    geo = np.geomspace(1, max(budget, 1), points).round().astype(int)
    grid = set(lin.tolist()) | set(geo.tolist()) | {0, budget}
    for t in focus:
        if t is not None and math.isfinite(t) and t > 0:
            window = np.linspace(0.9 * t, 1.1 * t, max(points // 2, 2)).round().astype(int)
            grid |= {int(v) for v in window if 0 <= v <= budget}
    return sorted(grid)


def sampled_run(
    m: int,
    S: int,
    *,
    steps: int,
    seeds: Sequence[int] = tuple(range(8)),
    lr: float = 1.0,
    batch_size: int = 256,
    protocol: str = "sgd",
    record_points: int = 100,
    eval_size: int = 256,
    eval_seed: int = 99_991,
    criteria: Sequence[Criterion] | None = None,
    focus: Sequence[float] = (),
    progress: bool = False,
) -> dict:
    """Train ``len(seeds)`` sampled runs together and measure when each converges.

    The runs are :func:`~onelayer.trees.backward.batched.train_backward_members`
    (one-hot embeddings, zero init, default loss) for ``steps`` steps, recorded
    at about ``2 * record_points`` steps (a linear and a geometric grid), plus
    ``record_points // 2`` steps within 10% of each step in ``focus`` (the
    population's crossing steps, so that the sampled crossings are resolved
    to about 0.4%); correct-edge attention and teacher-forced accuracy are measured on a shared
    batch of ``eval_size`` fresh training trees (seed ``eval_seed``).

    Returns
    -------
    dict
        ``m, S, n_nodes, tokens, seeds, lr, batch_size, protocol, budget``;
        ``crossings``: criterion description -> list of first steps per seed
        (``None`` if never within the budget); ``steps`` and per-seed
        ``correct_weight``, ``accuracy``, ``loss`` records (lists of lists,
        rounded to 6 significant digits); ``seconds`` and ``seconds_per_step``
        of the whole call.
    """
    m, S = _check_size(m, S)
    steps = check_int("steps", steps, low=1)
    seeds = check_int_sequence("seeds", seeds, low=0)
    record_points = check_int("record_points", record_points, low=2)
    eval_size = check_int("eval_size", eval_size, low=1)
    eval_seed = check_int("eval_seed", eval_seed, low=0)
    crits = list(_DEFAULTS) if criteria is None else [_criterion(c) for c in criteria]
    A = one_hot_embeddings(S)
    ev = perfect_tree_batch(m, S, eval_size, np.random.default_rng(eval_seed))
    start = time.perf_counter()
    hist = backward_batched.train_backward_members(A, m=m, steps=steps, lr=lr, seeds=seeds, batch_size=batch_size,
                                                 protocol=protocol, eval_batch=ev,
                                                 record_at=_record_grid(steps, record_points, focus), progress=progress)
    seconds = time.perf_counter() - start
    rec = {"correct_weight": hist["correct_weight"], "accuracy": hist["accuracy"], "loss": hist["loss"]}
    crossings = {c.describe(): [None if math.isnan(v) else int(v) for v in c.crossing(hist.steps, rec)] for c in crits}

    def rounded(a):
        return [[float(f"{v:.6g}") for v in row] for row in np.asarray(a).T]

    return {
        "m": m, "S": S, "n_nodes": nodes(m), "tokens": tokens(m), "seeds": list(seeds), "lr": lr,
        "batch_size": batch_size, "protocol": protocol, "budget": steps, "eval_size": eval_size, "eval_seed": eval_seed,
        "crossings": crossings, "steps": hist.steps.tolist(),
        **{k: rounded(v) for k, v in rec.items()},
        "seconds": seconds, "seconds_per_step": seconds / steps,
    }


# --- the grids -----------------------------------------------------------------------------------------------------


def size_grid(sweep: str, *, sampled: bool = False) -> list[tuple[int, int]]:
    """The ``(m, S)`` sizes of a sweep: ``"depth"`` (``S = n``) or ``"labels"`` (``m = 3``); ``sampled``: the stored subset."""
    check_choice("sweep", sweep, ("depth", "labels"))
    check_bool("sampled", sampled)
    if sweep == "depth":
        return [(m, nodes(m)) for m in (SAMPLED_DEPTHS if sampled else DEPTHS)]
    return [(LABEL_DEPTH, S) for S in (SAMPLED_LABEL_SIZES if sampled else LABEL_SIZES)]


def _sizes(sizes) -> list[tuple[int, int]]:
    if isinstance(sizes, str):
        return size_grid(sizes)
    out = []
    for i, pair in enumerate(sizes):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"sizes[{i}] must be a pair (m, S), got {pair!r}")
        out.append(_check_size(*pair))
    if not out:
        raise ValueError("sizes must contain at least one (m, S) pair")
    return out


def population_rows(sizes="depth", *, lr: float = 1.0, criterion: Criterion | str = Criterion(),
                    max_steps: int = 100_000) -> list[dict]:
    """Steps to converge of the exact population recursion for each size (about 2 s for the depth sweep).

    ``sizes``: ``"depth"``, ``"labels"`` or a list of ``(m, S)`` pairs. Rows:
    ``m, S, n_nodes, tokens, population_steps`` (float, ``nan`` if not
    reached), ``population_seconds`` (wall time of the run).
    """
    crit = _criterion(criterion)
    rows = []
    for m, S in _sizes(sizes):
        run = population_run(m, S, lr=lr, max_steps=max_steps, stop=crit)
        rows.append({"m": m, "S": S, "n_nodes": nodes(m), "tokens": tokens(m),
                     "population_steps": float(crit.crossing(run["steps"], run)),
                     "population_seconds": run["seconds"]})
    return rows


def sampled_rows(stored: Mapping, sweep: str, *, criterion: Criterion | str = Criterion()) -> list[dict]:
    """Steps to converge of the stored sampled runs of one sweep, under ``criterion`` (any threshold).

    Rows: ``m, S, n_nodes, tokens, sampled_steps`` (per seed, ``nan`` if
    never within the budget), ``sampled_median/min/max``, ``sampled_converged``
    (number of seeds that converged), ``budget``, ``sampled_seconds_per_step``.
    """
    if not isinstance(stored, Mapping) or "runs" not in stored:
        raise ValueError("stored must be the dict of load_stored() / compute_stored() (it has no 'runs')")
    check_choice("sweep", sweep, ("depth", "labels"))
    crit = _criterion(criterion)
    rows = []
    for run in stored["runs"][sweep]:
        rec = {k: np.asarray(run[k], dtype=float).T for k in ("correct_weight", "accuracy", "loss")}
        steps = crit.crossing(np.asarray(run["steps"]), rec)
        ok = steps[~np.isnan(steps)]
        rows.append({
            "m": run["m"], "S": run["S"], "n_nodes": run["n_nodes"], "tokens": run["tokens"],
            "sampled_steps": steps.tolist(),
            "sampled_median": float(np.median(steps)) if ok.size == steps.size else float("nan"),
            "sampled_min": float(ok.min()) if ok.size else float("nan"),
            "sampled_max": float(steps.max()) if ok.size == steps.size else float("nan"),
            "sampled_converged": int(ok.size), "seeds": len(run["seeds"]), "budget": run["budget"],
            "sampled_seconds_per_step": run["seconds_per_step"],
        })
    return rows


def scaling_rows(sweep: str = "depth", *, sizes=None, stored: Mapping | None = None,
                 criterion: Criterion | str = Criterion(), lr: float = 1.0) -> list[dict]:
    """The chapter's table of one sweep: population steps (live) joined with the stored sampled runs.

    About 2 s for ``"depth"`` (``m = 2..6``) and 1 s for ``"labels"``
    (``S = 15..255``). ``sizes`` optionally replaces the sweep's sizes
    (``(m, S)`` pairs); ``stored=None`` reads :data:`STORED` if it exists
    (otherwise there are no sampled columns). Adds ``ratio`` = sampled median /
    population steps where both exist.
    """
    check_choice("sweep", sweep, ("depth", "labels"))
    crit = _criterion(criterion)
    if stored is None and STORED.exists():
        stored = load_stored()
    rows = population_rows(sweep if sizes is None else sizes, lr=lr, criterion=crit)
    if stored is not None:
        if stored.get("lr") != lr:
            raise ValueError(f"the stored sampled runs use lr={stored.get('lr')}; pass lr={stored.get('lr')} or stored=None")
        by_size = {(r["m"], r["S"]): r for r in sampled_rows(stored, sweep, criterion=crit)}
        for row in rows:
            extra = by_size.get((row["m"], row["S"]))
            if extra is not None:
                row.update({k: v for k, v in extra.items() if k.startswith("sampled") or k in ("seeds", "budget")})
                row["ratio"] = row["sampled_median"] / row["population_steps"]
    return rows


def trajectory_gaps(stored: Mapping, sweep: str = "depth") -> list[dict]:
    """How closely the stored SGD runs follow the population recursion along the whole run (about 1 s per sweep).

    For each stored size, the population recursion is run to the stored budget
    and compared at the recorded steps: ``max_weight_gap`` is the largest
    ``|attention on the correct edge (SGD seed) - (population)|`` over the
    recorded steps and seeds (``at_step``: where; ``population_weight_there``:
    the population value there); ``final_weight`` is the population value at
    the budget.
    """
    if not isinstance(stored, Mapping) or "runs" not in stored:
        raise ValueError("stored must be the dict of load_stored() / compute_stored() (it has no 'runs')")
    check_choice("sweep", sweep, ("depth", "labels"))
    rows = []
    for run in stored["runs"][sweep]:
        pop = population_run(run["m"], run["S"], lr=stored["lr"], max_steps=run["budget"])
        steps = np.asarray(run["steps"])
        sampled = np.asarray(run["correct_weight"], dtype=float)  # (seeds, T)
        gap = np.abs(sampled - pop["correct_weight"][steps][None, :])
        worst = np.unravel_index(np.argmax(gap), gap.shape)
        rows.append({"m": run["m"], "S": run["S"], "max_weight_gap": float(gap.max()),
                     "at_step": int(steps[worst[1]]), "population_weight_there": float(pop["correct_weight"][steps[worst[1]]]),
                     "final_weight": float(pop["correct_weight"][-1])})
    return rows


# --- wall time ---------------------------------------------------------------------------------------------------


def step_times(sizes="depth", *, members: int = 8, batch_size: int = 256, steps: int = 3) -> list[dict]:
    """Wall time per step against size (about 2 s for the depth sweep; machine-dependent, print it untested).

    For each size: seconds per step of the batched trainer
    (``members`` sampled runs of ``batch_size`` trees, after one warm-up
    step), per member, and of one step of the population recursion.
    """
    members = check_int("members", members, low=1)
    batch_size = check_int("batch_size", batch_size, low=1)
    steps = check_int("steps", steps, low=1)
    rows = []
    sizes = _sizes(sizes)
    warm = one_hot_embeddings(sizes[0][1])  # first calls of a process are slow: warm up once
    backward_batched.train_backward_members(warm, m=sizes[0][0], steps=2, lr=1.0, seeds=range(members), batch_size=batch_size)
    population_run(*sizes[0], max_steps=50)
    for m, S in sizes:
        A = one_hot_embeddings(S)
        kw = dict(m=m, lr=1.0, seeds=range(members), batch_size=batch_size, record_every=steps + 1)
        backward_batched.train_backward_members(A, steps=1, **kw)
        start = time.perf_counter()
        backward_batched.train_backward_members(A, steps=steps, **kw)
        sampled = (time.perf_counter() - start) / steps
        pop = population_run(m, S, max_steps=200)
        rows.append({"m": m, "S": S, "n_nodes": nodes(m), "tokens": tokens(m), "members": members,
                     "batch_size": batch_size, "sampled_s_per_step": sampled,
                     "sampled_s_per_member_step": sampled / members, "population_s_per_step": pop["seconds"] / 201})
    return rows


# --- fits, forward, figure, table --------------------------------------------------------------------------------


def fit_table(depth_rows: Sequence[Mapping], label_rows: Sequence[Mapping] = (), time_rows: Sequence[Mapping] = (),
              forward_rows: Sequence[Mapping] = ()) -> list[dict]:
    """Power-law fits ``y ~ c x^slope`` of every measured series; rows ``series, x, slope, r2, points``.

    The population series is also fitted on the sizes that have stored SGD
    runs only, for a like-for-like comparison. Depth sweep: against the number
    of nodes ``n``, of tokens ``N`` and the depth ``m`` (a power law in ``m`` is a poor description of an
    exponential; its ``r2`` shows it). Labels sweep: against ``S``. Wall
    time: against ``n``. Forward: converged runs only, against ``n``.
    """
    out = []

    def add(series, rows, x, y):
        xs = [r[x] for r in rows if y in r]
        ys = [r[y] for r in rows if y in r]
        if sum(1 for v in ys if v is not None and not math.isnan(v)) >= 2:
            ys = [float("nan") if v is None else v for v in ys]
            fit = fit_power_law(xs, ys)
            out.append({"series": series, "x": x, "slope": fit.slope, "r2": fit.r2, "points": fit.n})

    for x in ("n_nodes", "tokens", "m"):
        add("depth: population", depth_rows, x, "population_steps")
        add("depth: population, sizes with SGD runs", [r for r in depth_rows if "sampled_median" in r], x,
            "population_steps")
        add("depth: sampled median", depth_rows, x, "sampled_median")
    add("labels: population", label_rows, "S", "population_steps")
    add("labels: population, sizes with SGD runs", [r for r in label_rows if "sampled_median" in r], "S",
        "population_steps")
    add("labels: sampled median", label_rows, "S", "sampled_median")
    add("time: batched trainer per step", time_rows, "n_nodes", "sampled_s_per_step")
    add("time: population per step", time_rows, "n_nodes", "population_s_per_step")
    add("forward two-head (stored)", forward_rows, "n_nodes", "steps_to_converge")
    return out


def local_slopes(rows: Sequence[Mapping], x: str = "n_nodes", y: str = "population_steps") -> list[float]:
    """Log-log slopes between consecutive sizes: ``log(y_{i+1}/y_i) / log(x_{i+1}/x_i)`` (``nan`` where missing)."""
    pairs = [(float(r[x]), float("nan") if r.get(y) is None else float(r[y])) for r in rows]
    if len(pairs) < 2:
        raise ValueError("local_slopes needs at least two rows")
    out = []
    for (x0, y0), (x1, y1) in zip(pairs, pairs[1:]):
        ok = x0 > 0 and x1 > 0 and x0 != x1 and y0 > 0 and y1 > 0
        out.append(math.log(y1 / y0) / math.log(x1 / x0) if ok else float("nan"))
    return out


def linear_model(rows: Sequence[Mapping], y: str = "population_steps") -> dict[str, float]:
    """Least squares of ``T / S`` on the number of tokens ``N``: ``T ~ S (c1 N + c0)`` (module docstring).

    Returns ``c1``, ``c0``, ``r2`` (of ``T / S``) and ``max_rel_error`` (largest
    ``|model / T - 1|`` over the rows); rows without a value of ``y`` are skipped.
    """
    keep = [r for r in rows if y in r and r[y] is not None and not math.isnan(r[y])]
    if len({r["tokens"] for r in keep}) < 2:
        raise ValueError(f"linear_model needs rows with a value of {y!r} at two or more token counts")
    N = np.array([r["tokens"] for r in keep], dtype=float)
    per = np.array([r[y] / r["S"] for r in keep], dtype=float)
    c1, c0 = np.polyfit(N, per, 1)
    pred = c1 * N + c0
    total = float(((per - per.mean()) ** 2).sum())
    r2 = 1.0 - float(((per - pred) ** 2).sum()) / total if total > 0 else 1.0
    return {"c1": float(c1), "c0": float(c0), "r2": r2, "max_rel_error": float(np.abs(pred / per - 1).max())}


def forward_steps_vs_depth(data: Mapping | None = None, *, arch: str = "two_head") -> list[dict]:
    """Steps to converge against depth of one architecture in the stored forward sweep (no recomputation).

    What the file holds (:mod:`onelayer.trees.forward.limits`): one run per
    (architecture, depth) with seed 0, mini-batch SGD (batch 256), learning
    rate 2, mean normalisation, ``m = 2..5`` with ``S = 2^(m+1) + 9``; a run
    has converged at the first recorded step (every 25 steps for ``m <= 3``, 50
    beyond) at which at least 99% of the teacher-forced chains of 256 fixed
    training trees are exactly right. The two-head model converged at
    ``m = 2, 3, 4`` and not within 3,000 steps (nor, in a longer run stored
    separately, 8,000) at ``m = 5``: that point is censored, its
    ``steps_to_converge`` is ``nan`` and ``lower_bound`` is the budget.

    Parameters
    ----------
    data:
        The loaded JSON (default: read :data:`FORWARD_SWEEP`).
    arch:
        ``"two_head"`` (default) or a full-head model ``"full1".."full4"``.

    Returns
    -------
    list of dict
        ``m, S, n_nodes, steps_to_converge, lower_bound, record_every, lr, source``.
    """
    if not isinstance(arch, str):
        raise TypeError(f"arch must be a string, got {type(arch).__name__}")
    if data is None:
        data = json.loads(FORWARD_SWEEP.read_text())
    if not isinstance(data, Mapping) or "heads_depth" not in data:
        raise ValueError("data must be the forward sweep JSON (a dict with 'heads_depth')")
    runs = [r for r in data["heads_depth"] if r["arch"] == arch]
    if not runs:
        names = sorted({r["arch"] for r in data["heads_depth"]})
        raise ValueError(f"arch must be one of {names}, got {arch!r}")
    extra = {r["m"]: r for r in data.get("heads_depth_extra", []) if r["arch"] == arch}
    rows = []
    for r in sorted(runs, key=lambda r: r["m"]):
        source = "heads_depth"
        if r["steps_to_converge"] is None and r["m"] in extra:
            r, source = extra[r["m"]], "heads_depth_extra"
        conv = r["steps_to_converge"]
        rows.append({"m": r["m"], "S": r["S"], "n_nodes": nodes(r["m"]),
                     "steps_to_converge": float("nan") if conv is None else float(conv),
                     "lower_bound": float(r["budget"]) if conv is None else float("nan"),
                     "record_every": int(r["steps"][1] - r["steps"][0]), "lr": r["lr"], "source": source})
    return rows


def _ticks(ax, x) -> None:
    """x ticks at the measured sizes; plain numbers on both axes (minor y labels at 2 and 5 only)."""
    from matplotlib.ticker import FormatStrFormatter, FuncFormatter, NullFormatter

    ax.set_xticks(sorted(set(float(v) for v in x)))
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(NullFormatter())

    def minor(value, _pos):
        lead = value / 10 ** math.floor(math.log10(value) + 1e-9) if value > 0 else 0
        return f"{value:g}" if round(lead, 6) in (2.0, 5.0) else ""

    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(FuncFormatter(minor))


def _panel(ax, x, y, **kwargs):
    """:func:`onelayer.scaling.loglog_panel`, fitting only when two sizes have a value."""
    y = np.asarray(y, dtype=float)
    x = np.asarray(x, dtype=float)
    fit = np.unique(x[~np.isnan(y)]).size >= 2
    return loglog_panel(ax, x, y, fit=fit, **kwargs)


def scaling_figure(depth_rows: Sequence[Mapping], label_rows: Sequence[Mapping] = (),
                   forward_rows: Sequence[Mapping] = (), time_rows: Sequence[Mapping] = ()):
    """Log-log panels: steps against nodes (depth sweep), against ``S`` (labels), forward two-head, seconds per step.

    Each series carries its fitted power law (slope in the legend); the depth
    panel also shows the model ``S (c1 N + c0)`` of :func:`linear_model`
    (dashed). Panels without rows are left out. Returns the figure.
    """
    panels = [p for p, rows in (("depth", depth_rows), ("labels", label_rows), ("forward", forward_rows),
                                ("time", time_rows)) if rows]
    if not panels:
        raise ValueError("scaling_figure needs at least one non-empty list of rows")
    fig, axes = new_figure(min(len(panels), 2), (len(panels) + 1) // 2, width=9.0, height=3.3 * ((len(panels) + 1) // 2))
    axes = np.atleast_1d(axes)
    for ax, panel in zip(axes, panels):
        if panel in ("depth", "labels"):
            rows = depth_rows if panel == "depth" else label_rows
            x = np.array([r["n_nodes" if panel == "depth" else "S"] for r in rows], dtype=float)
            _panel(ax, x, [r["population_steps"] for r in rows], label="population", marker="s")
            if any("sampled_median" in r for r in rows):
                have = [r for r in rows if "sampled_median" in r]
                xs = np.array([r["n_nodes" if panel == "depth" else "S"] for r in have], dtype=float)
                med = np.array([r["sampled_median"] for r in have])
                _panel(ax, xs, med, label="SGD, median of seeds", marker="o",
                             spread=(np.array([r["sampled_min"] for r in have]), np.array([r["sampled_max"] for r in have])))
            if panel == "depth" and len({r["tokens"] for r in rows}) >= 2:
                fit = linear_model(rows)
                N = np.array([r["tokens"] for r in rows], dtype=float)
                S_ = np.array([r["S"] for r in rows], dtype=float)
                ax.plot(x, S_ * (fit["c1"] * N + fit["c0"]), "--", color="0.5",
                        label=f"S ({fit['c1']:.2f} N + {fit['c0']:.0f})")
            _ticks(ax, x)
            if panel == "depth":
                ax.set(xlabel="nodes n = S (depth m = 2, 3, ...)", ylabel="steps to converge", title="backward: depth")
            else:
                ax.set(xlabel=f"labels S (depth {rows[0]['m']})", ylabel="steps to converge", title="backward: labels")
        elif panel == "forward":
            x = np.array([r["n_nodes"] for r in forward_rows], dtype=float)
            y = np.array([r["steps_to_converge"] for r in forward_rows])
            _panel(ax, x, y, label="two heads (stored)", marker="^")
            lb = np.array([r["lower_bound"] for r in forward_rows])
            if np.any(~np.isnan(lb)):
                ax.plot(x[~np.isnan(lb)], lb[~np.isnan(lb)], "^", mfc="none", color="0.4", label="not converged (budget)")
            _ticks(ax, x)
            ax.set(xlabel="nodes n (depth m = 2, 3, ...)", ylabel="steps to converge", title="forward: depth")
        else:
            x = np.array([r["n_nodes"] for r in time_rows], dtype=float)
            _panel(ax, x, [r["sampled_s_per_step"] for r in time_rows],
                         label=f"{time_rows[0]['members']} SGD runs, batched", marker="o")
            _panel(ax, x, [r["population_s_per_step"] for r in time_rows], label="population", marker="s")
            _ticks(ax, x)
            ax.set(xlabel="nodes n = S", ylabel="seconds per step", title="wall time per step")
        ax.legend(fontsize=8)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    return fig


def _sig(x, digits=4):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(f"{x:.{digits}g}")


def scaling_table(rows: Sequence[Mapping]) -> list[dict]:
    """Rounded rows for printing: size, population steps, sampled median [min, max], ratio.

    Every row has the same columns (``None`` where a size has no sampled runs).
    """
    sampled = any("sampled_median" in r for r in rows)
    table = []
    for r in rows:
        row = {"m": r["m"], "S": r["S"], "n": r["n_nodes"], "N": r["tokens"],
               "population": None if math.isnan(r["population_steps"]) else int(r["population_steps"])}
        if sampled:
            has = "sampled_median" in r
            row["SGD median"] = _sig(r["sampled_median"]) if has else None
            row["SGD min"] = _sig(r["sampled_min"]) if has else None
            row["SGD max"] = _sig(r["sampled_max"]) if has else None
            row["converged"] = f"{r['sampled_converged']}/{r['seeds']}" if has else None
            row["SGD / population"] = _sig(r.get("ratio"), 4) if has else None
        table.append(row)
    return table


# --- stored runs -------------------------------------------------------------------------------------------------


def load_stored(path=None) -> dict:
    """The stored sampled runs (default :data:`STORED`)."""
    path = STORED if path is None else Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; create it with: python -m onelayer.trees.scaling --out {path}")
    return json.loads(path.read_text())


def _population_crossings(m: int, S: int, lr: float) -> list[float]:
    """Population steps of the three default criteria (``nan`` for one not met within twice the attention crossing)."""
    first = population_run(m, S, lr=lr, stop=Criterion("attention"))
    run = population_run(m, S, lr=lr, max_steps=2 * int(first["steps"][-1]) + 10)
    return [float(c.crossing(run["steps"], run)) for c in _DEFAULTS]


def compute_stored(*, quick: bool = False, sweeps=("depth", "labels"), seeds=tuple(range(8)), lr: float = 1.0,
                   batch_size: int = 256, protocol: str = "sgd", budget_factor: float = 1.5,
                   depths: Sequence[int] | None = None, label_sizes: Sequence[int] | None = None,
                   progress=print) -> dict:
    """Run the sampled grids (about 15 minutes on one core; ``quick``: two tiny sizes, seconds).

    Each size gets a budget of ``budget_factor`` times the largest population
    crossing step of the three default criteria (stored as
    ``population_crossings``), and fine record windows around them. Returns the JSON-ready dict that :func:`main` writes.
    """
    check_bool("quick", quick)
    budget_factor = check_float("budget_factor", budget_factor, low=1.0)
    grids = {"depth": [(m, nodes(m)) for m in (depths or SAMPLED_DEPTHS)],
             "labels": [(LABEL_DEPTH, S) for S in (label_sizes or SAMPLED_LABEL_SIZES)]}
    if quick:
        seeds, batch_size = tuple(seeds)[:2], 16
        grids = {"depth": [(2, 7)], "labels": [(2, 9)]}
    result = {"command": "python -m onelayer.trees.scaling --out book/trees/data/scaling.json" + (" --quick" if quick else ""),
              "quick": quick, "lr": lr, "batch_size": batch_size, "protocol": protocol, "seeds": list(seeds),
              "budget_factor": budget_factor, "runs": {}}
    for sweep in sweeps:
        check_choice("sweep", sweep, ("depth", "labels"))
        result["runs"][sweep] = []
        for m, S in grids[sweep]:
            focus = _population_crossings(m, S, lr)
            steps = int(math.ceil(budget_factor * np.nanmax(focus)))
            run = sampled_run(m, S, steps=steps, seeds=seeds, lr=lr, batch_size=batch_size, protocol=protocol,
                              record_points=20 if quick else 100, focus=focus)
            run["population_crossings"] = dict(zip([c.describe() for c in _DEFAULTS], focus))
            result["runs"][sweep].append(run)
            progress(f"{sweep:6s} m={m} S={S:3d} budget {steps:6d}: {run['crossings'][Criterion().describe()]}  "
                     f"{run['seconds']:.1f} s")
    return result


def main(argv=None) -> int:
    """Command line: ``python -m onelayer.trees.scaling --out FILE [--quick] [--sweep depth|labels|all]``."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.trees.scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests")
    parser.add_argument("--sweep", choices=("depth", "labels", "all"), default="all")
    parser.add_argument("--depths", type=int, nargs="*", default=None, help=f"depths of the depth sweep (default {SAMPLED_DEPTHS})")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    sweeps = ("depth", "labels") if args.sweep == "all" else (args.sweep,)
    result = compute_stored(quick=args.quick, sweeps=sweeps, depths=args.depths)
    if args.out.exists() and args.sweep != "all":
        old = json.loads(args.out.read_text())
        result["runs"] = {**old.get("runs", {}), **result["runs"]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
