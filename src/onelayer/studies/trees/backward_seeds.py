"""Many seeds of the backward model at the chapters' sizes: the SGD verdicts and Theorem 4 as rates.

The training and generalisation chapters train one SGD run (``S = 31``, ``m = 4``, learning rate 1, batch 256,
1,500 steps). :func:`seed_runs` trains many: with one-hot embeddings, one member per training seed in a single
:func:`~onelayer.studies.trees.backward_batched.train_backward_members` call; with Gaussian embeddings (``d = S``), one
embedding draw per member (the batched trainer shares ``A`` between members, so each draw is its own call, with its
own training seed). Every run records ``h1``, ``h2`` and the residual of ``H = A^T B A`` from the symmetric span
(:func:`member_h_stats`) and its batch loss, and is tested on the generalisation chapter's random test trees at every
checkpoint: greedy decoding, the teacher-forced test loss, the margin of ``H`` and the margin bound
(:mod:`onelayer.studies.trees.backward_generalization`). :func:`merge_bins` groups path lengths into bins that hold enough goals.

The stored sweep ``python -m onelayer sweep trees-backward-seeds`` (:func:`main`) writes both families to
``book/trees/data/backward_seeds.json``; the chapters load it with :func:`load_stored`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ... import store
from ...paths import data_path
from ...validation import check_choice, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings, independent_embeddings, one_hot_embeddings
from .backward_batched import train_backward_members
from ...trees.backward.construction import margin, margin_bound
from ...trees.backward.layout import random_tree_batch
from ...trees.backward.model import greedy_decode, loss as test_loss
from .inputs import gaussian_embeddings

__all__ = ["KINDS", "STORED", "STORED_KIND", "member_h_stats", "seed_runs", "merge_bins", "load_stored", "main"]

#: Embedding families of :func:`seed_runs`.
KINDS = ("one_hot", "gaussian")
STORED = "trees/data/backward_seeds.json"
STORED_KIND = "trees-backward-seeds"


@torch.no_grad()
def member_h_stats(B: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """``(h1, h2, residual)`` of each member's ``H = A^T B_b A``: shape ``(M, 3)``.

    ``h1``/``h2``: mean diagonal / off-diagonal entry; ``residual``: ``||H - Pi(H)||_F / ||H||_F`` (0 for ``H = 0``),
    as :func:`onelayer.trees.backward.dynamics.symmetry_residual` for one matrix.
    """
    A = check_embeddings(A)
    if not isinstance(B, torch.Tensor) or B.dim() != 3 or tuple(B.shape[1:]) != (A.shape[0], A.shape[0]):
        raise ValueError(f"B must be a tensor of shape (members, d, d) with d = {A.shape[0]}")
    H = A.T.to(B.dtype) @ B @ A.to(B.dtype)
    S = H.shape[-1]
    eye = torch.eye(S, dtype=H.dtype)
    tr = torch.diagonal(H, dim1=-2, dim2=-1).sum(-1)
    h1, h2 = tr / S, (H.sum((-2, -1)) - tr) / (S * (S - 1))
    proj = h1[:, None, None] * eye + h2[:, None, None] * (1 - eye)
    norm = torch.linalg.norm(H, dim=(-2, -1))
    res = torch.where(norm > 0, torch.linalg.norm(H - proj, dim=(-2, -1)) / norm.clamp(min=1e-300), torch.zeros_like(norm))
    return torch.stack([h1, h2, res], dim=1)


def seed_runs(kind: str, *, seeds: Sequence[int], S: int = 31, m: int = 4, steps: int = 1500, lr: float = 1.0,
              batch_size: int = 256, record_every: int = 10, checkpoint_every: int = 100, test_trees: int = 1024,
              test_seed: int = 7, test_max_depth: int = 7, first_draw: int = 1) -> dict:
    """Train one run per seed (``kind``: ``"one_hot"`` or ``"gaussian"``) and test each on random trees.

    ``"gaussian"``: run ``i`` uses the embedding draw ``first_draw + i``
    (:func:`~onelayer.trees.shared.embeddings.independent_embeddings`, ``d = S``)
    and the training seed ``seeds[i]``. The test set is the generalisation chapter's
    (:func:`~onelayer.trees.backward.layout.random_tree_batch` with ``test_trees`` trees, ``test_seed``,
    ``test_max_depth``).

    Returns a JSON-ready dict: ``record_steps`` and, per run (lists indexed ``[step][run]``), ``loss``, ``h1``,
    ``h2``, ``residual``; ``checkpoints`` and, indexed ``[checkpoint][run]``, ``exact_paths`` (test paths right),
    ``test_loss`` (teacher forced), ``margin`` (of ``H = A^T B A``) and ``margin_bound`` (the bound on the test loss
    from the margin, valid for orthonormal embeddings only);
    ``lengths`` (path lengths of the test set), ``goals_by_length`` and ``exact_by_length`` (the final model's exact
    paths per length, ``{length: [per run]}``).
    """
    check_choice("kind", kind, KINDS)
    seeds = check_int_sequence("seeds", seeds, low=0)
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    S, m, steps = check_int("S", S, low=3), check_int("m", m, low=1), check_int("steps", steps, low=1)
    record_every = check_int("record_every", record_every, low=1)
    checkpoint_every = check_int("checkpoint_every", checkpoint_every, low=1)
    if steps % record_every or steps % checkpoint_every:
        raise ValueError(f"steps={steps} must be a multiple of record_every and checkpoint_every")
    test_trees, test_seed = check_int("test_trees", test_trees, low=1), check_int("test_seed", test_seed, low=0)
    first_draw = check_int("first_draw", first_draw, low=0)
    test, _ = random_tree_batch(S, test_trees, np.random.default_rng(test_seed),
                                max_depth=check_int("test_max_depth", test_max_depth, low=1))
    lengths = test.target_mask.sum(1)
    checkpoints = list(range(0, steps + 1, checkpoint_every))
    groups = ([(one_hot_embeddings(S), list(seeds))] if kind == "one_hot" else
              [(gaussian_embeddings(S, S, torch.Generator().manual_seed(first_draw + i)), [s]) for i, s in enumerate(seeds)])
    loss, stats, exact, final_ok, tested = [], [], [], [], []
    for A, group in groups:
        hist = train_backward_members(A, m=m, steps=steps, lr=lr, seeds=group, batch_size=batch_size,
                                      record_every=record_every, snapshot_at=checkpoints,
                                      record={"h": lambda p, A=A: member_h_stats(p["B"], A)})
        loss.append(np.asarray(hist.records["loss"]))
        stats.append(np.asarray(hist.records["h"]))
        cp, tl = [], []
        for t in checkpoints:
            Bt = hist.snapshots[t]["B"]
            ok = [greedy_decode(Bt[j], A, test).path_correct for j in range(len(group))]
            cp.append([int(o.sum()) for o in ok])
            H = [A.T.to(Bt.dtype) @ Bt[j] @ A.to(Bt.dtype) for j in range(len(group))]
            tl.append([[float(test_loss(Bt[j], A, test)), margin(H[j]), margin_bound(H[j], test)] for j in range(len(group))])
            if t == checkpoints[-1]:
                final_ok.extend(ok)
        exact.append(np.asarray(cp))
        tested.append(np.asarray(tl))
    loss, stats, exact = np.concatenate(loss, 1), np.concatenate(stats, 1), np.concatenate(exact, 1)
    tested = np.concatenate(tested, 1)  # (checkpoints, runs, 3)
    record_steps = list(range(0, steps + 1, record_every))
    goals = {int(k): int((lengths == k).sum()) for k in sorted(set(lengths.tolist()))}
    return {"kind": kind, "seeds": list(seeds), "draws": [first_draw + i for i in range(len(seeds))] if kind == "gaussian" else None,
            "S": S, "m": m, "steps": steps, "lr": float(lr), "batch_size": batch_size, "test_trees": test_trees,
            "test_seed": test_seed, "test_max_depth": test_max_depth, "record_steps": record_steps,
            "loss": loss.tolist(), "h1": stats[..., 0].tolist(), "h2": stats[..., 1].tolist(),
            "residual": stats[..., 2].tolist(), "checkpoints": checkpoints, "exact_paths": exact.tolist(),
            "test_loss": tested[..., 0].tolist(), "margin": tested[..., 1].tolist(), "margin_bound": tested[..., 2].tolist(),
            "lengths": lengths.tolist(), "goals_by_length": {str(k): n for k, n in goals.items()},
            "exact_by_length": {str(k): [int(o[lengths == k].sum()) for o in final_ok] for k in goals}}


def merge_bins(counts: dict, min_count: int = 50) -> list[tuple[int, int]]:
    """Group consecutive keys (path lengths) into bins ``(low, high)`` that hold at least ``min_count`` cases each.

    Keys are taken in increasing order and added to the current bin until it holds ``min_count``; a last bin that
    falls short is merged into the one before it. ``counts``: ``{length: cases}`` (keys may be strings).
    """
    min_count = check_int("min_count", min_count, low=1)
    if not isinstance(counts, dict) or not counts:
        raise ValueError("counts must be a non-empty dict {length: cases}")
    items = sorted((int(k), check_int(f"counts[{k}]", v, low=0)) for k, v in counts.items())
    if sum(v for _, v in items) < min_count:
        raise ValueError(f"the counts hold {sum(v for _, v in items)} cases, fewer than min_count={min_count}")
    bins, low, total = [], None, 0
    for k, v in items:
        low = k if low is None else low
        total += v
        if total >= min_count:
            bins.append([low, k, total])
            low, total = None, 0
    if low is not None:
        bins[-1][1] = items[-1][0]
    return [(lo, hi) for lo, hi, _ in bins]


def load_stored(path: str | Path | None = None) -> dict:
    """The stored sweep (default: :data:`STORED` in the data directory)."""
    return store.read_json(data_path(STORED) if path is None else Path(path), kind=STORED_KIND)


def main(argv=None) -> int:
    """Command line: train ``--seeds`` runs of each embedding family and write them as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer sweep trees-backward-seeds",
                                     description="Backward SGD runs over seeds (one-hot) and embedding draws (Gaussian).")
    parser.add_argument("--out", type=Path, default=None, help=f"output JSON file (default: {STORED} in the data directory)")
    parser.add_argument("--seeds", type=int, default=20, help="runs per embedding family (default 20)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests (2 runs, 100 steps, 128 test trees)")
    args = parser.parse_args(argv)
    n = check_int("seeds", args.seeds, low=1)
    out = data_path(STORED) if args.out is None else args.out
    sizes = dict(steps=100, checkpoint_every=50, test_trees=128) if args.quick else {}
    result = {"command": f"python -m onelayer sweep trees-backward-seeds --seeds {n}" + (" --quick" if args.quick else ""),
              "quick": args.quick, "runs": {}}
    for kind in KINDS:
        start = time.perf_counter()
        result["runs"][kind] = seed_runs(kind, seeds=list(range(n)), **sizes)
        result["runs"][kind]["seconds"] = round(time.perf_counter() - start)
        store.write_json(out, result, kind=STORED_KIND, indent=None)
        print(f"{kind}: {n} runs in {result['runs'][kind]['seconds']} s", flush=True)
    return 0
