"""Forward-task training step: the batched two-head model vs a plain per-tree autograd reference.

Problem: the two-head model of the trees paper (reconstruction R-F) on a fixed
batch of perfect binary trees (one-hot embeddings, float64), plain GD from zero.
One step is one GD update (loss, gradient, update) on the whole batch.

* Ours: :func:`onelayer.trees.forward.model.train_forward` with ``fixed_batch``:
  every tree and every query position in one set of tensor operations, query
  projections computed before the key products, structured blocks only.
* Reference: the generic formula ``y = sum_l W^V_l X softmax(X^T W^KQ_l x_N)``
  on materialised tokens, one tree at a time, with dense ``(2d+2) x (2d+2)``
  matrices built from ``U_l, V_l`` and a causal mask, differentiated by
  autograd; the per-tree losses are averaged exactly as ours (mean over
  positions, factor 1/2).

``max_abs_diff`` is the largest difference between the two sides' parameters
after the same number of steps (the reference's step count): both do the same
computation.

Sizes
-----
* The paper's size: perfect trees of depth ``m = 3`` with ``S = 25`` labels,
  batch 256 (and a smaller ``m = 2, S = 15``, batch 64).
* 10x: ``S = 250`` labels (one-hot, so ``d = 250``: the token width ``2d + 2``
  goes from 52 to 502 and ``U_l`` has 100 times as many entries) with perfect
  trees of depth ``m = 6`` (127 nodes; depth 7 would need 255 labels), batch
  256 as in the paper. A sequence has 140 tokens instead of 22 and 13 targets
  instead of 7. The reference takes several seconds per step here, so it runs
  one step per call and is called once for its time (that call's parameters
  give ``max_abs_diff``) and once for its memory; ours is timed over 2 steps,
  best of 3 calls after one warm-up.
* Quick mode: ``m = 2, S = 9``, batch 8, and the 10x size ``m = 6, S = 250``
  with a batch of 8 trees.
"""

from __future__ import annotations

import numpy as np
import torch

from benchmarks.harness import make_row, peak_rss_mb, time_call
from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.trees.forward.layout import forward_target_vectors, forward_token_vectors, perfect_forward_batch
from onelayer.trees.forward.model import dense_matrices, init_params, train_forward, two_head

__all__ = ["run", "reference_train"]

FULL = [
    dict(m=3, S=25, batch=256, steps=20, ref_steps=3),
    dict(m=2, S=15, batch=64, steps=20, ref_steps=5),
    dict(m=6, S=250, batch=256, steps=2, ref_steps=1, ten_x=True),
]
QUICK = [dict(m=2, S=9, batch=8, steps=3, ref_steps=2), dict(m=6, S=250, batch=8, steps=2, ref_steps=1, ten_x=True)]
LR = 2.0


def reference_train(A, batch, steps: int, lr: float) -> dict[str, torch.Tensor]:
    """Plain GD on the two-head model, looping over trees; autograd through dense matrices."""
    arch = two_head()
    params = {k: v.clone().requires_grad_(True) for k, v in init_params(arch, A).items()}
    X = forward_token_vectors(batch, A)
    Y = forward_target_vectors(batch, A)
    d = A.shape[0]
    n_targets = int(batch.target_mask.sum())
    for _ in range(steps):
        total = 0.0
        mats = dense_matrices(params, arch, d)
        for b in range(batch.size):
            tokens = X[b][batch.valid[b]]  # (L, D)
            L = tokens.shape[0]
            causal = torch.tril(torch.ones(L, L, dtype=torch.bool))
            q = batch.query[b][batch.target_mask[b]]
            y = 0.0
            for WKQ, WV in mats:
                logits = (tokens @ WKQ @ tokens.T).T  # row N: logits of the keys for query N
                w = torch.softmax(logits.masked_fill(~causal, float("-inf")), dim=1)
                y = y + (w @ tokens @ WV.T)[q]
            total = total + 0.5 * ((y - Y[b][batch.target_mask[b]]) ** 2).sum()
        loss = total / n_targets
        grads = torch.autograd.grad(loss, list(params.values()))
        with torch.no_grad():
            for p, g in zip(params.values(), grads):
                p -= lr * g
    return {k: v.detach() for k, v in params.items()}


def _runners(m: int, S: int, batch: int, steps: int, ref_steps: int):
    A = one_hot_embeddings(S)
    fixed = perfect_forward_batch(m, S, batch, np.random.default_rng(0))

    def ours(n=steps):
        return train_forward(two_head(), A, m=m, steps=n, lr=LR, fixed_batch=fixed).params

    def reference(n=ref_steps):
        return reference_train(A, fixed, n, LR)

    return ours, reference


def run(quick: bool = False) -> list[dict]:
    """Rows for each problem size (see :mod:`benchmarks.harness` for the row format).

    The two sides run different numbers of steps (the reference is slow); each
    side's time is divided by its own step count, and the ratio comes from one run.
    """
    torch.set_default_dtype(torch.float64)
    rows = []
    for cfg in QUICK if quick else FULL:
        cfg = dict(cfg)
        ten_x = cfg.pop("ten_x", False)
        ours, reference = _runners(**cfg)
        kept = [] if ten_x else [reference(cfg["ref_steps"])]  # paper sizes: this call is the reference's warm-up

        def reference_kept():  # at 10x the timed call's parameters give max_abs_diff
            kept.append(reference())

        repeat, warmup = (1, 0) if quick else (3, 1)
        ours_s = time_call(ours, repeat=repeat, warmup=warmup).best_s / cfg["steps"]
        reference_s = time_call(reference_kept, repeat=1, warmup=0).best_s / cfg["ref_steps"]
        a, b = ours(cfg["ref_steps"]), kept[0]
        diff = max(float((a[k] - b[k]).abs().max()) for k in a)
        size = f"m={cfg['m']} S={cfg['S']} batch={cfg['batch']}"
        if ten_x:
            size += f" (10x the paper's S=25, {2 ** (cfg['m'] + 1) - 1}-node trees)"
        rows.append(
            make_row(
                "trees forward: batched two-head step vs per-tree autograd" + (" (10x S)" if ten_x else ""),
                f"{size} one-hot float64; one GD step on the batch "
                f"(ours timed over {cfg['steps']} steps, best of {repeat} call(s); reference over "
                f"{cfg['ref_steps']}, 1 call" + (" without warm-up)" if ten_x else " after 1 warm-up call)"),
                ours_s=ours_s,
                reference_s=reference_s,
                ours_peak_mb=peak_rss_mb(ours),
                reference_peak_mb=peak_rss_mb(reference),
                max_abs_diff=diff,
            )
        )
    return rows
