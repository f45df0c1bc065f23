"""Heavier forward-task experiments, stored as the study ``trees-forward-limits`` for the limits chapter.

Two experiments, both with one-hot embeddings and mini-batch SGD on perfect
binary training trees (batch 256) from a seeded stream:

* the loss table (members ``table-...``): the single-head vs two-head comparison at the
  authors' forward setting (``m = 3``, ``S = 25``, learning rate 0.2, 1,500
  steps) for the structured two-head model, the structured single head and
  one *full* head (learnable key-query and value matrices, zero init), under
  the loss normalisations ``mean, 1/2`` (our default), ``sum, 1/2`` and
  ``sum, 1`` (the one whose initial scale is closest to the authors' table).
* heads x depth (members ``depth-...``, :func:`heads_depth_cells`): full heads ``L = 1..4`` (small Gaussian
  initialisation, the named variation that lets heads differ) and the
  structured two-head model, at training depths ``m = 2..5`` with
  ``S = 2^(m+1) + 9``, learning rate 2, mean normalisation: steps to
  converge (first recorded step at which at least 99% of the teacher-forced
  chains of a fixed batch of 256 training trees are exactly right) and the
  whole-path accuracy of greedy decoding on 1,024 random test trees, after
  training on to twice the convergence time; and the longer run of the
  structured two-head model at ``m = 5`` (budget 8,000 steps) shown beside it
  (member ``extra-m5-two-head-t8000``).

Every member is one training run (:func:`run_config`), so the study runs them in parallel
(about an hour of one core in all)::

    python -m onelayer study trees-forward-limits --jobs 2

``--quick`` runs a tiny version (seconds), which the tests use; ``--only depth-m5`` re-runs some members.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch

from ...validation import check_bool, check_choice, check_float, check_int
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.shared.data import LossOptions
from ...trees.forward.layout import perfect_forward_batch, random_forward_batch
from .layout_variants import perfect_batch, random_batch, variant
from ...trees.forward.model import ForwardArchitecture, full_heads, init_params, single_head, train_forward, two_head
from ...trees.forward.decoding import greedy_decode, teacher_forced_correct
from ..registry import load
from ..runner import Member, Study
from .inputs import forward_init
from .stored_study import float64

__all__ = [
    "STORED",
    "load_stored",
    "NORMALISATIONS",
    "architecture",
    "run_config",
    "HEADS_DEPTH_BUDGETS",
    "heads_depth_cells",
    "heads_depth_kwargs",
    "params_from_json",
    "AUTHORS_TABLE",
    "TABLE_STEPS",
    "table_rows",
    "Settings",
    "members",
    "run_member",
    "summarize",
    "STUDY",
]

#: Loss normalisations compared in the loss table: name -> LossOptions.
NORMALISATIONS = {
    "mean, 1/2": LossOptions("mean", True),
    "sum, 1/2": LossOptions("sum", True),
    "sum, 1": LossOptions("sum", False),
}

#: The step grid of the authors' table (review discussion).
TABLE_STEPS = (1, 5, 10, 100, 500, 1000, 1500)

#: The authors' training losses of the forward task at :data:`TABLE_STEPS`, as reported in the public
#: review discussion of the paper (OpenReview qFC728XyeM): their two-head model and a single head with
#: fully learnable key-query and value matrices. Normalisation not stated.
AUTHORS_TABLE = {
    "authors: two heads": (15.1991, 10.4123, 8.4025, 2.4336, 0.3237, 0.1361, 0.0849),
    "authors: single head": (15.9122, 15.6750, 15.0179, 10.1325, 10.6257, 10.0823, 10.3812),
}


def architecture(name: str) -> ForwardArchitecture:
    """``"two_head"``, ``"single_head"`` or ``"full<L>"`` (e.g. ``"full1"``) to an architecture."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    if name == "two_head":
        return two_head()
    if name == "single_head":
        return single_head()
    if name.startswith("full") and name[4:].isdigit():
        return full_heads(int(name[4:]))
    raise ValueError(f"name must be 'two_head', 'single_head' or 'full<L>' (e.g. 'full2'), got {name!r}")


def _chain_rate(params, arch, A, batch) -> float:
    ok = teacher_forced_correct(params, arch, A, batch) | ~batch.target_mask
    return float(ok.all(1).double().mean())


