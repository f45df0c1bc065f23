"""Trees backward sweeps: many seeds of the real backward trainer in one batched call vs separate runs.

Rows (format and measurement method: :mod:`benchmarks.harness`):

* ``trees sweep: 64 SGD seeds batched vs separate, batch 256``: the paper's
  backward setting (depth ``m = 4``, ``S = 31`` labels, one-hot embeddings,
  zero init, mini-batch SGD with batch 256, learning rate 1, float64). A
  single run already vectorises its 256 trees, so batching the seeds saves
  little time here; the row with batch 16 shows where it pays. "Ours" is
  :func:`onelayer.studies.trees.backward_batched.train_backward_members` with 64 seeds;
  the reference is 64 calls of
  :func:`onelayer.trees.backward.model.train_backward` (the chapters' single
  trainer), one per seed, on the same batches. One step is one update of
  *every* seed. ``max_abs_diff`` is the largest difference of the final ``B``.
* ``trees population recursion: closed form vs autograd``: 2,000 steps of
  exact population gradient descent at ``m = 4, S = 31``;
  :func:`onelayer.studies.trees.scaling.runs.population_run` (hand-written gradient in
  NumPy) against :func:`onelayer.trees.backward.dynamics.population_gd` (autograd on the
  canonical tree). ``max_abs_diff`` is over the trajectories of ``h1`` and ``h2``.
"""

from __future__ import annotations

import numpy as np
import torch

from benchmarks.harness import compare

__all__ = ["run", "FULL", "QUICK"]

FULL = dict(seeds=64, m=4, S=31, batch_sizes=(256, 16), steps=50, pop_steps=2000)
QUICK = dict(seeds=8, m=3, S=15, batch_sizes=(32,), steps=10, pop_steps=200)
LR = 1.0


def _row(name: str, config: str, ours, reference, *, steps: int, quick: bool, diff: float) -> dict:
    """Time and measure both sides (the reference has already run once, which warms it up)."""
    return compare(name, config, ours, reference, steps=steps, repeat=1 if quick else 2, warmup=0, max_abs_diff=diff)


def run(quick: bool = False) -> list[dict]:
    """The rows of the module docstring."""
    from onelayer.studies.trees.scaling import runs as ts_runs
    from onelayer.studies.trees import backward_batched as batched
    from onelayer.trees.backward import dynamics, model
    from onelayer.trees.shared import embeddings

    torch.set_default_dtype(torch.float64)
    cfg = QUICK if quick else FULL
    seeds, m, S, steps = cfg["seeds"], cfg["m"], cfg["S"], cfg["steps"]
    A = embeddings.one_hot_embeddings(S)
    rows = []
    for nb in cfg["batch_sizes"]:
        kw = dict(m=m, steps=steps, lr=LR, batch_size=nb, record_at=[steps])

        def separate(kw=kw):
            return [model.train_backward(A, seed=s, **kw) for s in range(seeds)]

        def together(kw=kw):
            return batched.train_backward_members(A, seeds=range(seeds), **kw)

        reference_final = torch.stack([h.params["B"] for h in separate()])
        diff = float((together().params["B"] - reference_final).abs().max())
        rows.append(_row(f"trees sweep: {seeds} SGD seeds batched vs separate, batch {nb}",
                         f"backward model m={m} S={S}, batch {nb}, lr {LR:g}, {seeds} seeds x {steps} SGD steps, float64",
                         together, separate, steps=steps, quick=quick, diff=diff))

    pop_steps, pm, pS = cfg["pop_steps"], 4, 31

    def closed():
        return ts_runs.population_run(pm, pS, max_steps=pop_steps)

    def autograd():
        return dynamics.population_gd(pm, pS, steps=pop_steps, lr=LR)

    a, b = closed(), autograd()
    pop_diff = float(max(np.abs(a["h1"] - b["h1"]).max(), np.abs(a["h2"] - b["h2"]).max()))
    rows.append(_row("trees population recursion: closed form vs autograd",
                     f"exact population GD in (h1, h2), m={pm} S={pS}, lr {LR:g}, {pop_steps} steps, float64",
                     closed, autograd, steps=pop_steps, quick=quick, diff=pop_diff))
    return rows
