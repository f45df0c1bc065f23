"""Alternative readings of the forward token layout: which verdicts change under the spec's alternatives.

This module is about layout *sensitivity*; the R-F token layout itself, which every other forward module uses, is
:mod:`onelayer.trees.forward.layout`. That layout is a reconstruction
([guess], spec section 3.7 and open point 1-2). Two alternatives are measured here:

* **child first**: every token holds ``(child, parent)`` instead of
  ``(parent, child)`` (the node blocks swapped in every token and target).
  For full heads this is an exact reparameterisation: with ``P`` the
  permutation that swaps the two node blocks, training on the swapped tokens
  from ``P W P^T`` follows ``P W_t P^T`` step by step, so every loss, decoded
  token and accuracy is the same; for structured heads the same holds once
  their fixed blocks are permuted with the layout. :func:`child_first_check`
  measures it on a training run instead of assuming it.
* **no turning token** (``turning=False``): the stage switches on the step
  after the one that emits the root, so the chain has ``2m`` steps instead of
  ``2m + 1``. The spec ([guess]) says the structured two-head construction
  then has no backward token holding ``r`` to swap. :func:`turning_runs`
  retrains every model of the limits chapter on it: the single-head
  comparison at the authors' forward setting, then the heads x depth cells.

Stored by ``python -m onelayer sweep trees-forward-layouts`` (a few minutes of one
core); the chapter loads :data:`STORED`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from ... import store
from ...paths import data_path
from ...validation import check_bool, check_int
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.shared.losses import LossOptions
from ...trees.forward import construction
from ...trees.forward.architecture import full_heads, init_params, two_head
from ...trees.forward.decoding import greedy_decode, teacher_forced_correct
from ...trees.forward.layout import STEP_TYPES, ForwardBatch, perfect_forward_batch, random_forward_batch
from .forward_limits import NORMALISATIONS, architecture, heads_depth_kwargs, run_config
from ...trees.forward.model import train_forward
from .inputs import forward_init

__all__ = ["STORED", "STORED_KIND", "load_stored", "swap_node_blocks", "child_first_check", "TABLE_SETTING",
           "turning_runs", "comparison_rows", "construction_check", "main"]

#: Where :func:`main` writes by default, inside the data directory.
STORED = "trees/data/forward_layouts.json"
#: The ``kind`` of that file.
STORED_KIND = "trees-forward-layouts"

#: The single-head comparison's setting (the limits chapter's loss table, its "sum, 1" normalisation).
TABLE_SETTING = dict(m=3, S=25, steps=1500, lr=0.2, norm="sum, 1", batch_size=256, test_trees=1024)


def load_stored(path=None) -> dict:
    """The stored layout runs (default :data:`STORED` in the data directory)."""
    return store.read_json(data_path(STORED) if path is None else Path(path), kind=STORED_KIND)


def swap_node_blocks(batch: ForwardBatch) -> ForwardBatch:
    """The same batch in the child-first layout: node blocks 1 and 2 swapped in every token and target."""
    if not isinstance(batch, ForwardBatch):
        raise TypeError(f"batch must be a ForwardBatch, got {type(batch).__name__}")
    fields = {f: getattr(batch, f) for f in batch.__dataclass_fields__}
    fields["first"], fields["second"] = batch.second, batch.first
    fields["target_first"], fields["target_second"] = batch.target_second, batch.target_first
    return ForwardBatch(**fields)


def _block_swap(d: int) -> torch.Tensor:
    idx = torch.cat([torch.arange(d, 2 * d), torch.arange(d), torch.arange(2 * d, 2 * d + 2)])
    return torch.eye(2 * d + 2, dtype=torch.float64)[idx]


def child_first_check(*, heads: int = 2, m: int = 2, steps: int = 100, lr: float = 2.0, init_scale: float = 0.01,
                      batch_size: int = 64, seed: int = 0) -> dict:
    """Train ``heads`` full heads on one fixed batch in both layouts, from ``W_0`` and ``P W_0 P^T``.

    Returns the largest loss difference over the run, the largest entry of
    ``P W_t P^T - W'_t`` at the end (both should be round-off), and the final
    loss. ``init_scale = 0`` starts both from zero.
    """
    heads = check_int("heads", heads, low=1, high=8)
    m = check_int("m", m, low=1, high=6)
    steps = check_int("steps", steps, low=1)
    batch_size = check_int("batch_size", batch_size, low=1)
    arch = architecture(f"full{heads}")
    S = 2 ** (m + 1) + 9
    A = one_hot_embeddings(S)
    batch = perfect_forward_batch(m, S, batch_size, np.random.default_rng(check_int("seed", seed, low=0)))
    swapped = swap_node_blocks(batch)
    init = forward_init(arch, A, init_scale=init_scale, gen=torch.Generator().manual_seed(seed)) if init_scale > 0 \
        else init_params(arch, A)
    P = _block_swap(A.shape[0])
    init_swapped = {k: P @ v @ P.T for k, v in init.items()}
    runs = [train_forward(arch, A, m=m, steps=steps, lr=lr, init=i, fixed_batch=b, record_every=1,
                          options=LossOptions("mean", True))
            for i, b in ((init, batch), (init_swapped, swapped))]
    loss_gap = float(np.max(np.abs(np.asarray(runs[0]["loss"]) - np.asarray(runs[1]["loss"]))))
    param_gap = max(float((P @ runs[0].params[k] @ P.T - runs[1].params[k]).abs().max()) for k in init)
    return {"heads": heads, "m": m, "steps": steps, "init_scale": init_scale, "loss_gap": loss_gap,
            "param_gap": param_gap, "final_loss": float(runs[0]["loss"][-1])}


def construction_check(*, S: int = 25, count: int = 256, max_depth: int = 5, scales=(20.0, 10.0, 10.0),
                       seed: int = 0) -> list[dict]:
    """Whole-path accuracy of the two constructions (two heads, Theorem 2; one full head) with and without the turning token.

    Greedy decoding of ``count`` random test trees (depth cap uniform in ``1..max_depth``) at the
    scales ``(lambda, mu, kappa)``; returns one dict per (construction, layout) with the accuracy
    per step type (greedy) and the teacher-forced accuracy of the first forward step and of the later ones.
    """
    S = check_int("S", S, low=2)
    count = check_int("count", count, low=1)
    lam, mu, kappa = scales
    A = one_hot_embeddings(S)
    models = {"two heads (Theorem 2)": (construction.constructed_params(A, lam, mu, kappa), two_head()),
              "one full head": (construction.full_single_head_construction(A, lam, mu), full_heads(1))}
    out = []
    for turning in (True, False):
        batch, _ = random_forward_batch(S, count, np.random.default_rng(check_int("seed", seed, low=0)),
                                        max_depth=check_int("max_depth", max_depth, low=1), turning=turning)
        for name, (params, arch) in models.items():
            res = greedy_decode(params, arch, A, batch)
            ok = teacher_forced_correct(params, arch, A, batch)
            fwd = (batch.step_type == STEP_TYPES.index("forward")) & batch.target_mask
            first = torch.zeros_like(fwd)
            first[torch.arange(batch.size), fwd.int().argmax(1)] = True
            out.append({"construction": name, "layout": "R-F" if turning else "no turning token",
                        "path accuracy": res.path_accuracy, **res.accuracy_by_type(),
                        "first forward step (teacher-forced)": float(ok[first & fwd].double().mean()),
                        "later forward steps (teacher-forced)": float(ok[fwd & ~first].double().mean())})
    return out


def turning_runs(*, quick: bool = False, progress=print) -> dict:
    """Every limits-chapter model trained and tested with and without the turning token.

    ``"table"``: the structured two-head model, the structured single head and
    one full head at :data:`TABLE_SETTING` (zero init). ``"cells"``: the
    heads x depth protocol (:func:`~onelayer.studies.trees.forward_limits.heads_depth_kwargs`)
    at ``m = 2, 3`` for the structured two-head model and 1 to 4 full heads.
    Each entry is a pair of run rows (``turning`` True, False) without parameters.
    """
    check_bool("quick", quick)
    table_setting = dict(TABLE_SETTING, m=2, S=17, steps=10, batch_size=16, test_trees=32) if quick else TABLE_SETTING
    out = {"table": [], "cells": []}
    for name in ("two_head", "single_head", "full1"):
        pair = [run_config(name, **table_setting, record_every=25 if not quick else 5, turning=t) for t in (True, False)]
        out["table"].append(pair)
        progress(f"table {name:12s} loss {pair[0]['loss'][-1]:.4g} -> {pair[1]['loss'][-1]:.4g}, "
                 f"test {pair[0]['test_path_accuracy']:.3f} -> {pair[1]['test_path_accuracy']:.3f}")
    names = ("two_head", "full1") if quick else ("two_head", "full1", "full2", "full3", "full4")
    for m in ((2,) if quick else (2, 3)):
        for name in names:
            pair = [run_config(name, **heads_depth_kwargs(name, m, quick=quick), turning=t) for t in (True, False)]
            out["cells"].append(pair)
            progress(f"cell {name:9s} m={m} converged {pair[0]['steps_to_converge']} -> {pair[1]['steps_to_converge']}, "
                     f"test {pair[0]['test_path_accuracy']:.3f} -> {pair[1]['test_path_accuracy']:.3f}")
    return out


def comparison_rows(pairs) -> list[dict]:
    """One table row per (turning, no turning) pair of :func:`turning_runs`: final loss, steps to converge, test accuracy."""
    rows = []
    for pair in pairs:
        if len(pair) != 2 or pair[1].get("turning", True):
            raise ValueError("pairs must hold (turning, no turning) run pairs from turning_runs")
        a, b = pair
        rows.append({"model": a["label"], "m": a["m"], "loss": a["norm"],
                     "final loss (R-F)": a["loss"][-1], "final loss (no turn)": b["loss"][-1],
                     "converged at (R-F)": a["steps_to_converge"], "converged at (no turn)": b["steps_to_converge"],
                     "test acc (R-F)": a["test_path_accuracy"], "test acc (no turn)": b["test_path_accuracy"]})
    return rows


def main(argv=None) -> int:
    """Command line: run :func:`turning_runs` and :func:`child_first_check` and write them as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer sweep trees-forward-layouts",
                                     description="Trees II: the forward results under two alternative layouts.")
    parser.add_argument("--out", type=Path, default=None, help=f"output JSON file (default: {STORED} in the data directory)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests")
    args = parser.parse_args(argv)
    out = data_path(STORED) if args.out is None else args.out
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    result = {"command": "python -m onelayer sweep trees-forward-layouts" + (" --quick" if args.quick else ""),
              "quick": args.quick, "normalisations": list(NORMALISATIONS)}
    result["child_first"] = [child_first_check(heads=h, init_scale=s, steps=5 if args.quick else 100,
                                               batch_size=16 if args.quick else 64) for h, s in ((1, 0.0), (2, 0.01))]
    result.update(turning_runs(quick=args.quick))
    store.write_json(out, result, kind=STORED_KIND, indent=1)
    return 0
