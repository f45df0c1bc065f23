"""How the walks model's convergence and cost grow with the sequence length ``N`` and the positional dimension ``M``.

Theorem 3.1 asks for ``M = Omega(N^{3/2})`` and then promises optimal
predictions after a *constant* number of GD steps ``T_0``. The spec's
reconstruction of the proof says why: after two steps from zero the parent's
attention logit leads the others by a gap of order ``eta^2 M^2 / (epsilon^2 N^2 K^2)``
(the positional vectors have ``||p_i||^2 = M/2`` and every logit update carries
``||p_j||^2 ||p_N||^2``), and asking that gap to be ``Omega(N)`` gives
``M ~ N^{3/2}``. This module measures the consequences with the batched
trainer :mod:`onelayer.walks.batched` (all seeds of one size in one
:func:`onelayer.batched.batched_gd` call):

* :func:`measure` trains every seed of each ``(N, M)`` and returns one row per
  size: steps to converge under two criteria (upper median, min and max over
  seeds, and how many seeds converged), the step-2 parent log-odds, and the wall
  time of one GD step;
* :func:`scaling_study` runs the three default grids (``N`` at ``M = 1000``,
  ``M`` at ``N = 97``, and along ``M = M_for(N) = ceil(N^{3/2})``);
* :func:`critical_M` finds, for each ``N``, the smallest ``M`` at which the
  parent is selected at step 2. The step-2 logits are *exactly*
  ``(M/2) A + (M/2)^2 B`` with ``A, B`` independent of ``M`` (the first step
  sees uniform attention whatever ``M`` is, and the positions are orthogonal
  with ``||p_i||^2 = M/2``), so two trained values of ``M`` give the logits for
  every ``M`` and the threshold is found by bisection;
* :func:`slopes`, :func:`cost_model`, :func:`table` and :func:`figure` reduce
  and draw the result.

Convergence criteria (options of :func:`measure`)
-------------------------------------------------
``T_parent`` is the first step at which the mean attention on the direct parent
``x_{N-1}`` over held-out test walks reaches ``parent_threshold = 0.99``;
``T_optimal`` is the first step at which every test prediction is
Bayes-optimal (conditional accuracy, the mean of ``Pi[s_{N-1}, y_hat]``, within
``optimal_tol = 1e-9`` of ``max(p, 1 - p)``). Attention on the parent is the
mechanism the proof of Theorem 3.1 controls, and optimal predictions are its
conclusion, reached one step later once ``V`` has caught up with the attention;
both are exact, noise-free readings of the state (no sampled labels enter).
A threshold of 0.99 asks for step-2 log-odds of ``log(0.99 (N - 1) / 0.01)``,
logarithmic in ``N``, whereas the theorem's leakage ``e^{-Omega(N)}`` asks for
log-odds linear in ``N``; :func:`critical_M` computes the threshold ``M`` for
both readings.

Defaults: ``K = 6`` (the paper's), ``p = 0.7``, 1000 training walks per seed
(the paper's), zero initialisation, ``eta = 1``, log-loss with
``epsilon = 0.1``, sinusoidal positions; six data seeds, 500 test walks and
10 GD steps per size in the live functions (:data:`DEFAULTS`), 16 seeds, 1000
test walks and 16 steps in the stored study. ``p = 0.7`` rather than the
paper's ``0.5``: at ``p = 0.7`` the Bayes-optimal prediction is unique (the
clockwise neighbour), so ``T_optimal`` cannot be met by predicting the other
neighbour; ``p`` is an option, and the stored study has both.

Theory and measurement (stored study, ``book/walks/data/scaling.json``, 16
seeds, ``p = 0.7``; ``p = 0.5`` agrees except where noted):

* Along ``M = ceil(N^{3/2})`` the number of steps is constant, as Theorem 3.1
  says: ``T_parent = 2`` and ``T_optimal = 3`` for ``N = 49 ... 385``, one step
  more (``T_parent = 3``) for ``N = 13, 25``, where ``N^{3/2}`` is still small
  against the constants.
* The step-2 log-odds of the parent grow like ``M^2`` (fitted slope 2.01; an
  algebraic identity of the first two steps) and fall like ``N^{-2.16}`` at
  ``M = 1000`` with 1000 walks (``N^{-2.03}`` with 4000 walks): the spec's
  guess ``M^2 / N^2`` holds.
* With ``M`` too small for ``N`` convergence slows down, but only by a few
  steps: at ``N = 97`` the steps grow from 2 (``M >= 566``) to 6 at
  ``M = 100`` (slope ``-0.60`` in the slow range); at ``M = 1000`` from 2
  (``N <= 97``) to 3-4 (``N = 193 ... 577``). What grows fast instead is the
  number of seeds that never converge: with a small step-2 gap, sampling
  noise of the 1000 training walks decides which lag the attention locks onto
  (at ``N = 385, M = 1000`` half of the seeds fail, 1 of 16 with 4000 walks;
  at ``p = 0.5`` failures are more frequent, e.g. 9 of 16 at ``N = 97, M = 100``).
* :func:`critical_M`: with 4000 walks the smallest ``M`` that selects the parent
  at step 2 grows like ``N^{1.05}`` for attention ``>= 0.99`` (a ``log N``
  demand) and like ``N^{1.51}`` for log-odds ``>= N/4`` (leakage
  ``e^{-Omega(N)}``, the theorem's), with ``M_crit / N^{3/2}`` between 1.14 and
  1.20 from ``N = 13`` to ``769``. So ``N^{3/2}`` is what the exponentially
  small leakage costs; the practical threshold is nearly linear in ``N``.
* The wall time of a GD step is linear in ``n N`` (about 10-15 ns per
  attention entry and member on this machine) plus a fixed cost (about
  0.4 ms per member and step); the ``M N`` products with the positions cost
  under 2 ns per entry, so the time barely depends on ``M`` in these grids
  (:func:`cost_model`).

The heavier grids are stored; regenerate them with::

    OMP_NUM_THREADS=1 .venv/bin/python -m onelayer.walks.scaling --out book/walks/data/scaling.json

(``--quick`` writes a small version in seconds). ``tests/test_walks_scaling.py``
recomputes one stored point and compares.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import torch

from ..plots import PALETTE, new_figure
from ..scaling import crossing_steps, fit_power_law, loglog_panel
from ..validation import check_choice, check_float, check_int, check_int_sequence, check_probability
from . import ring, theory
from .lab import M_for
from .model import WalkTransformer
from .theorem31 import OPTIMAL_TOL
from .batched import SweepData, attention_records, forward_pass, train_sweep, walk_sweep_data

__all__ = [
    "DEFAULTS",
    "N_GRID",
    "M_GRID",
    "CURVE_N",
    "CRITICAL_N",
    "M_FIXED",
    "N_FIXED",
    "AXES",
    "STORED",
    "measure",
    "default_sizes",
    "scaling_study",
    "critical_M",
    "step2_logit_parts",
    "slopes",
    "cost_model",
    "table",
    "critical_table",
    "figure",
    "critical_figure",
    "stored_study",
    "save",
    "load",
    "main",
]

#: Default options of :func:`measure` (the paper's Section 5.1 setting except ``p``; six data seeds,
#: 500 test walks per seed, 10 GD steps: the live chapter's budget).
DEFAULTS = {
    "K": 6,
    "p": 0.7,
    "seeds": tuple(range(6)),
    "n_train": 1000,
    "n_test": 500,
    "steps": 10,
    "timing_steps": 3,
    "lr": 1.0,
    "parent_threshold": 0.99,
    "optimal_tol": OPTIMAL_TOL,
}
#: ``M`` of the sweep over ``N``.
M_FIXED = 1000
#: ``N`` of the sweep over ``M`` (the paper's).
N_FIXED = 97
#: Sequence lengths of the sweep over ``N`` at ``M = M_FIXED`` (``N - 1`` a multiple of 12).
N_GRID = (13, 25, 49, 97, 193)
#: Positional dimensions of the sweep over ``M`` at ``N = N_FIXED`` (sinusoidal positions need ``M > N``).
M_GRID = (100, 141, 200, 283, 400, 566, 800, 1600, 3200)
#: Sequence lengths of the sweep along ``M = M_for(N) = ceil(N^{3/2})``.
CURVE_N = (13, 25, 49, 97, 193)
#: Sequence lengths of :func:`critical_M`.
CRITICAL_N = (13, 25, 49, 97, 193)
#: The three sweeps of :func:`scaling_study`: the size that varies.
AXES = ("N", "M", "curve")
#: Where the stored heavier study lives (relative to the repository root).
STORED = Path("book/walks/data/scaling.json")
#: Criteria of :func:`critical_M`.
CRITICAL_CRITERIA = ("attention", "log_odds")


def _check_options(K, p, seeds, n_train, n_test, steps, lr, parent_threshold, optimal_tol) -> dict:
    seeds = check_int_sequence("seeds", seeds, low=0)
    if not seeds:
        raise ValueError("seeds must contain at least one seed")
    return {
        "K": check_int("K", K, low=3, high=100),
        "p": check_probability("p", p, open_low=True, open_high=True),
        "seeds": seeds,
        "n_train": check_int("n_train", n_train, low=1, high=1_000_000),
        "n_test": check_int("n_test", n_test, low=1, high=1_000_000),
        "steps": check_int("steps", steps, low=2, high=10_000),
        "lr": check_float("lr", lr, low=0.0, low_open=True),
        "parent_threshold": check_float("parent_threshold", parent_threshold, low=0.0, high=1.0, low_open=True,
                                        high_open=True),
        "optimal_tol": check_float("optimal_tol", optimal_tol, low=0.0, low_open=True, high=0.5),
    }


def _check_sizes(sizes) -> list[tuple[int, int]]:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise TypeError("sizes must be a sequence of (N, M) pairs")
    out = []
    for i, pair in enumerate(sizes):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise TypeError(f"sizes[{i}] must be a pair (N, M), got {pair!r}")
        N = check_int(f"sizes[{i}] N", pair[0], low=3, high=100_000)
        M = check_int(f"sizes[{i}] M", pair[1], low=1, high=1_000_000)
        if M <= N:
            raise ValueError(f"sizes[{i}]: sinusoidal positions need M > N, got N={N}, M={M}")
        out.append((N, M))
    if not out:
        raise ValueError("sizes must contain at least one (N, M) pair")
    return out


def _upper_median(values: np.ndarray) -> float:
    """The step by which at least half of the seeds converged (``nan`` if fewer than half did)."""
    v = np.sort(np.where(np.isnan(values), np.inf, values))
    m = v[v.size // 2]
    return float(m) if np.isfinite(m) else float("nan")


def _summary(name: str, T: np.ndarray) -> dict:
    done = T[~np.isnan(T)]
    return {
        name: _upper_median(T),
        f"{name}_min": float(done.min()) if done.size else float("nan"),
        f"{name}_max": float(done.max()) if done.size else float("nan"),
        f"{name}_converged": int(done.size),
    }


def _step2_log_odds(model: WalkTransformer, params: dict, data: SweepData) -> np.ndarray:
    """Per member: median over walks of ``min_j log(S_parent / S_j)`` (see :func:`theory.parent_log_odds`)."""
    z = forward_pass(model, params, data)["z"]
    lo = theory.parent_log_odds(z.reshape(-1, model.config.N)).min(axis=1).reshape(data.B, data.n)
    return np.median(lo, axis=1)


def _time_steps(model: WalkTransformer, data: SweepData, steps: int, lr: float) -> float:
    """Seconds of one GD step of all members: the shortest of ``steps`` consecutive steps.

    A record reads the clock at every step (between a step's gradient and its
    update), so each difference of consecutive readings is one full step; the
    minimum is the figure least disturbed by other processes on a shared machine.
    """
    def clock(prm):
        return torch.full((data.B,), time.perf_counter(), dtype=torch.float64)

    hist = train_sweep(model, data, steps=steps, lr=lr, record={"clock": clock})
    return float(np.diff(hist["clock"][:, 0]).min())


def measure(sizes, *, K: int = 6, p: float = 0.7, seeds=DEFAULTS["seeds"], n_train: int = 1000, n_test: int = 500,
            steps: int = 10, lr: float = 1.0, parent_threshold: float = 0.99, optimal_tol: float = OPTIMAL_TOL,
            timing_steps: int = 3, axis: str = "") -> list[dict]:
    """Train every seed of each size ``(N, M)`` in one batched call and measure convergence and cost.

    Parameters
    ----------
    sizes:
        ``(N, M)`` pairs (``3 <= N < M``).
    K, p:
        Ring size and clockwise probability (``0 < p < 1``).
    seeds:
        Data seeds: member ``b`` trains on ``walk_data(K, p, N, n_train, seed=seeds[b])``
        and is evaluated on ``walk_data(K, p, N, n_test, seed=seeds[b] + 1000)``.
    steps:
        GD steps per run (``>= 2``); a run that has not converged by then counts as not converged.
    lr:
        GD step size ``eta``.
    parent_threshold:
        ``T_parent`` criterion: mean test attention on the parent ``>= parent_threshold``.
    optimal_tol:
        ``T_optimal`` criterion: conditional test accuracy ``>= max(p, 1-p) - optimal_tol``.
    timing_steps:
        GD steps of a separate run without evaluation records, timed one by one;
        ``seconds_per_step`` is the shortest (``0``: no timing, ``nan``).
    axis:
        A label copied into every row (e.g. ``"N"``).

    Returns
    -------
    list of dict
        One row per size: ``axis, N, M, K, p, seeds, n_train``; ``T_parent``
        (upper median over seeds: the step by which at least half converged,
        ``nan`` if fewer than half did), ``T_parent_min``, ``T_parent_max``,
        ``T_parent_converged`` (number of seeds); the same for ``T_optimal``;
        ``log_odds2`` (median over seeds of the median over test walks of the
        smallest step-2 log-odds of the parent against any other position) and
        ``log_odds_needed`` (``log(thr (N-1) / (1-thr))``, enough for
        ``T_parent = 2``); ``seconds_per_step`` (one GD step of all seeds
        together) and ``member_seconds_per_step`` (divided by the number of seeds).
    """
    sizes = _check_sizes(sizes)
    o = _check_options(K, p, seeds, n_train, n_test, steps, lr, parent_threshold, optimal_tol)
    timing_steps = check_int("timing_steps", timing_steps, low=0, high=1000)
    if not isinstance(axis, str):
        raise TypeError(f"axis must be a string, got {type(axis).__name__}")
    K, p, seeds = o["K"], o["p"], list(o["seeds"])
    bayes = ring.bayes_accuracy(p)
    rows = []
    for N, M in sizes:
        model = WalkTransformer(K=K, N=N, M=M)
        train = walk_sweep_data(K, N, o["n_train"], ps=p, seeds=seeds)
        test = walk_sweep_data(K, N, o["n_test"], ps=p, seeds=[s + 1000 for s in seeds])
        records = attention_records(model, test, p)
        del records["accuracy"]
        hist = train_sweep(model, train, steps=o["steps"], lr=o["lr"], record=records, snapshot_at=(2,))
        T_parent = crossing_steps(hist.steps, hist["parent_attention"], o["parent_threshold"])
        T_optimal = crossing_steps(hist.steps, hist["conditional_accuracy"], bayes - o["optimal_tol"])
        seconds = _time_steps(model, train, timing_steps, o["lr"]) if timing_steps else float("nan")
        thr = o["parent_threshold"]
        rows.append({
            "axis": axis, "N": N, "M": M, "K": K, "p": p, "seeds": len(seeds), "n_train": o["n_train"],
            **_summary("T_parent", T_parent),
            **_summary("T_optimal", T_optimal),
            "log_odds2": float(np.median(_step2_log_odds(model, hist.snapshots[2], test))),
            "log_odds_needed": math.log(thr * (N - 1) / (1.0 - thr)),
            "seconds_per_step": seconds,
            "member_seconds_per_step": seconds / len(seeds),
        })
    return rows


def default_sizes(axis: str, *, quick: bool = False) -> list[tuple[int, int]]:
    """The ``(N, M)`` grid of one sweep: ``"N"`` (``M = M_FIXED``), ``"M"`` (``N = N_FIXED``) or ``"curve"``."""
    check_choice("axis", axis, AXES)
    if axis == "N":
        Ns = N_GRID[:3] if quick else N_GRID
        return [(N, M_FIXED) for N in Ns]
    if axis == "M":
        Ms = M_GRID[::3] if quick else M_GRID
        return [(N_FIXED, M) for M in Ms]
    Ns = CURVE_N[:3] if quick else CURVE_N
    return [(N, M_for(N)) for N in Ns]


def scaling_study(*, quick: bool = False, axes=AXES, **options) -> dict[str, list[dict]]:
    """The three default sweeps (rows of :func:`measure` per axis).

    ``quick=True`` uses three sizes per sweep and three seeds (seconds, for
    tests). ``options`` are passed to :func:`measure`. About 6 s on one core of
    the book's machine with the defaults.
    """
    if isinstance(axes, str):
        axes = (axes,)
    for a in axes:
        check_choice("axes", a, AXES)
    if quick:
        options = {"seeds": (0, 1, 2), "n_train": 300, "n_test": 300, "steps": 8, **options}
    return {a: measure(default_sizes(a, quick=quick), axis=a, **options) for a in axes}


# -- the step-2 threshold ------------------------------------------------------------------------
def step2_logit_parts(N: int, *, K: int = 6, p: float = 0.7, seeds=DEFAULTS["seeds"], n_train: int = 1000,
                      n_test: int = 500, lr: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """``A, B`` with step-2 logits ``z = (M/2) A + (M/2)^2 B`` on the test walks, for every seed (``(B, n_test, N)``).

    Trains two GD steps from zero at ``M = 2N`` and ``M = 4N`` (all seeds
    batched) and solves the two linear equations. Valid for any ``M`` with
    exactly orthogonal positions of squared norm ``M/2`` (default model options).
    """
    N = check_int("N", N, low=3, high=100_000)
    o = _check_options(K, p, seeds, n_train, n_test, 2, lr, 0.5, OPTIMAL_TOL)
    seeds = list(o["seeds"])
    train = walk_sweep_data(o["K"], N, o["n_train"], ps=o["p"], seeds=seeds)
    test = walk_sweep_data(o["K"], N, o["n_test"], ps=o["p"], seeds=[s + 1000 for s in seeds])
    logits = {}
    for M in (2 * N, 4 * N):
        model = WalkTransformer(K=o["K"], N=N, M=M)
        hist = train_sweep(model, train, steps=2, lr=o["lr"])
        logits[M / 2.0] = forward_pass(model, hist.params, test)["z"]
    (a1, z1), (a2, z2) = logits.items()
    B = (z1 * a2 - z2 * a1) / (a1 * a2 * (a1 - a2))
    A = (z1 - a1**2 * B) / a1
    return A, B


def _crossing_scale(score, target: float, low: float, high: float) -> float:
    """Smallest ``a`` in ``[low, high]`` with ``score(a) >= target`` (log grid, then bisection); ``nan`` if none."""
    grid = np.geomspace(low, high, 33)
    values = [score(a) for a in grid]
    hit = np.flatnonzero(np.asarray(values) >= target)
    if hit.size == 0:
        return float("nan")
    if hit[0] == 0:
        return float(low)
    lo, hi = math.log(grid[hit[0] - 1]), math.log(grid[hit[0]])
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if score(math.exp(mid)) >= target else (mid, hi)
    return math.exp(hi)


def critical_M(Ns=CRITICAL_N, *, K: int = 6, p: float = 0.7, seeds=DEFAULTS["seeds"], n_train: int = 1000,
               n_test: int = 500, lr: float = 1.0, criterion: str = "attention", threshold: float = 0.99,
               c: float = 0.25) -> list[dict]:
    """For each ``N``: the smallest ``M`` at which two GD steps already select the parent.

    Parameters
    ----------
    Ns:
        Sequence lengths (``>= 3``).
    criterion:
        ``"attention"`` (default): the mean test attention on the parent after
        step 2 reaches ``threshold`` (so ``T_parent = 2`` of :func:`measure`);
        ``"log_odds"``: the median over test walks of the smallest step-2
        log-odds of the parent reaches ``c N`` (the theorem's leakage
        ``e^{-Omega(N)}``).
    threshold, c:
        The two criteria's constants.

    Returns
    -------
    list of dict
        ``N``, ``M_crit`` (upper median over seeds, a seed whose parent is
        never selected counting as infinite; ``nan`` if that is more than half),
        ``M_crit_min``, ``M_crit_max`` (over the seeds that select the parent),
        ``selected`` (their number), ``seeds``, ``M_for_N`` (``ceil(N^{3/2})``)
        and ``ratio`` (``M_crit / N^{3/2}``).
        ``M_crit`` is a real number (the crossing of a continuous function of
        ``M``); it may lie below ``N + 1``, the smallest ``M`` that sinusoidal
        positions allow, in which case the criterion holds for every allowed ``M``.
    """
    Ns = check_int_sequence("Ns", Ns, low=3, high=100_000)
    if not Ns:
        raise ValueError("Ns must contain at least one sequence length")
    check_choice("criterion", criterion, CRITICAL_CRITERIA)
    threshold = check_float("threshold", threshold, low=0.0, high=1.0, low_open=True, high_open=True)
    c = check_float("c", c, low=0.0, low_open=True)
    rows = []
    for N in Ns:
        A, B = step2_logit_parts(N, K=K, p=p, seeds=seeds, n_train=n_train, n_test=n_test, lr=lr)
        crit = []
        for b in range(A.shape[0]):
            Ab, Bb = A[b], B[b]
            if criterion == "attention":
                def score(a, Ab=Ab, Bb=Bb):
                    return float(torch.softmax(a * Ab + a * a * Bb, dim=1)[:, -2].mean())
                target = threshold
            else:
                def score(a, Ab=Ab, Bb=Bb):
                    lo = theory.parent_log_odds(a * Ab + a * a * Bb).min(axis=1)
                    return float(np.median(lo))
                target = c * N
            crit.append(2.0 * _crossing_scale(score, target, 0.5, 5e7))
        crit = np.asarray(crit)
        med = _upper_median(crit)
        rows.append({
            "N": N, "criterion": criterion, "M_crit": med,
            "M_crit_min": float(np.nanmin(crit)) if not np.isnan(crit).all() else float("nan"),
            "M_crit_max": float(np.nanmax(crit)) if not np.isnan(crit).all() else float("nan"),
            "selected": int((~np.isnan(crit)).sum()), "seeds": int(crit.size),
            "M_for_N": M_for(N), "ratio": med / N**1.5,
        })
    return rows


# -- reductions -------------------------------------------------------------------------------------
def _x_of(axis: str) -> str:
    return "M" if axis == "M" else "N"


def slopes(study: dict, critical=None) -> dict[str, dict]:
    """Fitted power laws ``y ~ c x^slope`` of a study (and of :func:`critical_M` rows).

    Keys ``"<quantity> vs <axis>"`` with quantity ``T_parent``, ``T_optimal``,
    ``log_odds2`` and ``seconds_per_step``; values ``{"slope", "prefactor",
    "r2", "n"}`` (``n`` = number of sizes used; sizes whose value is ``nan``
    are left out; a fit needs two). ``"T_parent vs M (slow)"`` fits only the
    sizes whose ``T_parent`` exceeds the smallest value of the sweep, plus the
    first size that reaches it.
    """
    out = {}

    def add(key, x, y):
        x, y = np.asarray(x, float), np.asarray(y, float)
        good = ~np.isnan(y) & (y > 0)
        if good.sum() >= 2 and np.unique(x[good]).size >= 2:
            f = fit_power_law(x[good], y[good])
            out[key] = {"slope": f.slope, "prefactor": f.prefactor, "r2": f.r2, "n": f.n}

    for axis, rows in study.items():
        if not rows:
            continue
        x = [r[_x_of(axis)] for r in rows]
        for q in ("T_parent", "T_optimal", "log_odds2", "seconds_per_step"):
            add(f"{q} vs {axis}", x, [r[q] for r in rows])
        if axis == "M":
            T = np.array([r["T_parent"] for r in rows], dtype=float)
            if np.isfinite(T).any():
                low = np.nanmin(T)
                first = np.flatnonzero(T == low)[0]
                keep = (T > low) | (np.arange(T.size) == first)
                keep &= np.arange(T.size) <= first
                add("T_parent vs M (slow)", np.asarray(x)[keep], T[keep])
    if critical:
        add(f"M_crit vs N ({critical[0]['criterion']})", [r["N"] for r in critical], [r["M_crit"] for r in critical])
    return out


def cost_model(study: dict) -> dict[str, float]:
    """Least squares ``t / members = c + a n N + b M N`` over every timed size of a study.

    ``t`` is ``seconds_per_step`` (all members), ``n`` the training walks per
    member. Returns ``c_us`` (a fixed cost per member and step, microseconds),
    ``a_ns`` and ``b_ns`` (nanoseconds per attention entry and per positional
    entry) and ``max_rel_err`` (the largest relative deviation of a timed size
    from the fit; the fit minimises relative errors); ``nan`` when fewer than
    three sizes were timed.
    """
    rows = [r for rows in study.values() for r in rows if np.isfinite(r["member_seconds_per_step"])]
    if len(rows) < 3:
        return {"c_us": float("nan"), "a_ns": float("nan"), "b_ns": float("nan"), "max_rel_err": float("nan")}
    X = np.array([[1.0, r["n_train"] * r["N"], r["M"] * r["N"]] for r in rows], dtype=float)
    t = np.array([r["member_seconds_per_step"] for r in rows])
    coef, *_ = np.linalg.lstsq(X / t[:, None], np.ones_like(t), rcond=None)
    rel = np.abs(X @ coef - t) / t
    return {"c_us": float(coef[0] * 1e6), "a_ns": float(coef[1] * 1e9), "b_ns": float(coef[2] * 1e9),
            "max_rel_err": float(rel.max())}


def _fmt(x, digits: int = 3):
    if isinstance(x, (int, np.integer)):
        return int(x)
    x = float(x)
    if math.isnan(x):
        return float("nan")
    if x == int(x) and abs(x) < 1e6:
        return int(x)
    return float(f"{x:.{digits}g}")


def table(study: dict, *, wall: bool = False) -> list[dict]:
    """Rounded rows for the chapter: sizes, steps (median [min-max], converged seeds), step-2 log-odds.

    ``wall=True`` adds the milliseconds per GD step (machine-dependent: print
    them in an ``nbval-ignore-output`` cell).
    """
    out = []
    for axis, rows in study.items():
        for r in rows:
            row = {"sweep": axis, "N": r["N"], "M": r["M"]}
            for q in ("T_parent", "T_optimal"):
                row[q] = _fmt(r[q])
                row[f"{q} range"] = f"{_fmt(r[q + '_min'])}-{_fmt(r[q + '_max'])}"
                row[f"{q} ok"] = f"{r[q + '_converged']}/{r['seeds']}"
            row["log_odds2"] = _fmt(r["log_odds2"])
            row["needed"] = _fmt(r["log_odds_needed"])
            if wall:
                row["ms/step"] = _fmt(1e3 * r["seconds_per_step"])
            out.append(row)
    return out


def critical_table(rows: list[dict]) -> list[dict]:
    """Rounded rows of :func:`critical_M`."""
    return [{"N": r["N"], "criterion": r["criterion"], "M_crit": _fmt(r["M_crit"]),
             "range": f"{_fmt(r['M_crit_min'])}-{_fmt(r['M_crit_max'])}", "ok": f"{r['selected']}/{r['seeds']}",
             "ceil(N^1.5)": r["M_for_N"],
             "M_crit/N^1.5": _fmt(r["ratio"])} for r in rows]


# -- figures --------------------------------------------------------------------------------------
_LABELS = {"N": f"N varies, M = {M_FIXED}", "M": f"M varies, N = {N_FIXED}", "curve": "N varies, M = ceil(N^1.5)",
           "N_more_walks": f"N varies, M = {M_FIXED}, more walks"}


def _spread(rows, q):
    y = np.array([r[q] for r in rows], dtype=float)
    lo = np.array([r[q + "_min"] for r in rows], dtype=float)
    hi = np.array([r[q + "_max"] for r in rows], dtype=float)
    return y, (np.where(np.isnan(y), np.nan, np.fmin(lo, y)), np.where(np.isnan(y), np.nan, np.fmax(hi, y)))


def _plain_ticks(ax, xticks=None, yticks=None) -> None:
    """Log axes with plain numbers at the given ticks and no minor labels."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, ScalarFormatter

    for axis, ticks in ((ax.xaxis, xticks), (ax.yaxis, yticks)):
        if ticks is None:
            continue
        axis.set_major_locator(FixedLocator(sorted(set(ticks))))
        axis.set_major_formatter(ScalarFormatter())
        axis.set_minor_locator(NullLocator())
        axis.set_minor_formatter(NullFormatter())


