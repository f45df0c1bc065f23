"""The measured runs of the trees scaling study: exact population recursion, batched sampled runs, wall time."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np

from ....validation import check_float, check_int, check_int_sequence
from .. import backward_batched as backward_batched
from ....trees.backward.dynamics import canonical_batch
from ....trees.backward.layout import perfect_tree_batch
from ....trees.shared.embeddings import one_hot_embeddings
from ....trees.shared.data import LossOptions, normalised
from ..scaling.criteria import _DEFAULTS, Criterion, _check_size, _criterion, _sizes, nodes, tokens

__all__ = ["population_run", "population_steps", "sampled_run", "step_times"]


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
    scale = normalised(1.0, positions=K, trees=1, options=options)  # the loss per unit of summed error
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

    The runs are :func:`~onelayer.studies.trees.backward_batched.train_backward_members`
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


# --- wall time ---------------------------------------------------------------------------------------------------


def step_times(sizes="depth", *, members: int = 8, batch_size: int = 256, steps: int = 3) -> list[dict]:
    """Wall time per step against size (about 2 s for the depth grid; machine-dependent, print it untested).

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
