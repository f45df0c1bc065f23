"""Which direction ``V`` takes under each loss, and the remainder of Lemma C.7.

Once the attention sits on the parent, ``f(X) = V x_{N-1}`` and the population GD
step of an entry ``V_{ys}`` depends on the loss:

* log-loss ``-log(f_y + epsilon)``: ``eta pi_{sy} / (K (V_{ys} + epsilon))``, so
  ``V_{ys}^2 ~ 2 eta pi_{sy} t / K``: the entrywise square root ``sqrt(Pi^T)``;
* squared loss ``||f - e_y||^2 / 2``: ``V`` converges to the least-squares fit,
  ``Pi^T`` itself (the conditional mean of ``e_y``);
* cross-entropy on ``softmax(f)``: the columns of ``V`` approach ``log Pi^T`` up to a
  column constant, which diverges on the zero entries; in direction ``V`` tends to
  put ``+c`` on the support and ``-c'`` off it.

:func:`direction_by_loss` trains the same model from zero under each loss and
reports the distance of ``V``'s direction to ``Pi^T``, to ``sqrt(Pi^T)`` and the
best power ``(Pi^T)^a`` (entrywise, ``a`` on a grid). :func:`lemma_c7_remainder`
follows ``min_beta ||V - beta Pi^T||_F`` (and the largest entry of that residual)
against ``t`` under the log-loss: Lemma C.7 says it stays bounded; it grows like
``sqrt(t)`` when ``p != 1/2``.

Measured (``p = 0.7``, seed 0, 300 steps, ``eta = 1``): log-loss best power 0.45, distances 0.204 to
``Pi^T`` and 0.086 to ``sqrt(Pi^T)``, clockwise/counter-clockwise ratio 1.49; squared loss best power
0.95, distances 0.053 and 0.161, ratio 2.20; cross-entropy: off-support entries at -0.43 times the
clockwise ones, distances 0.64 and 0.60. All three losses give optimal predictions. Remainder at
``p = 0.7`` over 1000 steps: ``||V - beta* Pi^T||_F`` from 1.4 to 8.7, log-log slope 0.41 over the
second half (0.18 at ``p = 1/2``, where only the sample's deviation from ``Pi`` drives it).

:func:`target_slopes` measures Theorem 3.1 item 3's rate seed by seed: the log-log slope of the distance of ``V``'s
direction to the training sample's own square-root target (:func:`onelayer.studies.walks.analysis.empirical_target`), ``-1/2``
for a ``T^(-1/2)`` rate.
"""

from __future__ import annotations

import math

import numpy as np

from ...validation import check_choice, check_int, check_probability
from . import batched
from ...walks.model import LOSSES
from ...walks import ring, theory
from . import analysis
from .experiment import setup_experiment
from ...walks.model import WalkTransformer
from .inputs import walk_model

__all__ = ["best_power", "residual_to_line", "direction_by_loss", "lemma_c7_remainder", "direction_samples",
           "target_slopes", "POWERS"]

#: Exponents ``a`` of the candidate directions ``(Pi^T)^a`` (entrywise).
POWERS = tuple(np.round(np.arange(0.1, 2.01, 0.05), 2))


def best_power(V, PiT, powers=POWERS) -> tuple[float, float]:
    """The exponent ``a`` (from ``powers``) whose entrywise power ``PiT**a`` (zero off the support) is closest in
    direction to ``V``, and that distance."""
    PiT = np.asarray(PiT, dtype=np.float64)
    best = (float("nan"), float("inf"))
    for a in powers:
        target = np.where(PiT > 0, PiT ** float(a), 0.0)
        d = theory.direction_distance(V, target)
        if d < best[1]:
            best = (float(a), d)
    return best


def residual_to_line(V, PiT) -> tuple[float, float, float]:
    """``beta* = <V, PiT> / ||PiT||^2`` and the Frobenius norm and largest absolute entry of ``V - beta* PiT``."""
    V = np.asarray(V, dtype=np.float64)
    PiT = np.asarray(PiT, dtype=np.float64)
    beta = float((V * PiT).sum() / (PiT * PiT).sum())
    R = V - beta * PiT
    return beta, float(np.linalg.norm(R)), float(np.abs(R).max())


