"""The Gaussian backward model tested on its own test trees: one random test set per embedding draw, at two readings.

The stored study ``trees-backward-seeds`` (:mod:`onelayer.studies.trees.backward_seeds`) scores its 20 Gaussian
embedding draws on one shared set of random test trees (seed 7), so a draw can be exact on that set and still miss
paths on other trees, and its 1,500-step reading is partly a snapshot of how fast each draw trains. Here every draw is
scored on a test set of its own (as many trees as the shared set, the same shape distribution: 0-3 children, depth
cap 7, any non-root goal, generator seed ``own_test_seed + draw``) and is read at 1,500 and at 3,000 steps; it is
also scored on the shared set, which at 1,500 steps must give the stored study's counts again (a tie to it).

A member is one draw: embeddings ``independent`` Gaussian ``d = S`` from ``torch.Generator().manual_seed(draw)`` with
``draw = first_draw + i`` and training seed ``i`` (exactly the Gaussian runs of ``trees-backward-seeds``), SGD from
``B = 0`` (``S = 31``, ``m = 4``, lr 1, batch 256, a fresh batch of perfect trees every step) to the last reading;
SGD with a fixed step size passes through the 1,500-step state on its way to 3,000 steps, so one run gives both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...trees.backward.layout import random_tree_batch
from ...trees.backward.model import greedy_decode
from .backward_batched import train_backward_members
from .inputs import gaussian_embeddings
from ..runner import Member, Study

__all__ = ["Settings", "members", "run_member", "summarize", "STUDY"]


@dataclass(frozen=True)
class Settings:
    """The Gaussian runs of ``trees-backward-seeds`` (``S``, ``m``, ``lr``, ``batch_size``, draws ``first_draw ..
    first_draw + draws - 1`` with training seeds ``0 .. draws - 1``), read at ``readings``; each draw's own test set
    has ``test_trees`` trees (depth cap ``test_max_depth``, seed ``own_test_seed + draw``); the shared one is the
    stored study's (seed ``shared_test_seed``)."""

    draws: int = 20
    first_draw: int = 1
    S: int = 31
    m: int = 4
    lr: float = 1.0
    batch_size: int = 256
    readings: tuple[int, ...] = (1500, 3000)
    test_trees: int = 1024
    test_max_depth: int = 7
    own_test_seed: int = 1000
    shared_test_seed: int = 7


def members(settings: Settings) -> list[Member]:
    return [Member(key=f"draw{settings.first_draw + i:03d}-s{i:03d}", fields={"draw": settings.first_draw + i, "seed": i})
            for i in range(settings.draws)]


def _scores(B: torch.Tensor, A: torch.Tensor, batch) -> tuple[int, dict[str, int]]:
    """Exact paths (greedy decoding) of one trained ``B`` on ``batch``, in all and by path length."""
    ok = greedy_decode(B, A, batch).path_correct.numpy()
    lengths = batch.target_mask.sum(1).numpy()
    return int(ok.sum()), {str(k): int(ok[lengths == k].sum()) for k in sorted(set(lengths.tolist()))}


def run_member(settings: Settings, member: Member) -> dict:
    s, draw, seed = settings, member.fields["draw"], member.fields["seed"]
    A = gaussian_embeddings(s.S, s.S, torch.Generator().manual_seed(draw))
    tests = {"own": random_tree_batch(s.S, s.test_trees, np.random.default_rng(s.own_test_seed + draw),
                                      max_depth=s.test_max_depth)[0],
             "shared": random_tree_batch(s.S, s.test_trees, np.random.default_rng(s.shared_test_seed),
                                         max_depth=s.test_max_depth)[0]}
    last = max(s.readings)
    hist = train_backward_members(A, m=s.m, steps=last, lr=s.lr, seeds=[seed], batch_size=s.batch_size,
                                  record_every=last, snapshot_at=list(s.readings))
    out: dict = {"draw": draw, "seed": seed, "train_loss": float(hist.records["loss"][-1][0])}
    for name, batch in tests.items():
        lengths = batch.target_mask.sum(1).numpy()
        out[name] = {"goals": int(batch.size),
                     "goals_by_length": {str(k): int((lengths == k).sum()) for k in sorted(set(lengths.tolist()))},
                     "exact": {}, "exact_by_length": {}}
        for t in s.readings:
            k, by_length = _scores(hist.snapshots[t]["B"][0], A, batch)
            out[name]["exact"][str(t)] = k
            out[name]["exact_by_length"][str(t)] = by_length
    return out


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per test set (``own``, ``shared``) and reading: exact paths pooled over the draws (``k`` of ``n`` goals) and the
    draws with every path right; also each draw's exact paths (in member order)."""
    out: dict = {"draws": len(records), "readings": list(settings.readings)}
    for name in ("own", "shared"):
        per = [r["result"][name] for r in records]
        out[name] = {str(t): {"exact": sum(p["exact"][str(t)] for p in per), "goals": sum(p["goals"] for p in per),
                              "draws_all_right": sum(p["exact"][str(t)] == p["goals"] for p in per),
                              "per_draw": [p["exact"][str(t)] for p in per]}
                     for t in settings.readings}
    return out


STUDY = Study(name="trees-backward-own-tests", stored="trees/data/backward_own_tests.json", kind="trees-backward-own-tests",
              settings=Settings(), quick=Settings(draws=2, readings=(50, 100), test_trees=128),
              members=members, run_member=run_member, summarize=summarize,
              description="Trees I: the Gaussian backward runs (20 embedding draws) each tested on its own 1,024 random "
                          "trees (and on the shared set) at 1,500 and 3,000 steps")
