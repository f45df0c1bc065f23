"""One head against two under both readings of the prompt edges' stage block (stored sweep, issue 22).

The R-F layout leaves the stage block of a prompt edge empty (``[a_p; a_c; 0]``); the other reading, equally
compatible with what is known, gives it the backward flag (``[a_p; a_c; s_b]``, ``edge_stage="s_b"`` in
:mod:`~onelayer.trees.forward.layout`). This module measures which single- and two-head models train under each.

**Why one head cannot be exact under ``s_b``.** With sharp attention a head outputs ``W^V x`` for the one token
``x`` it attends to; its stage rows are ``g(x) = W_1 x^(1) + W_2 x^(2) + M x^(s)``. A backward step copies the edge
``[a_p; a_c; s_b]`` and must emit ``s_b``; a forward step copies the stored backward step ``[a_c; a_p; s_b]`` over
the same two nodes and must emit ``s_f``. Labels are drawn at random, so every ordered pair ``(u, v)`` of distinct
symbols occurs both as an edge ``(p, c) = (u, v)`` and as a stored step ``(c, p) = (u, v)``: the same vector must
give ``s_b`` and ``s_f``. The best linear map gives ``(s_b + s_f) / 2`` to both, a squared error of ``1/2`` per
copied token, and the flag rounds to a tie. With an empty edge stage block the edge and the stored step differ in
``x^(s)`` and the map ``g(x) = e_1 w^T x^(1) + M x^(s)`` of
:func:`~onelayer.trees.forward.construction.full_single_head_construction` is exact.
:func:`value_map_residual` checks this by least squares over every copy one chain makes.

**The sweep** (:func:`edge_flag_runs`): each ``(layout, loss reduction, model)`` cell trains ``seeds`` members in
one set of tensor operations (:func:`train_members`: every member its own initialisation and its own mini-batches,
:func:`onelayer.training.train` with ``members=True`` over :func:`torch.func.vmap` of the model's own :func:`~onelayer.trees.forward.model.predict`), then
decodes ``test_trees`` random test trees per member greedily and counts the goals whose whole chain is right
(every generated token, stage flags included) and whose path is right (:func:`~.decoding.goal_counts`). Reproduce::

    OMP_NUM_THREADS=1 python -m onelayer sweep trees-forward-edge-flag

(``--quick`` for the seconds-long version the tests use).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from ... import store
from ...training import concat_histories, train
from ...paths import data_path
from ...validation import check_bool, check_choice, check_float, check_int
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.shared.losses import LossOptions, normalised
from ...trees.forward.architecture import init_params
from ...trees.forward.decoding import goal_counts, greedy_decode
from ...trees.forward.layout import EDGE_STAGES, STAGE_B, STAGE_F, STAGE_NONE, forward_target_vectors, forward_token_vectors
from ...trees.forward.layout import perfect_forward_batch, random_forward_batch
from .forward_limits import architecture
from ...trees.forward.model import predict
from .inputs import forward_init

__all__ = ["STORED", "STORED_KIND", "load_stored", "REDUCTIONS", "MODELS", "SweepSettings", "SWEEP", "QUICK",
           "EXTRA", "value_map_residual", "train_members", "cell_runs", "edge_flag_runs", "converged", "main"]

STORED = "trees/data/forward_edge_flag.json"
STORED_KIND = "trees-forward-edge-flag"

#: Loss reductions trained (each a run of its own, same step size): name -> LossOptions.
REDUCTIONS = {"sum, 1": LossOptions("sum", False), "mean, 1/2": LossOptions("mean", True)}
#: The models compared.
MODELS = ("full1", "full2", "two_head", "single_head")


def load_stored(path=None) -> dict:
    """The stored sweep (default :data:`STORED` in the data directory)."""
    return store.read_json(data_path(STORED) if path is None else Path(path), kind=STORED_KIND)


def value_map_residual(S: int, edge_stage: str, dtype=torch.float64) -> dict:
    """Least-squares fit of the stage rows of one value map to every copy a chain makes, over all label pairs.

    Inputs (one-hot node blocks, ``S`` symbols): every edge ``[a_u; a_v; e]`` with ``u != v`` (target ``s_b``,
    the backward step that copies it), every stored backward step ``[a_v; a_u; s_b]`` (target ``s_f``, the forward
    step that copies it) and every root token ``[a_r; a_r; s_f]`` (target ``s_f``, the turn); ``e`` is ``0`` or
    ``s_b`` by ``edge_stage``. Returns the smallest mean squared error per copied token of the edges and of the
    stored steps, and the fitted stage outputs' worst distance to their targets (``max_error``).
    """
    S = check_int("S", S, low=2, high=200)
    check_choice("edge_stage", edge_stage, EDGE_STAGES)
    eye = torch.eye(S, dtype=dtype)
    flag = {STAGE_NONE: torch.zeros(2, dtype=dtype), STAGE_B: torch.tensor([1.0, 0.0], dtype=dtype),
            STAGE_F: torch.tensor([0.0, 1.0], dtype=dtype)}
    u, v = (t.reshape(-1) for t in torch.meshgrid(torch.arange(S), torch.arange(S), indexing="ij"))
    off = u != v
    u, v = u[off], v[off]
    n = len(u)
    e = flag[STAGE_B if edge_stage == "s_b" else STAGE_NONE]
    edges = torch.cat([eye[u], eye[v], e.expand(n, 2)], 1)
    stored_steps = torch.cat([eye[v], eye[u], flag[STAGE_B].expand(n, 2)], 1)
    roots = torch.cat([eye, eye, flag[STAGE_F].expand(S, 2)], 1)
    X = torch.cat([edges, stored_steps, roots])
    Y = torch.cat([flag[STAGE_B].expand(n, 2), flag[STAGE_F].expand(n, 2), flag[STAGE_F].expand(S, 2)])
    W = torch.linalg.lstsq(X, Y, driver="gelsd").solution  # (2S + 2, 2): the stage rows of W^V, transposed
    err = ((X @ W - Y) ** 2).sum(1)
    return {"S": S, "edge_stage": edge_stage, "edge_residual": float(err[:n].mean()),
            "stored_step_residual": float(err[n:2 * n].mean()), "root_residual": float(err[2 * n:].mean()),
            "max_error": float(err.max().sqrt())}


def train_members(arch_name: str, *, m: int, S: int, steps: int, lr: float, reduction: str, edge_stage: str,
                  seeds, batch_size: int = 32, init_scale: float = 0.01, record_every: int = 50, cot: bool = True,
                  turning: bool = True, member_chunk: int | None = None):
    """Train one member per seed at once; returns ``(params (M, ...), BatchedHistory)``.

    Member ``i`` (seed ``seeds[i]``) starts from :func:`~.architecture.init_params` (zero for the structured
    models; ``N(0, init_scale^2)`` from ``torch.Generator().manual_seed(10_000 + seed)`` for full heads) and sees
    its own stream of ``batch_size`` perfect trees of depth ``m`` per step (``numpy`` generator ``seed``).
    ``cot=False`` trains on the answer-only layout, ``turning=False`` on the layout without a turning token
    (:mod:`onelayer.trees.forward.layout`). ``member_chunk``: train at most this many members per batched call,
    one call after the other (``None``: all at once); every member does the same arithmetic either way, so only
    the time changes (large batches are compute-bound, and smaller calls keep them in cache: ``make bench``).
    """
    if member_chunk is not None:
        member_chunk = check_int("member_chunk", member_chunk, low=1)
        seeds = list(seeds)
        kwargs = dict(m=m, S=S, steps=steps, lr=lr, reduction=reduction, edge_stage=edge_stage, batch_size=batch_size,
                      init_scale=init_scale, record_every=record_every, cot=cot, turning=turning)
        parts = [train_members(arch_name, seeds=seeds[i:i + member_chunk], **kwargs)[1]
                 for i in range(0, max(len(seeds), 1), member_chunk)]
        hist = concat_histories(parts)
        return hist.params, hist
    arch = architecture(arch_name)
    m, S = check_int("m", m, low=1, high=6), check_int("S", S, low=2 ** (m + 1) - 1)
    steps, batch_size = check_int("steps", steps, low=1), check_int("batch_size", batch_size, low=1)
    lr, init_scale = check_float("lr", lr, low=0.0, low_open=True), check_float("init_scale", init_scale, low=0.0)
    options = REDUCTIONS[check_choice("reduction", reduction, REDUCTIONS)]
    check_choice("edge_stage", edge_stage, EDGE_STAGES)
    layout = {"edge_stage": edge_stage, "cot": check_bool("cot", cot), "turning": check_bool("turning", turning)}
    seeds = [check_int(f"seeds[{i}]", s, low=0) for i, s in enumerate(seeds)]
    if not seeds:
        raise ValueError("seeds must not be empty")
    A = one_hot_embeddings(S)
    inits = [forward_init(arch, A, init_scale=init_scale, gen=torch.Generator().manual_seed(10_000 + s))
             if arch.kind == "full" else init_params(arch, A) for s in seeds]
    init = {k: torch.stack([p[k] for p in inits]) for k in inits[0]}
    rngs = [np.random.default_rng(s) for s in seeds]
    template = perfect_forward_batch(m, S, batch_size, np.random.default_rng(0), **layout)
    mask = template.target_mask

    def one(p, X, Y):
        err = ((predict(p, arch, A, template, X) - Y) ** 2).sum(-1)
        return normalised((err * mask).sum(), positions=mask.sum(), trees=batch_size, options=options)

    member_loss = torch.func.vmap(one)

    def loss_fn(params):
        batches = [perfect_forward_batch(m, S, batch_size, r, **layout) for r in rngs]
        X = torch.stack([forward_token_vectors(b, A) for b in batches])
        Y = torch.stack([forward_target_vectors(b, A) for b in batches])
        return member_loss(params, X, Y)

    hist = train(init, loss_fn, members=True, steps=steps, lr=lr, record_every=record_every)
    return hist.params, hist


def converged(loss_curve, threshold: float) -> bool:
    """Whether the final loss is below ``threshold`` times the initial one (a diverged run, ``nan``, is not)."""
    threshold = check_float("threshold", threshold, low=0.0, low_open=True)
    first, last = float(loss_curve[0]), float(loss_curve[-1])
    return bool(np.isfinite(last) and last < threshold * first)


def cell_runs(arch_name: str, *, m: int, S: int, steps: int, lr: float, reduction: str, edge_stage: str, seeds,
              batch_size: int, test_trees: int, test_max_depth: int, test_seed: int = 70_000,
              turning: bool = True) -> list[dict]:
    """:func:`train_members`, then every member's goals on ``test_trees`` random test trees of the same layout (one
    test set per cell, drawn from ``test_seed``): one JSON-ready dict per member. ``turning=False``: the layout
    without a turning token, in training and test (the rows then say ``"turning": False``)."""
    test_trees = check_int("test_trees", test_trees, low=1)
    start = time.perf_counter()
    params, hist = train_members(arch_name, m=m, S=S, steps=steps, lr=lr, reduction=reduction,
                                 edge_stage=edge_stage, seeds=seeds, batch_size=batch_size, turning=turning)
    arch, A = architecture(arch_name), one_hot_embeddings(S)
    test, _ = random_forward_batch(S, test_trees, np.random.default_rng(test_seed), max_depth=test_max_depth,
                                   edge_stage=edge_stage, turning=turning)
    train_seconds = time.perf_counter() - start
    rows = []
    for i, seed in enumerate(seeds):
        p = {k: v[i] for k, v in params.items()}
        counts = goal_counts(greedy_decode(p, arch, A, test)) if all(bool(torch.isfinite(v).all()) for v in p.values()) \
            else {"goals": test_trees, "chain": 0, "path": 0}
        rows.append({"arch": arch_name, "label": arch.label(), "edge_stage": edge_stage, "reduction": reduction,
                     "seed": int(seed), "steps": hist.steps.tolist(),
                     "loss": [float(x) for x in hist["loss"][:, i]], **counts, **({} if turning else {"turning": False})})
    rows[0]["seconds"] = round(time.perf_counter() - start, 1)
    rows[0]["train_seconds"] = round(train_seconds, 1)
    return rows


class SweepSettings(dict):
    """The sweep's sizes (a dict, stored with the runs)."""


