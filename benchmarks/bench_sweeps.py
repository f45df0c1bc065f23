"""Batched sweeps: :func:`onelayer.training.train` with ``members=True`` over many seeds vs one ``train`` run per seed.

Problem: the softmax-attention regression of :mod:`benchmarks.problems`, one
data set per seed, zero initialisation, float64, plain GD with autograd on both
sides. One step is one GD update of *every* member. Rows: the batched loss
(default) and the ``torch.func.vmap`` path, each against the loop of separate
runs. ``max_abs_diff`` is the largest difference of the final parameters
between the sweep and the separate runs.
"""

from __future__ import annotations

import torch

from benchmarks import problems
from benchmarks.harness import make_row, peak_rss_mb, time_call
from onelayer.training import train

__all__ = ["run"]

FULL = dict(B=64, N=32, n=8, d=4, steps=200)
QUICK = dict(B=8, N=16, n=4, d=3, steps=10)
LR = 1.0


def run(quick: bool = False) -> list[dict]:
    """One row per batched path (see :mod:`benchmarks.harness` for the row format)."""
    cfg = QUICK if quick else FULL
    B, d, steps = cfg["B"], cfg["d"], cfg["steps"]
    X, v, t = problems.make_batch(range(B), N=cfg["N"], n=cfg["n"], d=d)

    def separate():
        return [
            train(problems.zero_params(d), lambda p, b=b: problems.loss(p, X[b], v[b], t[b]),
                  steps=steps, lr=LR, progress=False)
            for b in range(B)
        ]

    def batched():
        return train(problems.zero_params(d, B), lambda p: problems.loss(p, X, v, t), members=True, steps=steps, lr=LR)

    def vmapped():
        return train(problems.zero_params(d, B), problems.loss, members=True, steps=steps, lr=LR,
                          vmap=True, member_data=(X, v, t))

    reference_final = torch.stack([h.params["W"] for h in separate()])  # also the warm-up of the loop
    config = f"{B} seeds, attention regression N={cfg['N']} n={cfg['n']} d={d}, {steps} GD steps, float64"
    repeat, warmup = (1, 0) if quick else (3, 1)
    # The slow loop is timed and measured once and shared by both rows.
    reference_s = time_call(separate, repeat=repeat, warmup=0).best_s / steps
    reference_mb = peak_rss_mb(separate)
    rows = []
    for label, fn in (("sweep: batched loss vs separate runs", batched), ("sweep: vmap vs separate runs", vmapped)):
        diff = float((fn().params["W"] - reference_final).abs().max())
        rows.append(
            make_row(
                label,
                config,
                ours_s=time_call(fn, repeat=repeat, warmup=warmup).best_s / steps,
                reference_s=reference_s,
                ours_peak_mb=peak_rss_mb(fn),
                reference_peak_mb=reference_mb,
                max_abs_diff=diff,
            )
        )
    return rows