def direction_by_loss(p: float = 0.7, *, loss_names=("log", "squared", "cross_entropy"), steps: int = 300,
                      lr: float = 1.0, seed: int = 0, n_train: int = 1000, n_test: int = 1000) -> list[dict]:
    """GD from zero at the paper's size under each loss; the direction of ``V`` at the end.

    Returns one row per loss: ``loss``, ``steps``, ``d_Pi`` and ``d_sqrt`` (direction distances of
    the final ``V`` to ``Pi^T`` and ``sqrt(Pi^T)``), ``best_power`` and ``d_best`` (:func:`best_power`),
    ``ratio`` (mean clockwise over mean counter-clockwise entry; ``p/(1-p)`` for ``Pi^T``,
    ``sqrt(p/(1-p))`` for ``sqrt(Pi^T)``), ``off_support`` (mean off-support entry over the mean
    clockwise one), ``parent_attention``, ``conditional_accuracy`` (test mean, ``max(p, 1-p)`` when
    every prediction is optimal). Runtime about 1 s per loss at 300 steps.
    """
    p = check_probability("p", p, open_low=True, open_high=True)
    steps = check_int("steps", steps, low=1)
    for name in loss_names:
        check_choice("loss", name, LOSSES)
    rows = []
    for name in loss_names:
        exp = setup_experiment(p, seed=seed, n_train=n_train, n_test=n_test, loss=name)
        m = exp.model
        hist = m.train(m.init(), exp.train, steps=steps, lr=lr)
        V = hist.params["V"].numpy()
        PiT = ring.transition_matrix(m.config.K, p).T
        means = analysis.offset_means(V, p)
        a, d_best = best_power(V, PiT)
        rows.append({
            "loss": name, "steps": steps,
            "d_Pi": theory.direction_distance(V, PiT),
            "d_sqrt": theory.direction_distance(V, np.sqrt(PiT)),
            "best_power": a, "d_best": d_best,
            "ratio": means["clockwise"] / means["counter"] if means["counter"] != 0 else float("nan"),
            "off_support": means["other"] / means["clockwise"] if means["clockwise"] != 0 else float("nan"),
            "parent_attention": float(m.attention(hist.params, exp.test)[:, -2].mean()),
            "conditional_accuracy": m.conditional_accuracy(hist.params, exp.test, p),
        })
    return rows


def lemma_c7_remainder(p: float = 0.7, *, steps: int = 1000, lr: float = 1.0, seed: int = 0,
                       n_records: int = 12) -> dict[str, np.ndarray]:
    """Log-loss GD from zero; at log-spaced steps, ``beta*``, ``||V - beta* Pi^T||_F`` and its largest entry.

    Lemma C.7 writes ``V^(t) = beta^(t) Pi^T + tilde V^(t)`` with a bounded ``tilde V``; the smallest
    possible remainder is the residual to the line through ``Pi^T`` (:func:`residual_to_line`). Returns
    arrays ``steps``, ``beta``, ``residual_F``, ``residual_max`` and the fitted log-log ``slope`` of
    ``residual_F`` over the second half of the recorded steps (0 if bounded, 1/2 for ``sqrt(t)``
    growth). About 2 s at 1000 steps.
    """
    p = check_probability("p", p, open_low=True, open_high=True)
    steps = check_int("steps", steps, low=4)
    exp = setup_experiment(p, seed=seed)
    m = exp.model
    record_at = _record_steps(steps, n_records)
    hist = m.train(m.init(), exp.train, steps=steps, lr=lr, record_at=record_at,
                   record={"V": lambda prm: prm["V"].clone()})
    PiT = ring.transition_matrix(m.config.K, p).T
    keep = hist.steps >= 1
    res = np.array([residual_to_line(np.asarray(V), PiT) for V in hist["V"][keep]])
    t = hist.steps[keep].astype(float)
    return {"steps": t, "beta": res[:, 0], "residual_F": res[:, 1], "residual_max": res[:, 2],
            "slope": _second_half_slope(t, res[:, 1])}


def _record_steps(steps: int, n_records: int) -> list[int]:
    return np.unique(np.round(np.logspace(0, math.log10(steps), n_records)).astype(int)).tolist()


def _second_half_slope(t, residual) -> float:
    """Log-log slope of ``residual`` against ``t`` over the recorded steps from the geometric middle on."""
    t, residual = np.asarray(t, dtype=float), np.asarray(residual, dtype=float)
    half = t >= t[-1] ** 0.5 * t[0] ** 0.5
    return float(np.polyfit(np.log(t[half]), np.log(residual[half]), 1)[0]) if half.sum() >= 2 else float("nan")


