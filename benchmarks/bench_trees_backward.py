"""Backward-reasoning trainer (Trees I): batched implementation vs a per-tree autograd loop.

Rows (format and measurement method: :mod:`benchmarks.harness`):

* ``trees backward: train step``: one step = teacher-forced loss, its gradient
  in ``B`` and the update, on a batch of perfect trees (m=4, S=31). "Ours"
  computes every chain-of-thought position of every tree in one pass
  (:func:`onelayer.trees.backward.model.loss`); the reference loops over trees
  and query positions on materialised token tensors ``X`` (``(L, 2d)`` per
  tree) with the literal formula ``softmax(X^(2) B x_q^(1))^T X`` and autograd.
  Both sides get the same batch and the same ``B``; ``max_abs_diff`` is the
  larger of the difference of their losses and the largest difference of the
  updated ``B``. Peak memory is the forked-child RSS of
  :func:`benchmarks.harness.peak_rss_mb`; the reference's token tensors ``X``
  and targets are materialised once before the measured calls (4 MB at the
  paper's size, 0.3 GB at 10x) and are not counted, which favours the reference.
* ``trees backward: train step (10x S)``: the same step with ten times the
  paper's vocabulary, ``S = 310`` (one-hot embeddings, so ``d = 310`` and
  ``B`` has 100 times as many entries), on perfect trees of depth ``m = 7``
  (255 nodes, the deepest perfect tree whose nodes fit into 310 labels; each
  tree uses 255 of them), batch 256 as in the paper. A sequence then has 262
  tokens instead of 35 and 7 chain-of-thought targets instead of 4. The
  reference takes several seconds per step here, so it is timed with a single
  call (no warm-up; its result gives ``max_abs_diff``) and run once more for
  its memory; ours is the best of 3 calls after one warm-up. Quick mode keeps
  ``m = 7, S = 310`` but uses a batch of 8 trees.
* ``trees backward: time to 100% test accuracy``: one "step" is a whole run
  of mini-batch SGD (batch 256, lr 1, zero init, fresh batches) until greedy
  decoding is correct on all 1,024 random test trees (checked every 50 SGD
  steps). The reference trains with the loop loss on the same batches (same
  trajectory); it takes about a minute and is skipped in quick mode.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from benchmarks.harness import compare, make_row, peak_rss_mb, time_call

__all__ = ["run", "reference_loss", "PAPER", "TEN_X"]

#: The paper's training size (perfect trees of depth m with S = 2^(m+1) - 1 labels).
PAPER = {"m": 4, "S": 31}
#: Ten times the paper's vocabulary, with the deepest perfect trees that fit (see the module docstring).
TEN_X = {"m": 7, "S": 310}


def reference_loss(B: torch.Tensor, X: torch.Tensor, query: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """Mean over (tree, position) of ``1/2 ||y_hat - y||^2``, one tree and one query at a time.

    ``X``: ``(batch, L, 2d)`` materialised tokens; ``query``: ``(batch, K)``
    positions; ``Y``: ``(batch, K, 2d)`` materialised targets.
    """
    d = B.shape[0]
    total = X.new_zeros(())
    count = 0
    for b in range(X.shape[0]):
        x = X[b]
        for k in range(query.shape[1]):
            q = int(query[b, k])
            s = x[: q + 1, d:] @ B @ x[q, :d]
            y_hat = torch.softmax(s, 0) @ x[: q + 1]
            total = total + 0.5 * ((y_hat - Y[b, k]) ** 2).sum()
            count += 1
    return total / count


def _materialise(batch, A):
    from onelayer.trees.backward import layout
    from onelayer.trees.shared.embeddings import with_empty

    E = with_empty(A)
    return layout.token_vectors(batch, A), torch.cat([E.T[batch.target_first], E.T[batch.target_second]], -1)


def _step_runners(batch_size: int, m: int = 4, S: int = 31):
    from onelayer.trees.backward import layout
    from onelayer.trees.backward import model
    from onelayer.trees.shared import embeddings

    A = embeddings.one_hot_embeddings(S)
    batch = layout.perfect_tree_batch(m, S, batch_size, np.random.default_rng(0))
    X, Y = _materialise(batch, A)
    B0 = 0.1 * torch.randn(S, S, generator=torch.Generator().manual_seed(0), dtype=torch.float64)

    def ours():
        B = B0.clone().requires_grad_(True)
        loss = model.loss(B, A, batch)
        (g,) = torch.autograd.grad(loss, B)
        return float(loss.detach()), B0 - g

    def reference():
        B = B0.clone().requires_grad_(True)
        loss = reference_loss(B, X, batch.query, Y)
        (g,) = torch.autograd.grad(loss, B)
        return float(loss.detach()), B0 - g

    return ours, reference


def _time_to_accuracy(kind: str, max_steps: int = 1500, check_every: int = 50) -> tuple[float, int]:
    from onelayer.studies.trees import backward_generalization as gen
    from onelayer.trees.backward import layout
    from onelayer.trees.backward import model
    from onelayer.trees.shared import embeddings

    A = embeddings.one_hot_embeddings(31)
    test, _ = layout.random_tree_batch(31, 1024, np.random.default_rng(7), max_depth=7)
    rng = np.random.default_rng(0)
    B = torch.zeros(31, 31, dtype=torch.float64)
    start = time.perf_counter()
    for t in range(1, max_steps + 1):
        batch = layout.perfect_tree_batch(4, 31, 256, rng)
        Bv = B.clone().requires_grad_(True)
        if kind == "ours":
            loss = model.loss(Bv, A, batch)
        else:
            X, Y = _materialise(batch, A)
            loss = reference_loss(Bv, X, batch.query, Y)
        (g,) = torch.autograd.grad(loss, Bv)
        B = B - 1.0 * g
        if t % check_every == 0 and gen.evaluate(B, A, test)["path_accuracy"] == 1.0:
            return time.perf_counter() - start, t
    raise RuntimeError(f"{kind}: no 100% test accuracy within {max_steps} steps")


def _diff(a, b) -> float:
    (l_a, B_a), (l_b, B_b) = a, b
    return max(abs(l_a - l_b), float((B_a - B_b).abs().max()))


def _ten_x_row(batch_size: int, quick: bool) -> dict:
    """The train-step row at ``TEN_X``: the slow reference is called once for time (and result), once for memory."""
    ours, reference = _step_runners(batch_size, **TEN_X)
    results = []

    def reference_kept():
        results.append(reference())

    repeat, warmup = (1, 0) if quick else (3, 1)
    ours_s = time_call(ours, repeat=repeat, warmup=warmup).best_s
    reference_s = time_call(reference_kept, repeat=1, warmup=0).best_s
    n = 2 ** (TEN_X["m"] + 1) - 1
    return make_row(
        "trees backward: train step (10x S), batched vs per-tree autograd loop",
        f"perfect trees m={TEN_X['m']} ({n} nodes) S={TEN_X['S']} (10x the paper's S=31), batch {batch_size}"
        + (" (quick mode)" if quick else "") + ", one SGD step (loss + grad + update), float64; "
        f"ours best of {repeat} call(s) after {warmup} warm-up, reference timed with 1 call without warm-up",
        ours_s=ours_s,
        reference_s=reference_s,
        ours_peak_mb=peak_rss_mb(ours),
        reference_peak_mb=peak_rss_mb(reference),
        max_abs_diff=_diff(ours(), results[0]),
    )


def run(quick: bool = False) -> list[dict]:
    """Rows of this benchmark; ``quick`` uses batch 64 (8 at 10x), one repeat and skips the reference training run."""
    torch.set_num_threads(1)
    batch_size = 64 if quick else 256
    ours, reference = _step_runners(batch_size, **PAPER)
    (l_ours, B_ours), (l_ref, B_ref) = ours(), reference()
    rows = [
        compare(
            "trees backward: train step, batched vs per-tree autograd loop",
            f"perfect trees m=4 S=31, batch {batch_size}, one SGD step (loss + grad + update), float64",
            ours,
            reference,
            steps=1,
            repeat=1 if quick else 5,
            warmup=0 if quick else 1,
            max_abs_diff=max(abs(l_ours - l_ref), float((B_ours - B_ref).abs().max())),
        )
    ]
    rows.append(_ten_x_row(8 if quick else 256, quick))
    ours_t, ours_steps = _time_to_accuracy("ours")
    ref_t, ref_steps = (None, None) if quick else _time_to_accuracy("reference")
    rows.append(
        make_row(
            "trees backward: time to 100% test accuracy",
            "SGD m=4 S=31 batch 256 lr 1 from zero until all 1,024 random test trees are solved "
            "(checked every 50 steps); one step = the whole run" + (" (reference skipped in quick mode)" if quick else ""),
            ours_s=ours_t,
            reference_s=ref_t,
            sgd_steps_ours=ours_steps,
            sgd_steps_reference=ref_steps,
        )
    )
    return rows


if __name__ == "__main__":  # pragma: no cover
    import json
    import sys

    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row))
