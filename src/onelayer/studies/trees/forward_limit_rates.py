"""The limits chapter's one-run verdicts over 20 seeds (stored sweep, issue 22).

Three experiments of the chapter "Theorem 8 and the limits", each a claim about training runs, so each is measured
over ``seeds`` training runs trained together (:func:`onelayer.training.train` with ``members=True``; every member keeps its own
parameters and its own stream of perfect training trees, ``numpy`` generator ``seed``):

* ``theorem8``: the structured two-head model from zero at the chapter's setting (``m = 3``, ``S = 25``, mean loss,
  learning rate 2, 1,000 steps) but with batches of 32 trees, each member decoded greedily on its *own* ``test_trees`` random test
  trees (0-3 children, depth caps 1-``test_max_depth``, any non-root goal; generator ``70_000 + seed``), counted by
  goal depth: goals, whole paths right, whole chains right.
* ``direct``: the two-head model and one full head (both from zero) trained on the answer-only layout (no chain of
  thought) at the same setting for 600 steps, each member scored on ``test_trees`` perfect depth-``m`` trees
  (generator ``11_000 + seed``) and on its own random test trees by goal depth (generator ``71_000 + seed``).
* ``no_turn``: one full head and the two-head model on the layout without a turning token, at the settings of the
  one-against-two sweep (:data:`onelayer.studies.trees.forward_edge_flag.SWEEP`: sum loss, learning rate 0.2, batch 32,
  500 steps, one test set of 512 random trees per cell), so the stored cells of that sweep with the turning token
  are the comparison (:func:`onelayer.studies.trees.forward_edge_flag.cell_runs` with ``turning=False``).
* ``heads``: 1-4 full heads from ``N(0, 0.01^2)`` at training depths ``m = 2`` and ``3`` (``S = 2^(m+1) + 9``, the
  heads x depth sweep of :mod:`onelayer.studies.trees.forward_limits`), mean loss, learning rate 2, in several (batch size,
  steps) cells: ``m = 2`` at batch 32 and 256 for 300 steps and at batch 32 for 1,000; ``m = 3`` at batch 32 for
  500 and 1,500 steps. Each member is scored on 256 perfect training trees and on its own 2,048 random test trees
  with the joint profile :func:`joint_counts`: goals, paths right and chains right per (tree size, goal depth).

:func:`gaussian_members` trains the two-head model with a different Gaussian embedding draw per member (the
trainer of the study :mod:`onelayer.studies.trees.forward_beyond`, one draw per member). Reproduce::

    OMP_NUM_THREADS=1 python -m onelayer sweep trees-forward-limit-rates

(``--quick`` for the seconds-long version the tests use).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from ... import store
from ...training import BatchedHistory, stack_params, train
from ...paths import data_path
from ...validation import check_bool, check_float, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings, one_hot_embeddings
from ...trees.shared.losses import LossOptions
from ...trees.forward.architecture import init_params, two_head
from ...trees.forward.decoding import greedy_decode
from .forward_edge_flag import REDUCTIONS, SWEEP as EDGE_SWEEP, cell_runs, train_members
from ...trees.forward.layout import forward_target_vectors, forward_token_vectors, perfect_forward_batch, random_forward_batch
from .forward_limits import architecture
from .forward_seeded_training import batched_structured_loss, stacked_data

__all__ = ["STORED", "STORED_KIND", "load_stored", "SETTINGS", "QUICK", "PARTS", "depth_counts", "joint_counts", "theorem8_runs",
           "direct_runs", "no_turn_runs", "heads_runs", "gaussian_members", "CHUNKED_FROM_BATCH", "MEMBER_CHUNK",
           "member_chunk", "main"]

STORED = "trees/data/forward_limit_rates.json"
STORED_KIND = "trees-forward-limit-rates"

#: The stored sweep's sizes (module docstring); ``no_turn`` repeats the one-against-two sweep's settings. Batches of 32
#: trees instead of the chapter's 256 keep the sweep within minutes on a shared machine; the ``heads`` part measures
#: one cell at both batch sizes.
SETTINGS = {
    "seeds": 20,
    "theorem8": {"m": 3, "S": 25, "steps": 1000, "lr": 2.0, "batch_size": 32, "reduction": "mean, 1/2",
                 "test_trees": 1024, "test_max_depth": 6},
    "direct": {"m": 3, "S": 25, "steps": 600, "lr": 2.0, "batch_size": 32, "reduction": "mean, 1/2",
               "models": ["two_head", "full1"], "test_trees": 1024, "test_max_depth": 6},
    "no_turn": {**{k: EDGE_SWEEP[k] for k in ("m", "S", "steps", "lr", "batch_size", "test_trees", "test_max_depth")},
                "reduction": "sum, 1", "models": ["full1", "two_head"]},
    "heads": {"lr": 2.0, "reduction": "mean, 1/2", "init_scale": 0.01, "models": ["full1", "full2", "full3", "full4"],
              "cells": [{"m": 2, "batch_size": 32, "steps": 300}, {"m": 2, "batch_size": 256, "steps": 300},
                        {"m": 2, "batch_size": 32, "steps": 1000}, {"m": 3, "batch_size": 32, "steps": 500},
                        {"m": 3, "batch_size": 32, "steps": 1500}],
              "test_trees": 2048, "test_max_depth": 6, "train_trees": 256},
}
#: From this batch size on a cell trains its 20 members :data:`MEMBER_CHUNK` at a time (``member_chunk`` of
#: :func:`~onelayer.studies.trees.forward_edge_flag.train_members`): at batch 256 all 20 at once are compute-bound and no
#: faster than separate runs, 5 at a time are (``make bench``, the trees forward sweep rows). Same results either way.
CHUNKED_FROM_BATCH = 256
MEMBER_CHUNK = 5


def member_chunk(batch_size: int) -> int | None:
    """How many members a cell of this batch size trains per batched call (``None``: all at once)."""
    return MEMBER_CHUNK if check_int("batch_size", batch_size, low=1) >= CHUNKED_FROM_BATCH else None


#: The seconds-long version (tests).
QUICK = {
    "seeds": 2,
    "theorem8": {"m": 2, "S": 15, "steps": 20, "lr": 2.0, "batch_size": 8, "reduction": "mean, 1/2",
                 "test_trees": 16, "test_max_depth": 4},
    "direct": {"m": 2, "S": 15, "steps": 10, "lr": 2.0, "batch_size": 8, "reduction": "mean, 1/2",
               "models": ["two_head", "full1"], "test_trees": 16, "test_max_depth": 4},
    "no_turn": {"m": 2, "S": 15, "steps": 10, "lr": 0.2, "batch_size": 8, "reduction": "sum, 1",
                "models": ["full1"], "test_trees": 16, "test_max_depth": 4},
    "heads": {"lr": 2.0, "reduction": "mean, 1/2", "init_scale": 0.01, "models": ["full1", "full2"],
              "cells": [{"m": 2, "batch_size": 8, "steps": 10}, {"m": 2, "batch_size": 16, "steps": 10}],
              "test_trees": 16, "test_max_depth": 4, "train_trees": 16},
}
#: The parts of the sweep, in the order :func:`main` runs them.
PARTS = ("no_turn", "theorem8", "direct", "heads")


def load_stored(path=None) -> dict:
    """The stored sweep (default :data:`STORED` in the data directory)."""
    return store.read_json(data_path(STORED) if path is None else Path(path), kind=STORED_KIND)


def depth_counts(result) -> dict[str, list[int]]:
    """``goal depth -> [goals, whole paths right, whole chains right]`` of a greedy decoding (keys as strings)."""
    depth = result.batch.goal_depth
    out = {}
    for D in sorted(int(d) for d in torch.unique(depth)):
        sel = depth == D
        out[str(D)] = [int(sel.sum()), int(result.answer_correct[sel].sum()), int(result.cot_correct[sel].sum())]
    return out


def _finite(p: dict) -> bool:
    return all(bool(torch.isfinite(v).all()) for v in p.values())


def theorem8_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """The two-head model from zero, one member per seed (``s`` is ``SETTINGS["theorem8"]``), each decoded on its
    own random test trees: one JSON-ready dict per member (losses, :func:`depth_counts`)."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    arch, A = two_head(), one_hot_embeddings(s["S"])
    rngs = [np.random.default_rng(x) for x in seeds]
    options = REDUCTIONS[s["reduction"]]
    init = stack_params([init_params(arch, A) for _ in seeds])
    hist = train(init, lambda p: batched_structured_loss(p, stacked_data(A, s["m"], s["batch_size"], rngs),
                                                         values=arch.roles, options=options),
                 members=True, steps=s["steps"], lr=s["lr"], record_every=s["steps"])
    rows = []
    for i, seed in enumerate(seeds):
        p = {k: v[i] for k, v in hist.params.items()}
        test, _ = random_forward_batch(s["S"], s["test_trees"], np.random.default_rng(70_000 + seed),
                                       max_depth=s["test_max_depth"])
        rows.append({"seed": seed, "loss": [float(x) for x in hist["loss"][:, i]],
                     "by_depth": depth_counts(greedy_decode(p, arch, A, test))})
    return rows