def _steps_series(ax, rows, axis, q, label, color, marker, shift=1.0):
    """One series of steps (upper median over seeds, min-max bars, fitted slope); ``x`` marks lost seeds."""
    x = np.array([r[_x_of(axis)] for r in rows], dtype=float)
    y, spread = _spread(rows, q)
    good = np.isfinite(y)
    if good.any():
        fit = good.sum() >= 2 and np.unique(x[good]).size >= 2
        loglog_panel(ax, x * shift, y, label=label, spread=spread, fit=fit, color=color, marker=marker)
    lost = np.array([r[q + "_converged"] < r["seeds"] for r in rows])
    if lost.any():
        label = "x: some seeds never converge"
        ax.plot(x[lost] * shift, np.full(lost.sum(), 1.5), "x", color=color,
                label=None if label in ax.get_legend_handles_labels()[1] else label)
    return x


_STEP_TICKS = (2, 3, 4, 6, 8, 12, 16)


def _finish_steps_axes(ax, x, xlabel, title, ymax):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(1.35, max(ymax, 4) * 1.25)
    _plain_ticks(ax, xticks=x, yticks=[t for t in _STEP_TICKS if t <= max(ymax, 4) * 1.2])
    ax.tick_params(axis="x", labelrotation=45)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("GD steps to converge")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left")


