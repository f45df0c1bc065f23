"""Batched walks sweep: :func:`onelayer.studies.walks.batched.train_batched` over 64 data seeds vs 64 separate runs.

Problem: the walks paper's Section 5.1 setting (``K=6, N=97, M=1000``, 1000
sampled walks per seed, ``p=0.5``, zero initialisation, ``eta=1``, log-loss
with ``epsilon=0.1``, float64). Each of the 64 members has its own training
walks (data seed ``b``).

* ``ours``: one :func:`~onelayer.studies.walks.batched.train_batched` call (closed-form
  batched gradients through :func:`onelayer.training.train` with ``members=True``; members are
  processed in chunks of about ``2^18`` attention entries, two members at
  this size).
* ``reference``: a loop of 64 :meth:`onelayer.walks.model.WalkTransformer.train`
  runs (the single-run closed-form trainer).
* One *step* is one GD update of all 64 members; ``ours_s`` and
  ``reference_s`` are seconds per step (best of the repeats).
* ``max_abs_diff``: the largest difference of the final ``V`` and ``q``
  between the sweep and the separate runs.
* Peak memory: :func:`benchmarks.harness.peak_rss_mb` of one call of each side
  (a forked child; data built before the call is not counted).

A second row repeats the comparison at the walks lab's default size
(``N=25, M=125``, 400 walks, ``p=0.7``, 30 steps), where a single run's
tensors are small and batching the members pays off.

Quick mode: 8 seeds, ``N=25, M=125``, 200 walks, 10 steps (one row).
"""

from __future__ import annotations

import torch

from benchmarks.harness import compare
from onelayer.walks.data import walk_data
from onelayer.walks.model import WalkTransformer
from onelayer.studies.walks.batched import BatchedData, train_batched

__all__ = ["run"]

FULL = dict(B=64, K=6, N=97, M=1000, n=1000, p=0.5, steps=50)
LAB = dict(B=64, K=6, N=25, M=125, n=400, p=0.7, steps=30)
QUICK = dict(B=8, K=6, N=25, M=125, n=200, p=0.5, steps=10)


def _row(cfg: dict, quick: bool, label: str) -> dict:
    B, steps = cfg["B"], cfg["steps"]
    model = WalkTransformer(K=cfg["K"], N=cfg["N"], M=cfg["M"])
    datas = [walk_data(cfg["K"], cfg["p"], cfg["N"], cfg["n"], seed=b) for b in range(B)]
    batch = BatchedData.stack(datas)

    def separate():
        return [model.train(model.init(), d, steps=steps) for d in datas]

    def batched():
        return train_batched(model, batch, steps=steps)

    ref = separate()
    ours = batched()
    diff = max(float((ours.params[name] - torch.stack([h.params[name] for h in ref])).abs().max())
               for name in ("V", "q"))
    repeat = 1 if quick else 2
    config = (f"{B} data seeds, K={cfg['K']} N={cfg['N']} M={cfg['M']}, {cfg['n']} walks, p={cfg['p']}, "
              f"{steps} GD steps from zero, float64")
    return compare(label, config, batched, separate, steps=steps, repeat=repeat, warmup=0, max_abs_diff=diff)


def run(quick: bool = False) -> list[dict]:
    """The batched walks sweep against the loop of separate runs: the paper's size and the lab's size."""
    if quick:
        return [_row(QUICK, True, "sweep: walks trainer, batched vs separate runs")]
    return [_row(FULL, False, "sweep: walks trainer, batched vs separate runs (paper's size)"),
            _row(LAB, False, "sweep: walks trainer, batched vs separate runs (lab's size)")]