#: The stored sweep: the authors' forward setting (m = 3, S = 25, lr 0.2), batch 32, 500 steps, 20 seeds per cell,
#: 512 random test trees (0-3 children, depth caps 1-6) per cell.
SWEEP = SweepSettings(m=3, S=25, steps=500, lr=0.2, batch_size=32, seeds=20, test_trees=512, test_max_depth=6,
                      models=list(MODELS), reductions=list(REDUCTIONS), edge_stages=list(EDGE_STAGES))
#: The step-size check under ``s_b``: two full heads diverge at lr 0.2 under the sum loss, so one and two full heads
#: are trained again at lr 0.1 for 1,000 steps (20 seeds each), stored under ``"extra"``.
EXTRA = SweepSettings(m=3, S=25, steps=1000, lr=0.1, batch_size=32, seeds=20, test_trees=512, test_max_depth=6,
                      models=["full1", "full2"], reductions=["sum, 1"], edge_stages=["s_b"])
#: The seconds-long version (tests).
QUICK = SweepSettings(m=2, S=15, steps=30, lr=0.2, batch_size=8, seeds=2, test_trees=16, test_max_depth=4,
                      models=["full1", "two_head"], reductions=["sum, 1"], edge_stages=list(EDGE_STAGES))


def edge_flag_runs(settings: dict = SWEEP, *, progress=print) -> list[dict]:
    """Every cell of ``settings`` (:data:`SWEEP` or :data:`QUICK`): a list of per-member rows."""
    if not isinstance(settings, dict):
        raise TypeError("settings must be a dict such as SWEEP or QUICK")
    s = settings
    rows = []
    for edge_stage in s["edge_stages"]:
        for reduction in s["reductions"]:
            for name in s["models"]:
                cell = cell_runs(name, m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction=reduction,
                                 edge_stage=edge_stage, seeds=range(s["seeds"]), batch_size=s["batch_size"],
                                 test_trees=s["test_trees"], test_max_depth=s["test_max_depth"])
                rows += cell
                progress(f"{edge_stage:5s} {reduction:9s} {name:11s} chain {sum(r['chain'] for r in cell)}/"
                         f"{sum(r['goals'] for r in cell)}  path {sum(r['path'] for r in cell)}  {cell[0]['seconds']} s")
    return rows