def _ymax(*row_sets) -> float:
    values = [r[k] for rows in row_sets for r in rows for k in ("T_parent_max", "T_optimal_max")]
    values = [v for v in values if np.isfinite(v)]
    return max(values) if values else 4.0


def figure(study: dict, *, wall: bool = True):
    """Log-log panels: steps against ``N`` (``M = 1000`` and ``M = ceil(N^{3/2})``), steps against ``M``
    (``N = 97``) and the wall time of a GD step against ``N (n + M)``.

    Points are upper medians over seeds with min-max bars and the fitted slope
    in the legend; series at the same ``N`` are shifted slightly sideways so that
    they do not hide each other; an ``x`` at the bottom marks a size where some
    seeds never converged. ``wall=False`` leaves out the (machine-dependent)
    timing panel.
    """
    ncols = 3 if wall else 2
    fig, axes = new_figure(ncols, width=4.3 * ncols, height=3.9)
    axes = np.atleast_1d(axes)
    ax = axes[0]
    xs = []
    styles = {"N": (0.96, f"M = {M_FIXED}", ((PALETTE[0], "o"), (PALETTE[1], "s"))),
              "curve": (1.04, "M = N^1.5", ((PALETTE[2], "^"), (PALETTE[3], "D"))),
              "N_more_walks": (0.92, f"M = {M_FIXED}, more walks", ((PALETTE[4], "v"),))}
    for axis, (shift, tag, looks) in styles.items():
        if axis in study and study[axis]:
            for q, (color, marker) in zip(("T_parent", "T_optimal"), looks):
                xs.extend(_steps_series(ax, study[axis], axis, q, f"{q}, {tag}", color, marker, shift))
    if xs:
        _finish_steps_axes(ax, xs, "N", "steps against N", _ymax(*(study[a] for a in styles if a in study)))
    ax = axes[1]
    if "M" in study and study["M"]:
        x = []
        for q, color, marker in (("T_parent", PALETTE[0], "o"), ("T_optimal", PALETTE[1], "s")):
            x = _steps_series(ax, study["M"], "M", q, q, color, marker)
        _finish_steps_axes(ax, x, "M", f"steps against M (N = {N_FIXED})", _ymax(study["M"]))
    if wall:
        ax = axes[2]
        for (axis, rows), color in zip(study.items(), PALETTE):
            x = np.array([r["N"] * (r["n_train"] + r["M"]) for r in rows], dtype=float)
            y = np.array([1e3 * r["seconds_per_step"] for r in rows], dtype=float)
            if np.isfinite(y).sum() >= 2:
                loglog_panel(ax, x, y, label=_LABELS.get(axis, axis), color=color)
        from matplotlib.ticker import NullFormatter

        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("N (n + M)   (n = training walks per seed)")
        ax.set_ylabel("ms per GD step (all seeds)")
        ax.set_title("wall time per step")
        ax.legend(fontsize=7, loc="upper left")
    return fig