def direct_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """Every model of ``s["models"]`` (``s`` is ``SETTINGS["direct"]``) trained from zero on the answer-only layout,
    one member per seed: whole-path counts on perfect depth-``m`` trees and by goal depth on random trees."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    A = one_hot_embeddings(s["S"])
    rows = []
    for name in s["models"]:
        params, hist = train_members(name, m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction=s["reduction"],
                                     edge_stage="empty", seeds=seeds, batch_size=s["batch_size"], init_scale=0.0,
                                     record_every=s["steps"], cot=False)
        arch = architecture(name)
        for i, seed in enumerate(seeds):
            p = {k: v[i] for k, v in params.items()}
            perfect = perfect_forward_batch(s["m"], s["S"], s["test_trees"], np.random.default_rng(11_000 + seed), cot=False)
            rand, _ = random_forward_batch(s["S"], s["test_trees"], np.random.default_rng(71_000 + seed),
                                           max_depth=s["test_max_depth"], cot=False)
            ok = _finite(p)
            rows.append({"arch": name, "label": arch.label(), "seed": seed,
                         "loss": [float(x) for x in hist["loss"][:, i]],
                         "perfect": [s["test_trees"], int(greedy_decode(p, arch, A, perfect).answer_correct.sum()) if ok else 0],
                         "by_depth": depth_counts(greedy_decode(p, arch, A, rand)) if ok else None})
    return rows


def no_turn_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """The models of ``s["models"]`` (``s`` is ``SETTINGS["no_turn"]``) on the layout without a turning token: the
    rows of :func:`onelayer.studies.trees.forward_edge_flag.cell_runs` (empty edge stage blocks, ``turning=False``)."""
    rows = []
    for name in s["models"]:
        rows += cell_runs(name, m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction=s["reduction"],
                          edge_stage="empty", seeds=seeds, batch_size=s["batch_size"], test_trees=s["test_trees"],
                          test_max_depth=s["test_max_depth"], turning=False)
    return rows


def joint_counts(result, trees) -> dict[str, list[int]]:
    """``"size,depth" -> [goals, whole paths right, whole chains right]`` of a greedy decoding of ``trees`` (tree
    size = node count, goal depth = the goal's distance from the root), the keys sorted by size, then depth."""
    if len(trees) != len(result.answer_correct):
        raise ValueError("trees must be the decoded batch's trees, one per goal")
    out: dict[tuple[int, int], list[int]] = {}
    for t, d, ok, chain in zip(trees, result.batch.goal_depth.tolist(), result.answer_correct.tolist(),
                               result.cot_correct.tolist()):
        c = out.setdefault((int(t.n), int(d)), [0, 0, 0])
        c[0], c[1], c[2] = c[0] + 1, c[1] + int(ok), c[2] + int(chain)
    return {f"{n},{d}": c for (n, d), c in sorted(out.items())}


def heads_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """Full heads (``s`` is ``SETTINGS["heads"]``: every model of ``s["models"]``, from ``N(0, init_scale^2)``) in
    every cell of ``s["cells"]`` (training depth ``m`` with ``S = 2^(m+1) + 9`` as in the heads x depth sweep of
    :mod:`onelayer.studies.trees.forward_limits`, batch size, a fixed number of steps), one member per seed, trained
    together. Each member is scored on ``train_trees`` perfect training trees (generator ``60_000 + seed``) and on
    its own ``test_trees`` random test trees (0-3 children, depth caps 1-``test_max_depth``, any non-root goal;
    generator ``70_000 + seed``, so every model of a cell and seed sees the same trees), with the joint profile
    :func:`joint_counts` (goals by tree size and goal depth together)."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    if not isinstance(s, dict) or not s.get("cells"):
        raise ValueError("s must be a heads settings dict with a non-empty 'cells' list")
    rows = []
    for cell in s["cells"]:
        m = check_int("m", cell["m"], low=1, high=6)
        S = 2 ** (m + 1) + 9
        A = one_hot_embeddings(S)
        tests = [random_forward_batch(S, s["test_trees"], np.random.default_rng(70_000 + seed),
                                      max_depth=s["test_max_depth"]) for seed in seeds]
        trains = [perfect_forward_batch(m, S, s["train_trees"], np.random.default_rng(60_000 + seed)) for seed in seeds]
        for name in s["models"]:
            start = time.perf_counter()
            params, hist = train_members(name, m=m, S=S, steps=cell["steps"], lr=s["lr"], reduction=s["reduction"],
                                         edge_stage="empty", seeds=seeds, batch_size=cell["batch_size"],
                                         init_scale=s["init_scale"], record_every=cell["steps"],
                                         member_chunk=member_chunk(cell["batch_size"]))
            arch = architecture(name)
            for i, seed in enumerate(seeds):
                p = {k: v[i] for k, v in params.items()}
                ok = _finite(p)
                test, trees = tests[i]
                rows.append({"arch": name, "label": arch.label(), "m": m, "S": S, "batch_size": cell["batch_size"],
                             "steps": cell["steps"], "seed": seed, "loss": [float(x) for x in hist["loss"][:, i]],
                             "train": [s["train_trees"], int(greedy_decode(p, arch, A, trains[i]).answer_correct.sum())
                                       if ok else 0],
                             "joint": joint_counts(greedy_decode(p, arch, A, test), trees) if ok else None})
            print(f"heads: {name} m={m} batch {cell['batch_size']}: {time.perf_counter() - start:.0f} s", flush=True)
    return rows


def gaussian_members(As: Sequence[torch.Tensor], *, m: int, steps: int, lr: float, batch_size: int,
                     seeds: Sequence[int], options: LossOptions = LossOptions()) -> BatchedHistory:
    """The two-head model from zero with member ``i`` on its own embeddings ``As[i]`` and its own trees (generator
    ``seeds[i]``), trained together (the non-one-hot path of
    :func:`~onelayer.studies.trees.forward_seeded_training.batched_structured_loss`); records the loss at steps 0 and
    ``steps``."""
    As = [check_embeddings(A) for A in As]
    seeds = check_int_sequence("seeds", seeds, low=0)
    if len(As) != len(seeds) or not As or len({A.shape for A in As}) != 1:
        raise ValueError("As must be a non-empty list of equally shaped embeddings, one per seed")
    m, batch_size = check_int("m", m, low=1, high=8), check_int("batch_size", batch_size, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    arch, S = two_head(), As[0].shape[1]
    rngs = [np.random.default_rng(x) for x in seeds]

    def data():
        parts = {"X": [], "Y": [], "query": [], "keymask": [], "target_mask": []}
        for A, rng in zip(As, rngs):
            b = perfect_forward_batch(m, S, batch_size, rng)
            pos = torch.arange(b.length)
            parts["X"].append(forward_token_vectors(b, A))
            parts["Y"].append(forward_target_vectors(b, A))
            parts["query"].append(b.query)
            parts["keymask"].append((pos[None, None, :] <= b.query[:, :, None]) & b.valid[:, None, :])
            parts["target_mask"].append(b.target_mask)
        return {k: torch.stack(v) for k, v in parts.items()}

    init = stack_params([init_params(arch, A) for A in As])
    return train(init, lambda p: batched_structured_loss(p, data(), values=arch.roles, options=options),
                 members=True, steps=check_int("steps", steps, low=1), lr=lr, record_every=steps)


def main(argv=None) -> int:
    """Command line: run the three parts and write them as JSON (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m onelayer sweep trees-forward-limit-rates",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help=f"output JSON (default: {STORED} in the data directory)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests")
    parser.add_argument("--part", nargs="+", choices=PARTS, default=list(PARTS),
                        help="run only these parts and replace them in an existing --out (default: all)")
    args = parser.parse_args(argv)
    check_bool("quick", args.quick)
    out = data_path(STORED) if args.out is None else args.out
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    settings = QUICK if args.quick else SETTINGS
    seeds = list(range(settings["seeds"]))
    result = {"command": "OMP_NUM_THREADS=1 python -m onelayer sweep trees-forward-limit-rates"
                         + (" --quick" if args.quick else ""), "quick": args.quick, "settings": settings, "minutes": {}}
    if set(args.part) != set(PARTS) and out.exists():
        old = load_stored(out)
        result.update({k: old[k] for k in PARTS if k in old and k not in args.part},
                      minutes={k: v for k, v in old["minutes"].items() if k not in args.part})
    runners = {"no_turn": no_turn_runs, "theorem8": theorem8_runs, "direct": direct_runs, "heads": heads_runs}
    for part in (p for p in PARTS if p in args.part):
        run = runners[part]
        start = time.perf_counter()
        result[part] = run(settings[part], seeds)
        result["minutes"][part] = round((time.perf_counter() - start) / 60, 1)
        store.write_json(out, result, kind=STORED_KIND, indent=None)
        print(f"{part}: {result['minutes'][part]} min", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