def main(argv=None) -> int:
    """Command line: run the sweep and write it as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.trees.forward_edge_flag", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help=f"output JSON (default: {STORED} in the data directory)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests")
    parser.add_argument("--part", choices=("main", "extra", "all"), default="all",
                        help="main: the SWEEP cells; extra: the EXTRA step-size check (added to an existing --out)")
    args = parser.parse_args(argv)
    check_bool("quick", args.quick)
    out = data_path(STORED) if args.out is None else args.out
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    command = "OMP_NUM_THREADS=1 python -m onelayer sweep trees-forward-edge-flag" + (" --quick" if args.quick else "")
    result = load_stored(out) if args.part == "extra" else {}
    if args.part in ("main", "all"):
        start = time.perf_counter()
        settings = QUICK if args.quick else SWEEP
        result = {"command": command, "quick": args.quick, "settings": dict(settings),
                  "runs": edge_flag_runs(settings), "minutes": round((time.perf_counter() - start) / 60, 1)}
        store.write_json(out, result, kind=STORED_KIND, indent=1)
    if args.part in ("extra", "all"):
        start = time.perf_counter()
        settings = {**QUICK, "lr": 0.1, "edge_stages": ["s_b"]} if args.quick else EXTRA
        result["extra"] = {"command": command + " --part extra", "settings": dict(settings),
                           "runs": edge_flag_runs(settings), "minutes": round((time.perf_counter() - start) / 60, 1)}
        result = {k: v for k, v in result.items() if k not in ("schema_version", "kind")}
        store.write_json(out, result, kind=STORED_KIND, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
