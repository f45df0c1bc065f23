"""Steps to converge and time per step of the walks model for given sizes ``(N, M)`` (:func:`measure`), and the default grids."""

from __future__ import annotations

import math
import time

import numpy as np
import torch

from ....power_laws import crossing_steps
from ....validation import check_choice, check_float, check_int, check_int_sequence, check_probability
from ....walks import ring, theory
from ..batched import BatchedData, attention_records, forward_pass, train_batched, walk_batched_data
from ....walks.positions import M_for
from ....walks.model import WalkTransformer
from ..experiment import OPTIMAL_TOL
from ..inputs import walk_model


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
#: ``M`` of the grid over ``N``.
M_FIXED = 1000
#: ``N`` of the grid over ``M`` (the paper's).
N_FIXED = 97
#: Sequence lengths of the grid over ``N`` at ``M = M_FIXED`` (``N - 1`` a multiple of 12).
N_GRID = (13, 25, 49, 97, 193)
#: Positional dimensions of the grid over ``M`` at ``N = N_FIXED`` (sinusoidal positions need ``M > N``).
M_GRID = (100, 141, 200, 283, 400, 566, 800, 1600, 3200)
#: Sequence lengths of the grid along ``M = M_for(N) = ceil(N^{3/2})``.
CURVE_N = (13, 25, 49, 97, 193)
#: Sequence lengths of :func:`~onelayer.studies.walks.scaling.critical.critical_M`.
CRITICAL_N = (13, 25, 49, 97, 193)
#: The three grids of :func:`scaling_study`: the size that varies.
AXES = ("N", "M", "curve")
#: Criteria of :func:`~onelayer.studies.walks.scaling.critical.critical_M`.
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


def _step2_log_odds(model: WalkTransformer, params: dict, data: BatchedData) -> np.ndarray:
    """Per member: median over walks of ``min_j log(S_parent / S_j)`` (see :func:`theory.parent_log_odds`)."""
    z = forward_pass(model, params, data)["z"]
    lo = theory.parent_log_odds(z.reshape(-1, model.config.N)).min(axis=1).reshape(data.B, data.n)
    return np.median(lo, axis=1)


def _time_steps(model: WalkTransformer, data: BatchedData, steps: int, lr: float) -> float:
    """Seconds of one GD step of all members: the shortest of ``steps`` consecutive steps.

    A record reads the clock at every step (between a step's gradient and its
    update), so each difference of consecutive readings is one full step; the
    minimum is the figure least disturbed by other processes on a shared machine.
    """
    def clock(prm):
        return torch.full((data.B,), time.perf_counter(), dtype=torch.float64)

    hist = train_batched(model, data, steps=steps, lr=lr, record={"clock": clock})
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
        smallest step-2 log-odds of the parent against any other position),
        ``log_odds2_seeds`` (that median over test walks for each seed, in the order of ``seeds``),
        ``T_parent_seeds`` and ``T_optimal_seeds`` (each seed's step, ``nan`` if it never converged),
        ``top_lag_seeds`` (each seed's most attended token position at the last step as a lag: ``1`` is the
        parent ``x_{N-1}``, ``2`` is ``x_{N-2}``; the query slot is left out) and
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
        model = walk_model(K=K, N=N, M=M)
        train = walk_batched_data(K, N, o["n_train"], ps=p, seeds=seeds)
        test = walk_batched_data(K, N, o["n_test"], ps=p, seeds=[s + 1000 for s in seeds])
        records = attention_records(model, test, p)
        del records["accuracy"]
        hist = train_batched(model, train, steps=o["steps"], lr=o["lr"], record=records, snapshot_at=(2,))
        T_parent = crossing_steps(hist.steps, hist["parent_attention"], o["parent_threshold"])
        T_optimal = crossing_steps(hist.steps, hist["conditional_accuracy"], bayes - o["optimal_tol"])
        seconds = _time_steps(model, train, timing_steps, o["lr"]) if timing_steps else float("nan")
        thr = o["parent_threshold"]
        log_odds = _step2_log_odds(model, hist.snapshots[2], test)  # per seed
        final = forward_pass(model, hist.params, test)["S"].mean(dim=1)  # (B, N): mean test attention at the end
        top_lag = (N - 1 - final[:, :-1].argmax(dim=1)).tolist()  # lag 1: the parent x_{N-1}
        rows.append({
            "axis": axis, "N": N, "M": M, "K": K, "p": p, "seeds": len(seeds), "n_train": o["n_train"],
            **_summary("T_parent", T_parent),
            **_summary("T_optimal", T_optimal),
            "log_odds2": float(np.median(log_odds)),
            "log_odds2_seeds": [float(v) for v in log_odds],
            "T_parent_seeds": [float(v) for v in T_parent],
            "T_optimal_seeds": [float(v) for v in T_optimal],
            "top_lag_seeds": [int(v) for v in top_lag],
            "log_odds_needed": math.log(thr * (N - 1) / (1.0 - thr)),
            "seconds_per_step": seconds,
            "member_seconds_per_step": seconds / len(seeds),
        })
    return rows


def default_sizes(axis: str, *, quick: bool = False) -> list[tuple[int, int]]:
    """The ``(N, M)`` grid of one axis: ``"N"`` (``M = M_FIXED``), ``"M"`` (``N = N_FIXED``) or ``"curve"``."""
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
    """The three default grids (rows of :func:`measure` per axis).

    ``quick=True`` uses three sizes per grid and three seeds (seconds, for
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
