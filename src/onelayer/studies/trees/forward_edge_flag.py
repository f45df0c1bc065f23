"""One head against two under both readings of the prompt edges' stage block (a stored study, issue 22).

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

**The study** ``trees-forward-edge-flag`` (:data:`STUDY`): each ``(layout, loss reduction, model)`` cell, one member
of the study, trains ``seeds`` members in
one set of tensor operations (:func:`train_members`: every member its own initialisation and its own mini-batches,
:func:`onelayer.training.train` with ``members=True`` over :func:`torch.func.vmap` of the model's own :func:`~onelayer.trees.forward.model.predict`), then
decodes ``test_trees`` random test trees per member greedily and counts the goals whose whole chain is right
(every generated token, stage flags included) and whose path is right (:func:`~.decoding.goal_counts`). A member is
the batched call of the pre-runner script (one cell, its seeds together), so its numbers are that script's. Reproduce::

    python -m onelayer study trees-forward-edge-flag --jobs 2

(``--quick`` for the seconds-long version the tests use).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from ...training import concat_histories, train
from ...validation import check_bool, check_choice, check_float, check_int
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.shared.data import LossOptions, normalised
from ...trees.forward.model import init_params, predict
from ...trees.forward.decoding import goal_counts, greedy_decode
from ...trees.forward.layout import STAGE_B, STAGE_F, STAGE_NONE, forward_target_vectors, forward_token_vectors
from .layout_variants import EDGE_STAGES, perfect_batch, random_batch
from .forward_limits import architecture
from ..runner import Member, Study
from .inputs import forward_init
from .stored_study import float64

__all__ = ["REDUCTIONS", "MODELS", "Cells", "MAIN", "QUICK", "EXTRA", "Settings", "value_map_residual",
           "train_members", "cell_runs", "converged", "members", "run_member", "summarize", "STUDY"]

#: Loss reductions trained (each a run of its own, same step size): name -> LossOptions.
REDUCTIONS = {"sum, 1": LossOptions("sum", False), "mean, 1/2": LossOptions("mean", True)}
#: The models compared.
MODELS = ("full1", "full2", "two_head", "single_head")


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

    Member ``i`` (seed ``seeds[i]``) starts from :func:`~onelayer.trees.forward.model.init_params` (zero for the structured
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
    template = perfect_batch(m, S, batch_size, np.random.default_rng(0), **layout)
    mask = template.target_mask

    def one(p, X, Y):
        err = ((predict(p, arch, A, template, X) - Y) ** 2).sum(-1)
        return normalised((err * mask).sum(), positions=mask.sum(), trees=batch_size, options=options)

    member_loss = torch.func.vmap(one)

    def loss_fn(params):
        batches = [perfect_batch(m, S, batch_size, r, **layout) for r in rngs]
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
    params, hist = train_members(arch_name, m=m, S=S, steps=steps, lr=lr, reduction=reduction,
                                 edge_stage=edge_stage, seeds=seeds, batch_size=batch_size, turning=turning)
    arch, A = architecture(arch_name), one_hot_embeddings(S)
    test, _ = random_batch(S, test_trees, np.random.default_rng(test_seed), max_depth=test_max_depth,
                           edge_stage=edge_stage, turning=turning)
    rows = []
    for i, seed in enumerate(seeds):
        p = {k: v[i] for k, v in params.items()}
        counts = goal_counts(greedy_decode(p, arch, A, test)) if all(bool(torch.isfinite(v).all()) for v in p.values()) \
            else {"goals": test_trees, "chain": 0, "path": 0}
        rows.append({"arch": arch_name, "label": arch.label(), "edge_stage": edge_stage, "reduction": reduction,
                     "seed": int(seed), "steps": hist.steps.tolist(),
                     "loss": [float(x) for x in hist["loss"][:, i]], **counts, **({} if turning else {"turning": False})})
    return rows


@dataclass(frozen=True)
class Cells:
    """One part of the study: every ``(edge stage, reduction, model)`` cell of ``edge_stages`` x ``reductions`` x
    ``models`` trains ``seeds`` members (seeds ``0 .. seeds - 1``) at the same sizes."""

    m: int
    S: int
    steps: int
    lr: float
    batch_size: int
    seeds: int
    test_trees: int
    test_max_depth: int
    models: tuple[str, ...]
    reductions: tuple[str, ...]
    edge_stages: tuple[str, ...]

    def as_dict(self) -> dict:
        """The settings as the chapter reads them (lists for the tuples)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}


