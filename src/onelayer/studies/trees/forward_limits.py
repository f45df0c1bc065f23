"""Heavier forward-task experiments, run by a script and stored as JSON for the limits chapter.

Two experiments, both with one-hot embeddings and mini-batch SGD on perfect
binary training trees (batch 256) from a seeded stream:

* :func:`loss_table_runs`: the single-head vs two-head comparison at the
  authors' forward setting (``m = 3``, ``S = 25``, learning rate 0.2, 1,500
  steps) for the structured two-head model, the structured single head and
  one *full* head (learnable key-query and value matrices, zero init), under
  the loss normalisations ``mean, 1/2`` (our default), ``sum, 1/2`` and
  ``sum, 1`` (the one whose initial scale is closest to the authors' table).
* :func:`heads_depth_runs`: full heads ``L = 1..4`` (small Gaussian
  initialisation, the named variation that lets heads differ) and the
  structured two-head model, at training depths ``m = 2..5`` with
  ``S = 2^(m+1) + 9``, learning rate 2, mean normalisation: steps to
  converge (first recorded step at which at least 99% of the teacher-forced
  chains of a fixed batch of 256 training trees are exactly right) and the
  whole-path accuracy of greedy decoding on 1,024 random test trees, after
  training on to twice the convergence time.

Reproduce the stored file (about an hour on one core)::

    OMP_NUM_THREADS=1 .venv/bin/python -m onelayer.studies.trees.forward_limits --out book/trees/data/forward_sweep.json

and the longer run of the structured two-head model at ``m = 5`` shown beside it::

    OMP_NUM_THREADS=1 .venv/bin/python -m onelayer.studies.trees.forward_limits --out book/trees/data/forward_sweep.json \\
        --part sweep --only two_head:5 --budget 8000

``--quick`` runs a tiny version (seconds), which the tests use; ``--only`` alone
re-runs single heads-by-depth runs and replaces them in the file.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from ... import store
from ...paths import data_path
from ...validation import check_bool, check_choice, check_float, check_int
from ...trees.shared.embeddings import one_hot_embeddings
from ...trees.shared.losses import LossOptions
from ...trees.forward.layout import perfect_forward_batch, random_forward_batch
from ...trees.forward.architecture import ForwardArchitecture, full_heads, init_params, single_head, two_head
from ...trees.forward.decoding import greedy_decode, teacher_forced_correct
from ...trees.forward.model import train_forward
from .inputs import forward_init

__all__ = [
    "STORED",
    "STORED_KIND",
    "load_stored",
    "NORMALISATIONS",
    "architecture",
    "run_config",
    "loss_table_runs",
    "HEADS_DEPTH_BUDGETS",
    "heads_depth_cells",
    "heads_depth_kwargs",
    "heads_depth_runs",
    "params_from_json",
    "AUTHORS_TABLE",
    "TABLE_STEPS",
    "table_rows",
    "main",
]

#: Where :func:`main` writes the runs by default, inside the data directory (:func:`onelayer.paths.data_path`).
STORED = "trees/data/forward_sweep.json"
#: The ``kind`` of that file (:mod:`onelayer.store`).
STORED_KIND = "trees-forward-sweep"


def load_stored(path=None) -> dict:
    """The stored runs (default :data:`STORED` in the data directory), read through :func:`onelayer.store.read_json`."""
    return store.read_json(data_path(STORED) if path is None else Path(path), kind=STORED_KIND)


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
    (:mod:`onelayer.trees.forward.layout`); the row then records ``"turning": False``.
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
    ev = perfect_forward_batch(m, S, 256, np.random.default_rng(50_000 + seed), turning=turning)
    record = {"chain": lambda p: _chain_rate(p, arch, A, ev)}
    common = dict(batch_size=batch_size, options=NORMALISATIONS[norm], record=record, turning=turning)
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
    train_dec = greedy_decode(params, arch, A, perfect_forward_batch(m, S, 1024, np.random.default_rng(60_000 + seed), turning=turning))
    test_batch, _ = random_forward_batch(S, test_trees, np.random.default_rng(70_000 + seed), max_depth=test_max_depth,
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


def loss_table_runs(*, quick: bool = False, progress=print) -> list[dict]:
    """The loss-table experiment (module docstring); ``quick`` shrinks it to a few seconds."""
    check_bool("quick", quick)
    steps = 20 if quick else TABLE_STEPS[-1]
    grid = [s for s in (0, *TABLE_STEPS) if s <= steps] + [steps]
    rows = []
    for norm in NORMALISATIONS:
        for name in ("two_head", "single_head", "full1"):
            row = run_config(name, m=3, S=25, steps=steps, lr=0.2, norm=norm, record_at=sorted(set(grid)),
                             test_trees=64 if quick else 1024, batch_size=32 if quick else 256, keep_params=True)
            rows.append(row)
            progress(f"table {name:12s} {norm:10s} loss {row['loss'][-1]:.4g}  test path acc {row['test_path_accuracy']:.3f}  {row['seconds']} s")
    return rows


#: Step budgets of the heads x depth sweep, by training depth m.
HEADS_DEPTH_BUDGETS = {2: 1000, 3: 1500, 4: 3000, 5: 3000}


def heads_depth_cells(*, quick: bool = False) -> list[tuple[str, int]]:
    """The (architecture name, training depth m) cells of the heads x depth sweep, in the stored order."""
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


def heads_depth_runs(*, quick: bool = False, only=None, budget: int | None = None, progress=print) -> list[dict]:
    """The heads x depth experiment (module docstring); ``quick`` shrinks it to a few seconds.

    ``only`` optionally restricts it to a set of ``(arch name, m)`` pairs;
    ``budget`` replaces the step budgets (1,000, 1,500, 3,000, 3,000 for
    ``m = 2, 3, 4, 5``).
    """
    check_bool("quick", quick)
    if budget is not None:
        budget = check_int("budget", budget, low=1)
    rows = []
    for name, m in heads_depth_cells(quick=quick):
        if only is not None and (name, m) not in only:
            continue
        row = run_config(name, **heads_depth_kwargs(name, m, quick=quick, budget=budget))
        rows.append(row)
        progress(f"sweep {name:9s} m={m} converged at {row['steps_to_converge']}  stopped at {row['final_step']}  "
                 f"test path acc {row['test_path_accuracy']:.3f}  {row['seconds']} s")
    return rows


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


def main(argv=None) -> int:
    """Command line: run the experiments and write them as JSON (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.trees.forward_limits", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help=f"output JSON file (default: {STORED} in the data directory)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests")
    parser.add_argument("--part", choices=("table", "sweep", "all"), default="all")
    parser.add_argument("--only", nargs="*", metavar="ARCH:M",
                        help="re-run only these heads-by-depth runs (e.g. two_head:5) and replace them in --out")
    parser.add_argument("--budget", type=int, default=None,
                        help="with --only: a different step budget; the runs go to 'heads_depth_extra'")
    args = parser.parse_args(argv)
    only = None
    if args.only:
        only = {(a, int(m)) for a, m in (item.split(":") for item in args.only)}
    elif args.budget is not None:
        parser.error("--budget needs --only")
    key = "heads_depth" if args.budget is None else "heads_depth_extra"
    out = data_path(STORED) if args.out is None else args.out
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    result = {"command": "python -m onelayer.studies.trees.forward_limits --out " + str(out) + (" --quick" if args.quick else ""),
              "quick": args.quick}
    if out.exists():
        result = {**load_stored(out), **result}
    if args.part in ("table", "all") and only is None:
        result["loss_table"] = loss_table_runs(quick=args.quick)
        store.write_json(out, result, kind=STORED_KIND, indent=1)
    if args.part in ("sweep", "all"):
        new = heads_depth_runs(quick=args.quick, only=only, budget=args.budget)
        if only is not None:
            keep = [r for r in result.get(key, []) if (r["arch"], r["m"]) not in only]
            order = {(r["arch"], r["m"]): i for i, r in enumerate(result.get(key, []))}
            new = sorted(keep + new, key=lambda r: (r["m"], order.get((r["arch"], r["m"]), 0)))
        result[key] = new
        store.write_json(out, result, kind=STORED_KIND, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