def run_config(
    arch_name: str,
    *,
    m: int,
    S: int,
    steps: int,
    lr: float,
    norm: str = "mean, 1/2",
    batch_size: int = 256,
    seed: int = 0,
    init_scale: float = 0.0,
    record_every: int = 25,
    record_at=None,
    test_trees: int = 1024,
    test_max_depth: int = 6,
    keep_params: bool = False,
    stop_at_convergence: bool = False,
    turning: bool = True,
) -> dict:
    """Train one configuration and measure it; returns a JSON-ready dict.

    Keys: the configuration, ``steps`` and ``loss`` (recorded), ``chain``
    (teacher-forced whole-chain rate on 256 fixed training trees),
    ``steps_to_converge`` (first recorded step with ``chain >= 0.99``, or
    ``None``), ``train_path_accuracy`` (greedy, 1,024 training trees),
    ``test_path_accuracy`` (greedy, ``test_trees`` random trees with
    ``0..3`` children and depth cap uniform in ``1..test_max_depth``),
    ``seconds``, and with ``keep_params`` the final parameters as lists.
    With ``stop_at_convergence`` training runs in chunks of ``8 *
    record_every`` steps (each chunk draws its batches from seed
    ``seed * 100003 + first step of the chunk``); once it has converged at
    step ``T`` it trains on to step ``2 T`` (at least to the end of that chunk,
    at most to the budget) and stops there. The accuracies are measured at the
    stopping step (``final_step``); ``at_convergence_chunk`` also gives the
    test accuracy at the end of the chunk in which it converged.
    ``turning=False`` trains and tests on the layout without a turning token
    (:mod:`onelayer.studies.trees.layout_variants`); the row then records ``"turning": False``.
    """
    arch = architecture(arch_name)
    m = check_int("m", m, low=1, high=8)
    S = check_int("S", S, low=2 ** (m + 1) - 1)
    check_choice("norm", norm, NORMALISATIONS)
    check_bool("keep_params", keep_params)
    check_bool("stop_at_convergence", stop_at_convergence)
    check_bool("turning", turning)
    steps = check_int("steps", steps, low=1)
    init_scale = check_float("init_scale", init_scale, low=0.0)
    A = one_hot_embeddings(S)
    gen = torch.Generator().manual_seed(10_000 + seed)
    init = forward_init(arch, A, init_scale=init_scale, gen=gen) if init_scale > 0 else None
    ev = perfect_batch(m, S, 256, np.random.default_rng(50_000 + seed), turning=turning)
    record = {"chain": lambda p: _chain_rate(p, arch, A, ev)}
    common = dict(batch_size=batch_size, options=NORMALISATIONS[norm], record=record,
                  transform=None if turning else lambda b: variant(b, turning=False))
    start = time.perf_counter()
    if not stop_at_convergence:
        hist = train_forward(arch, A, m=m, steps=steps, lr=lr, seed=seed, init=init,
                             record_every=record_every, record_at=record_at, **common)
        rec_steps, losses, chain, params = hist.steps, hist["loss"], np.asarray(hist["chain"], float), hist.params
    else:
        # chunks of 8 records, each from its own seeded batch stream; once converged at T,
        # train on to 2 T (within the budget) and stop
        chunk = 8 * record_every
        rec_steps, losses, chain, params, done, stop = [], [], [], init, 0, steps
        while done < stop:
            n = min(chunk, stop - done)
            hist = train_forward(arch, A, m=m, steps=n, lr=lr, seed=seed * 100_003 + done, init=params,
                                 record_every=record_every, **common)
            keep = slice(0 if done == 0 else 1, None)
            rec_steps += (hist.steps[keep] + done).tolist()
            losses += hist["loss"][keep].tolist()
            chain += hist["chain"][keep].tolist()
            params, done = hist.params, done + n
            hit = np.flatnonzero(np.asarray(chain) >= 0.99)
            if hit.size and stop == steps:
                t_conv = rec_steps[hit[0]]
                conv_params = {k: v.clone() for k, v in params.items()}
                conv_done = done
                stop = min(steps, max(2 * t_conv, done))
        rec_steps, losses, chain = np.asarray(rec_steps), np.asarray(losses), np.asarray(chain, float)
    seconds = time.perf_counter() - start
    hit = np.flatnonzero(chain >= 0.99)
    train_dec = greedy_decode(params, arch, A, perfect_batch(m, S, 1024, np.random.default_rng(60_000 + seed), turning=turning))
    test_batch, _ = random_batch(S, test_trees, np.random.default_rng(70_000 + seed), max_depth=test_max_depth,
                                 turning=turning)
    test_dec = greedy_decode(params, arch, A, test_batch)
    at_conv = None
    if stop_at_convergence and hit.size:
        at_conv = {"step": int(conv_done), "test_path_accuracy": greedy_decode(conv_params, arch, A, test_batch).path_accuracy}
    out = {
        "arch": arch_name, "label": arch.label(), "m": m, "S": S, "lr": lr, "norm": norm, "batch_size": batch_size,
        "seed": seed, "init_scale": init_scale, "budget": steps, "stop_at_convergence": stop_at_convergence,
        "steps": rec_steps.tolist(), "loss": [float(v) for v in losses], "chain": chain.tolist(),
        "steps_to_converge": int(rec_steps[hit[0]]) if hit.size else None,
        "final_step": int(rec_steps[-1]), "train_path_accuracy": train_dec.path_accuracy,
        "test_path_accuracy": test_dec.path_accuracy, "at_convergence_chunk": at_conv,
        "test_max_depth": test_max_depth, "seconds": round(seconds, 1),
    }
    if not turning:
        out["turning"] = False
    if keep_params:
        out["params"] = {k: v.tolist() for k, v in params.items()}
    return out