def direction_samples(p: float = 0.7, *, seeds=tuple(range(20)), loss_names=("log", "squared"),
                      direction_steps: int = 300, remainder_steps: int = 1000, n_records: int = 12, lr: float = 1.0,
                      K: int = 6, N: int = 97, M: int = 1000, n_train: int = 1000) -> list[dict]:
    """:func:`direction_by_loss` and :func:`lemma_c7_remainder` over many training samples, trained together.

    Member ``b`` trains on the walks of data seed ``seeds[b]`` (as ``setup_experiment(p, seed=...)``) under each loss
    of ``loss_names`` for ``direction_steps`` steps (:func:`onelayer.studies.walks.batched.train_batched`), and under the
    log-loss for ``remainder_steps`` steps (the same run continued), recording ``V`` at the log-spaced steps of
    :func:`lemma_c7_remainder`.

    Returns
    -------
    list of dict
        One row per seed: ``seed``; per loss ``name``: ``{name}_best_power``, ``{name}_d_Pi``, ``{name}_d_sqrt``
        (at ``direction_steps``, as in :func:`direction_by_loss`); ``residual_first``, ``residual_last`` (``||V -
        beta* Pi^T||_F`` at step 1 and at ``remainder_steps``) and ``slope`` (as in :func:`lemma_c7_remainder`).
    """
    p = check_probability("p", p, open_low=True, open_high=True)
    direction_steps = check_int("direction_steps", direction_steps, low=1)
    remainder_steps = check_int("remainder_steps", remainder_steps, low=max(4, direction_steps))
    for name in loss_names:
        check_choice("loss", name, LOSSES)
    seeds = [check_int(f"seeds[{i}]", v, low=0) for i, v in enumerate(batched.member_values("seeds", seeds))]
    PiT = ring.transition_matrix(K, p).T
    train = batched.walk_batched_data(K, N, n_train, ps=p, seeds=seeds)
    rows = [{"seed": seed} for seed in seeds]
    record_at = _record_steps(remainder_steps, n_records)
    for name in loss_names:
        model = walk_model(K=K, N=N, M=M, loss=name)
        steps = remainder_steps if name == "log" else direction_steps
        hist = batched.train_batched(model, train, steps=steps, lr=lr, snapshot_at=(direction_steps,),
                                     record_at=record_at if name == "log" else None,
                                     record={"V": lambda prm: prm["V"].clone()} if name == "log" else None)
        for b, row in enumerate(rows):
            V = hist.snapshots[direction_steps]["V"][b].numpy()
            row.update({f"{name}_best_power": best_power(V, PiT)[0],
                        f"{name}_d_Pi": theory.direction_distance(V, PiT),
                        f"{name}_d_sqrt": theory.direction_distance(V, np.sqrt(PiT))})
            if name == "log":
                keep = hist.steps >= 1
                t = hist.steps[keep].astype(float)
                res = [residual_to_line(np.asarray(Vt[b]), PiT)[1] for Vt in np.asarray(hist["V"])[keep]]
                row.update(residual_first=float(res[0]), residual_last=float(res[-1]), slope=_second_half_slope(t, res))
    return rows


def target_slopes(p: float = 0.7, *, seeds=tuple(range(20)), steps: int = 1000, n_records: int = 40,
                  from_record: int = 10, lr: float = 1.0, K: int = 6, N: int = 97, M: int = 1000,
                  n_train: int = 1000) -> list[dict]:
    """Log-loss GD from zero on many training samples (trained together); per sample the log-log slope of the distance
    of ``V``'s direction to the sample's own target ``sqrt(C^T)`` (:func:`onelayer.studies.walks.analysis.empirical_target`).

    ``V`` is recorded at the log-spaced steps of :func:`onelayer.studies.walks.experiment.direction_run` (``n_records`` of
    them up to ``steps``; step 0 left out), and the slope is fitted from record ``from_record`` on, as the theorem
    chapter fits its one-sample run (seed 0 is that run's sample).

    Returns
    -------
    list of dict
        One row per seed: ``seed``, ``slope``, ``from_step`` (the first fitted step), ``d_first`` and ``d_last`` (the
        distance at step 1 and at ``steps``) and ``d_sqrt_last`` (the distance to the population's ``sqrt(Pi^T)`` at
        ``steps``).
    """
    p = check_probability("p", p, open_low=True, open_high=True)
    steps = check_int("steps", steps, low=4)
    n_records = check_int("n_records", n_records, low=4)
    from_record = check_int("from_record", from_record, low=0)
    seeds = [check_int(f"seeds[{i}]", v, low=0) for i, v in enumerate(batched.member_values("seeds", seeds))]
    record_at = np.unique(np.round(np.logspace(0, math.log10(steps), n_records)).astype(int)).tolist()
    if len(record_at) < from_record + 2:
        raise ValueError(f"from_record must leave at least two of the {len(record_at)} recorded steps, got {from_record}")
    train = batched.walk_batched_data(K, N, n_train, ps=p, seeds=seeds)
    model = walk_model(K=K, N=N, M=M)
    hist = batched.train_batched(model, train, steps=steps, lr=lr, record_at=record_at,
                                 record={"V": lambda prm: prm["V"].clone()})
    keep = hist.steps >= 1
    t = hist.steps[keep].astype(float)
    Vs = np.asarray(hist["V"])[keep]  # (T, B, K, K)
    sqrt_PiT = np.sqrt(ring.transition_matrix(K, p).T)
    rows = []
    for b, seed in enumerate(seeds):
        target = analysis.empirical_target(train.member(b))
        d = np.array([theory.direction_distance(V[b], target) for V in Vs])
        rows.append({"seed": seed, "slope": float(np.polyfit(np.log(t[from_record:]), np.log(d[from_record:]), 1)[0]),
                     "from_step": int(t[from_record]), "d_first": float(d[0]), "d_last": float(d[-1]),
                     "d_sqrt_last": theory.direction_distance(Vs[-1][b], sqrt_PiT)})
    return rows