def critical_figure(critical_sets: dict[str, list[dict]]):
    """``M_crit`` against ``N`` on log axes, one series per criterion (``label -> critical_M rows``), with ``N^1.5``."""
    fig, ax = new_figure(width=5.0, height=3.9)
    allN = []
    for (label, rows), color in zip(critical_sets.items(), PALETTE):
        x = np.array([r["N"] for r in rows], dtype=float)
        y = np.array([r["M_crit"] for r in rows], dtype=float)
        lo = np.array([r["M_crit_min"] for r in rows], dtype=float)
        hi = np.array([r["M_crit_max"] for r in rows], dtype=float)
        good = np.isfinite(y)
        loglog_panel(ax, x[good], y[good], label=label, spread=(np.fmin(lo, y)[good], np.fmax(hi, y)[good]),
                     color=color, fit=good.sum() >= 2)
        allN.extend(x)
    xs = np.geomspace(min(allN), max(allN), 50)
    ax.plot(xs, xs**1.5, "--", color="0.5", label="N^1.5")
    ax.plot(xs, xs + 1, ":", color="0.5", label="N + 1 (smallest M allowed)")
    _plain_ticks(ax, xticks=allN)
    ax.set_xlabel("N")
    ax.set_ylabel("smallest M selecting the parent at step 2")
    ax.legend(fontsize=7, loc="upper left")
    return fig