#: Step budgets of the heads x depth runs, by training depth m.
HEADS_DEPTH_BUDGETS = {2: 1000, 3: 1500, 4: 3000, 5: 3000}


def heads_depth_cells(*, quick: bool = False) -> list[tuple[str, int]]:
    """The (architecture name, training depth m) cells of the heads x depth runs, in the stored order."""
    check_bool("quick", quick)
    depths = (2, 3) if quick else (2, 3, 4, 5)
    names = ["two_head"] + [f"full{L}" for L in ((1, 2) if quick else (1, 2, 3, 4))]
    return [(name, m) for m in depths for name in names]


def heads_depth_kwargs(name: str, m: int, *, quick: bool = False, budget: int | None = None, seed: int = 0) -> dict:
    """The :func:`run_config` keywords of one heads x depth cell (the protocol of the module docstring)."""
    architecture(name)
    m = check_int("m", m, low=1, high=8)
    check_bool("quick", quick)
    steps = 10 if quick else (HEADS_DEPTH_BUDGETS.get(m, 3000) if budget is None else check_int("budget", budget, low=1))
    return dict(m=m, S=2 ** (m + 1) + 9, steps=steps, lr=2.0, init_scale=0.0 if name == "two_head" else 0.01,
                seed=check_int("seed", seed, low=0), record_every=5 if quick else (25 if m <= 3 else 50),
                test_trees=64 if quick else 1024, batch_size=32 if quick else 256, stop_at_convergence=True)


def table_rows(runs, steps_grid=TABLE_STEPS) -> list[dict]:
    """Our loss-table runs at the authors' step grid: one row per (architecture, normalisation), then the authors' rows."""
    rows = []
    for r in runs:
        at = dict(zip(r["steps"], r["loss"]))
        row = {"model": r["label"], "loss": r["norm"]}
        row.update({f"t={t}": at.get(t) for t in steps_grid})
        row["test path acc"] = r["test_path_accuracy"]
        rows.append(row)
    for name, vals in AUTHORS_TABLE.items():
        row = {"model": name, "loss": "unknown"}
        row.update({f"t={t}": v for t, v in zip(TABLE_STEPS, vals)})
        rows.append(row)
    return rows


def params_from_json(row: dict, dtype=torch.float64) -> dict[str, torch.Tensor]:
    """The stored final parameters of a run (``keep_params=True``) as tensors."""
    if not isinstance(row, dict) or "params" not in row:
        raise ValueError("row must be a run dict stored with keep_params=True (it has no 'params')")
    return {k: torch.tensor(v, dtype=dtype) for k, v in row["params"].items()}