#: The main part: the authors' forward setting (m = 3, S = 25, lr 0.2), batch 32, 500 steps, 20 seeds per cell,
#: 512 random test trees (0-3 children, depth caps 1-6) per cell.
MAIN = Cells(m=3, S=25, steps=500, lr=0.2, batch_size=32, seeds=20, test_trees=512, test_max_depth=6,
              models=MODELS, reductions=tuple(REDUCTIONS), edge_stages=tuple(EDGE_STAGES))
#: The step-size check under ``s_b``: two full heads diverge at lr 0.2 under the sum loss, so one and two full heads
#: are trained again at lr 0.1 for 1,000 steps (20 seeds each), stored under ``"extra"``.
EXTRA = Cells(m=3, S=25, steps=1000, lr=0.1, batch_size=32, seeds=20, test_trees=512, test_max_depth=6,
              models=("full1", "full2"), reductions=("sum, 1",), edge_stages=("s_b",))
#: The seconds-long version (tests, a figure's quick mode).
QUICK = Cells(m=2, S=15, steps=30, lr=0.2, batch_size=8, seeds=2, test_trees=16, test_max_depth=4,
              models=("full1", "two_head"), reductions=("sum, 1",), edge_stages=tuple(EDGE_STAGES))


@dataclass(frozen=True)
class Settings:
    """The study's settings: the ``main`` cells and the ``extra`` step-size check."""

    main: Cells = MAIN
    extra: Cells = EXTRA


_SHORT = {"sum, 1": "sum1", "mean, 1/2": "mean-half", "s_b": "sb", "empty": "empty"}


def _cells(part: str, c: Cells) -> list[tuple[str, str, str, str]]:
    """``(key, edge stage, reduction, model)`` of every cell of a part, in the stored order."""
    return [(f"{part}-{_SHORT[stage]}-{_SHORT[reduction]}-{name.replace('_', '-')}", stage, reduction, name)
            for stage in c.edge_stages for reduction in c.reductions for name in c.models]


def members(settings: Settings) -> list[Member]:
    """One member per cell, e.g. ``main-sb-sum1-full2`` (part, edge stage, reduction, model), its seeds together."""
    return [Member(key, {"part": part, "edge_stage": stage, "reduction": reduction, "model": name},
                   cost=float(c.steps * c.batch_size * c.seeds * (int(name[4:]) if name.startswith("full") else 1)))
            for part, c in (("main", settings.main), ("extra", settings.extra))
            for key, stage, reduction, name in _cells(part, c)]


def run_member(settings: Settings, member: Member) -> dict:
    """One cell: ``{"runs": [one row per seed]}`` (:func:`cell_runs`)."""
    f = member.fields
    c = getattr(settings, f["part"])
    with float64():
        return {"runs": cell_runs(f["model"], m=c.m, S=c.S, steps=c.steps, lr=c.lr, reduction=f["reduction"],
                                  edge_stage=f["edge_stage"], seeds=range(c.seeds), batch_size=c.batch_size,
                                  test_trees=c.test_trees, test_max_depth=c.test_max_depth)}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: ``settings`` and ``runs`` of the main part (every seed of every cell, in the order
    edge stage, reduction, model), and ``extra`` with the same two of the step-size check."""
    by_key = {r["key"]: r["result"]["runs"] for r in records}
    part = lambda name, c: {"settings": c.as_dict(),  # noqa: E731
                            "runs": [row for key, *_ in _cells(name, c) for row in by_key[key]]}
    return {**part("main", settings.main), "extra": part("extra", settings.extra)}


STUDY = Study(name="trees-forward-edge-flag", stored="trees/data/forward_edge_flag.json", kind="trees-forward-edge-flag",
              settings=Settings(), quick=Settings(main=QUICK, extra=dataclasses.replace(QUICK, lr=0.1, edge_stages=("s_b",))),
              members=members, run_member=run_member, summarize=summarize,
              description="Trees II: one head against two, 20 seeds per cell, under both readings of the prompt edges' "
                          "stage block")