# -- the stored study -------------------------------------------------------------------------------
def stored_study(*, quick: bool = False, progress=print) -> dict:
    """The heavier grids stored in :data:`STORED`.

    Sixteen seeds; ``p = 0.7`` and ``p = 0.5``; the sweep over ``N`` at
    ``M = 1000`` extended to ``N = 577`` with 1000 and with 4000 training
    walks (the second shows that the lost seeds are a sampling effect); the
    sweep over ``M`` and along ``M = N^{3/2}`` (to ``N = 385``);
    :func:`critical_M` for both criteria up to ``N = 769``, with 1000 and with
    4000 training walks (``"<criterion>, more walks"``). About 6 minutes on one
    core (``quick=True``: seconds).
    """
    seeds = tuple(range(3 if quick else 16))
    big_N = (13, 25, 49) if quick else (13, 25, 49, 97, 193, 289, 385, 577)
    curve_N = (13, 25, 49) if quick else CURVE_N + (385,)
    Ms = (100, 400, 1600) if quick else M_GRID
    crit_N = (13, 25, 49) if quick else CRITICAL_N + (385, 769)
    n_big = 600 if quick else 4000
    base = {"seeds": seeds, "n_train": 200 if quick else 1000, "n_test": 200 if quick else 1000,
            "steps": 8 if quick else 16, "timing_steps": 2 if quick else 4}
    out = {"meta": {"created_by": "python -m onelayer.walks.scaling", "quick": quick, "defaults": dict(base),
                    "M_fixed": M_FIXED, "N_fixed": N_FIXED}, "studies": {}, "critical": {}}
    out["meta"]["defaults"]["seeds"] = list(seeds)
    for p in (0.7, 0.5):
        start = time.perf_counter()
        study = {
            "N": measure([(N, M_FIXED) for N in big_N], p=p, axis="N", **base),
            "M": measure([(N_FIXED, M) for M in Ms], p=p, axis="M", **base),
            "curve": measure([(N, M_for(N)) for N in curve_N], p=p, axis="curve", **base),
            "N_more_walks": measure([(N, M_FIXED) for N in big_N], p=p, axis="N_more_walks",
                                    **{**base, "n_train": n_big}),
        }
        out["studies"][f"p={p}"] = study
        progress(f"study p={p}: {time.perf_counter() - start:.0f} s")
    for criterion in CRITICAL_CRITERIA:
        for walks, key in ((base["n_train"], criterion), (n_big, f"{criterion}, more walks")):
            start = time.perf_counter()
            out["critical"][key] = critical_M(crit_N, seeds=seeds, criterion=criterion, n_train=walks,
                                              n_test=base["n_test"])
            progress(f"critical M ({key}): {time.perf_counter() - start:.0f} s")
    return out


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating, float)):
        x = float(x)
        return x if math.isfinite(x) else "nan"
    if isinstance(x, np.integer):
        return int(x)
    return x


def _restore(x):
    if isinstance(x, dict):
        return {k: _restore(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_restore(v) for v in x]
    return float("nan") if x == "nan" else x


def save(data: dict, path) -> Path:
    """Write a :func:`stored_study` result as JSON (``nan`` as the string ``"nan"``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_jsonable(data), indent=1) + "\n")
    return path


def load(path=STORED) -> dict:
    """Read a stored study (default :data:`STORED`, relative to the working directory or the repository root)."""
    path = Path(path)
    if not path.is_absolute() and not path.exists():
        path = Path(__file__).resolve().parents[3] / path
    if not path.exists():
        raise FileNotFoundError(f"no stored scaling study at {path}; run python -m onelayer.walks.scaling --out {path}")
    return _restore(json.loads(path.read_text()))


def main(argv=None) -> int:
    """Command line: compute :func:`stored_study` and write it as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.walks.scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="path of the JSON file to write")
    parser.add_argument("--quick", action="store_true", help="a tiny version in seconds")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    path = save(stored_study(quick=args.quick), args.out)
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