@dataclass(frozen=True)
class Settings:
    """The study's settings (the pre-runner script's): the loss table (every normalisation x model of ``table_*``,
    recorded at :data:`TABLE_STEPS`), the heads x depth cells (``depths`` x ``depth_models``, the protocol of
    :func:`heads_depth_kwargs`, its quick version with ``quick``), and ``extra`` runs ``(model, m, budget)`` of that
    protocol with another step budget."""

    table_norms: tuple[str, ...] = tuple(NORMALISATIONS)
    table_models: tuple[str, ...] = ("two_head", "single_head", "full1")
    table_steps: int = TABLE_STEPS[-1]
    table_test_trees: int = 1024
    table_batch: int = 256
    depths: tuple[int, ...] = (2, 3, 4, 5)
    depth_models: tuple[str, ...] = ("two_head", "full1", "full2", "full3", "full4")
    quick: bool = False
    extra: tuple[tuple[str, int, int], ...] = (("two_head", 5, 8000),)


#: The seconds-long version (tests, a figure's quick mode).
QUICK = Settings(table_steps=20, table_test_trees=64, table_batch=32, depths=(2, 3),
                 depth_models=("two_head", "full1", "full2"), quick=True, extra=())

_NORM_KEYS = {"mean, 1/2": "mean-half", "sum, 1/2": "sum-half", "sum, 1": "sum-one"}


def _name(model: str) -> str:
    return model.replace("_", "-")


def _keys(settings: Settings) -> dict[str, list[str]]:
    """Every member key of each stored list, in the stored order."""
    return {"loss_table": [f"table-{_NORM_KEYS[n]}-{_name(a)}" for n in settings.table_norms for a in settings.table_models],
            "heads_depth": [f"depth-m{m}-{_name(a)}" for m in settings.depths for a in settings.depth_models],
            "heads_depth_extra": [f"extra-m{m}-{_name(a)}-t{budget}" for a, m, budget in settings.extra]}


def members(settings: Settings) -> list[Member]:
    """One member per training run: ``table-<norm>-<model>``, ``depth-m<m>-<model>``, ``extra-m<m>-<model>-t<budget>``.
    Cost: the step budget times the tree size."""
    keys = _keys(settings)
    out = [Member(k, {"part": "loss_table", "norm": n, "model": a}, cost=float(settings.table_steps * 2 ** 4))
           for k, (n, a) in zip(keys["loss_table"], [(n, a) for n in settings.table_norms for a in settings.table_models])]
    for k, (m, a) in zip(keys["heads_depth"], [(m, a) for m in settings.depths for a in settings.depth_models]):
        out.append(Member(k, {"part": "heads_depth", "model": a, "m": m},
                          cost=float(heads_depth_kwargs(a, m, quick=settings.quick)["steps"] * 2 ** (m + 1))))
    for k, (a, m, budget) in zip(keys["heads_depth_extra"], settings.extra):
        out.append(Member(k, {"part": "heads_depth_extra", "model": a, "m": m, "budget": budget},
                          cost=float(budget * 2 ** (m + 1))))
    return out


def run_member(settings: Settings, member: Member) -> dict:
    """One run row of :func:`run_config` without its wall seconds (the loss table's with its final parameters)."""
    f = member.fields
    with float64():
        if f["part"] == "loss_table":
            steps = settings.table_steps
            grid = [s for s in (0, *TABLE_STEPS) if s <= steps] + [steps]
            row = run_config(f["model"], m=3, S=25, steps=steps, lr=0.2, norm=f["norm"], record_at=sorted(set(grid)),
                             test_trees=settings.table_test_trees, batch_size=settings.table_batch, keep_params=True)
        else:
            row = run_config(f["model"], **heads_depth_kwargs(f["model"], f["m"], quick=settings.quick,
                                                              budget=f.get("budget")))
    del row["seconds"]
    return row


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: ``loss_table``, ``heads_depth`` and ``heads_depth_extra`` (run rows in the stored order)."""
    by_key = {r["key"]: r["result"] for r in records}
    return {part: [by_key[k] for k in keys] for part, keys in _keys(settings).items()}


STUDY = Study(name="trees-forward-limits", stored="trees/data/forward_sweep.json", kind="trees-forward-sweep",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Trees II: the loss table and the heads x depth runs of the limits chapter")

#: The stored file, inside the data directory (what the trees scaling study reads beside its own).
STORED = STUDY.stored


def load_stored(path=None) -> dict:
    """The stored summary of this study (``path``: another copy of its file): ``loss_table``, ``heads_depth``,
    ``heads_depth_extra``."""
    return load(STUDY.name, path=path)["summary"]
