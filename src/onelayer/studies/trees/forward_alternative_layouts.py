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
  then has no backward token holding ``r`` to swap. The study retrains every
  model of the limits chapter on it, one member per model and layout: the
  single-head comparison at the authors' forward setting, then the heads x
  depth cells.

The study ``trees-forward-layouts`` (:data:`STUDY`; ``python -m onelayer study
trees-forward-layouts``, a few minutes of one core) stores both; the chapter reads
it through :func:`onelayer.studies.trees.stored_study.summary`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...validation import check_int
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.shared.data import LossOptions
from ...trees.forward import construction
from ...trees.forward.model import full_heads, init_params, train_forward, two_head
from ...trees.forward.decoding import greedy_decode, teacher_forced_correct
from ...trees.forward.layout import STEP_TYPES, ForwardBatch, perfect_forward_batch
from .layout_variants import random_batch
from .forward_limits import NORMALISATIONS, architecture, heads_depth_kwargs, run_config
from ..runner import Member, Study
from .inputs import forward_init
from .stored_study import float64

__all__ = ["swap_node_blocks", "child_first_check", "construction_check", "Settings", "QUICK", "members", "run_member",
           "summarize", "STUDY", "comparison_rows"]


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
        batch, _ = random_batch(S, count, np.random.default_rng(check_int("seed", seed, low=0)),
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


@dataclass(frozen=True)
class Settings:
    """The study's settings (the pre-runner script's defaults). ``child_first``: ``(heads, init_scale)`` of each
    :func:`child_first_check`; ``table_*``: the single-head comparison at the authors' forward setting (the limits
    chapter's loss table, its "sum, 1" normalisation), one run per model of ``table_models`` and layout;
    ``cell_models`` x ``cell_depths``: the heads x depth protocol
    (:func:`~onelayer.studies.trees.forward_limits.heads_depth_kwargs`, its quick version with ``cells_quick``)."""

    child_first: tuple[tuple[int, float], ...] = ((1, 0.0), (2, 0.01))
    child_first_steps: int = 100
    child_first_batch: int = 64
    table_models: tuple[str, ...] = ("two_head", "single_head", "full1")
    table_m: int = 3
    table_S: int = 25
    table_steps: int = 1500
    table_lr: float = 0.2
    table_norm: str = "sum, 1"
    table_batch: int = 256
    table_test_trees: int = 1024
    table_record_every: int = 25
    cell_models: tuple[str, ...] = ("two_head", "full1", "full2", "full3", "full4")
    cell_depths: tuple[int, ...] = (2, 3)
    cells_quick: bool = False


#: The seconds-long version (tests, a figure's quick mode).
QUICK = Settings(child_first_steps=5, child_first_batch=16, table_m=2, table_S=17, table_steps=10, table_batch=16,
                 table_test_trees=32, table_record_every=5, cell_models=("two_head", "full1"), cell_depths=(2,),
                 cells_quick=True)

_LAYOUTS = {"turn": True, "noturn": False}


def _name(model: str) -> str:
    return model.replace("_", "-")


def members(settings: Settings) -> list[Member]:
    """``child-first-h<heads>`` (one :func:`child_first_check`), ``table-<model>-<layout>`` and
    ``cell-m<m>-<model>-<layout>`` (one training run each; layout ``turn`` or ``noturn``). Cost: steps x batch."""
    out = [Member(f"child-first-h{h}", {"part": "child_first", "heads": h, "init_scale": scale},
                  cost=settings.child_first_steps * settings.child_first_batch) for h, scale in settings.child_first]
    for model in settings.table_models:
        for layout, turning in _LAYOUTS.items():
            out.append(Member(f"table-{_name(model)}-{layout}", {"part": "table", "model": model, "turning": turning},
                              cost=settings.table_steps * settings.table_batch))
    for m in settings.cell_depths:
        for model in settings.cell_models:
            kwargs = heads_depth_kwargs(model, m, quick=settings.cells_quick)
            for layout, turning in _LAYOUTS.items():
                out.append(Member(f"cell-m{m}-{_name(model)}-{layout}", {"part": "cells", "model": model, "m": m,
                                                                          "turning": turning},
                                  cost=kwargs["steps"] * kwargs["batch_size"]))
    return out


def run_member(settings: Settings, member: Member) -> dict:
    """One member: a :func:`child_first_check`, or a run row of
    :func:`~onelayer.studies.trees.forward_limits.run_config` without its parameters and its wall seconds."""
    f = member.fields
    with float64():
        if f["part"] == "child_first":
            return child_first_check(heads=f["heads"], init_scale=f["init_scale"], steps=settings.child_first_steps,
                                     batch_size=settings.child_first_batch)
        if f["part"] == "table":
            row = run_config(f["model"], m=settings.table_m, S=settings.table_S, steps=settings.table_steps,
                             lr=settings.table_lr, norm=settings.table_norm, batch_size=settings.table_batch,
                             test_trees=settings.table_test_trees, record_every=settings.table_record_every,
                             turning=f["turning"])
        else:
            row = run_config(f["model"], **heads_depth_kwargs(f["model"], f["m"], quick=settings.cells_quick),
                             turning=f["turning"])
    del row["seconds"]
    return row


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: ``normalisations``, ``child_first`` (one dict per check), ``table`` and ``cells``
    (``(turning, no turning)`` pairs of run rows, in the order of the settings)."""
    by_key = {r["key"]: r["result"] for r in records}
    pair = lambda prefix: [by_key[f"{prefix}-{layout}"] for layout in _LAYOUTS]  # noqa: E731
    return {"normalisations": list(NORMALISATIONS),
            "child_first": [by_key[f"child-first-h{h}"] for h, _ in settings.child_first],
            "table": [pair(f"table-{_name(model)}") for model in settings.table_models],
            "cells": [pair(f"cell-m{m}-{_name(model)}") for m in settings.cell_depths for model in settings.cell_models]}


STUDY = Study(name="trees-forward-layouts", stored="trees/data/forward_layouts.json", kind="trees-forward-layouts",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Trees II: the forward models under two alternative layouts (child first; no turning token)",
              # atol: the child-first gaps are round-off (about 1e-16) and move by round-off on another CPU
              rtol=1e-9, atol=1e-12)


def comparison_rows(pairs) -> list[dict]:
    """One table row per (turning, no turning) pair of the study's summary (``table``, ``cells``): final loss, steps to converge, test accuracy."""
    rows = []
    for pair in pairs:
        if len(pair) != 2 or pair[1].get("turning", True):
            raise ValueError("pairs must hold (turning, no turning) run pairs of the study's summary")
        a, b = pair
        rows.append({"model": a["label"], "m": a["m"], "loss": a["norm"],
                     "final loss (R-F)": a["loss"][-1], "final loss (no turn)": b["loss"][-1],
                     "converged at (R-F)": a["steps_to_converge"], "converged at (no turn)": b["steps_to_converge"],
                     "test acc (R-F)": a["test_path_accuracy"], "test acc (no turn)": b["test_path_accuracy"]})
    return rows
