"""The forward model past the assumptions over many embedding draws: the stored study ``trees-forward-beyond``.

:func:`onelayer.studies.trees.beyond.forward_beyond` with Gaussian embeddings over 20 draws, as counts. Run ``i``
uses the embedding draw ``i`` (:func:`~onelayer.studies.trees.beyond.embeddings` with ``seed=i``) and the training
seed ``i`` (:func:`onelayer.studies.trees.forward_limit_rates.gaussian_members`, float64), and is decoded on its own
:func:`~onelayer.studies.trees.beyond.test_set` (``count`` goals of each shape, seed ``test_seed + i``), so the goals
pooled over runs are independent.

A member is one draw. The first script trained the 20 draws together in one batched call; a draw trained alone
gives the same bits (the batched trainer keeps members apart), so the stored counts are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...trees.forward.model import two_head
from ...trees.forward.decoding import greedy_decode
from ...trees.forward.layout import forward_batch
from ..registry import load
from ..runner import Member, Study
from .beyond import embeddings, test_set
from .forward_limit_rates import gaussian_members

__all__ = ["Settings", "members", "run_member", "summarize", "STUDY", "stored"]


@dataclass(frozen=True)
class Settings:
    """``runs`` Gaussian embedding draws (``d = S = 80``), the two-head model at depth ``m = 2`` trained ``steps`` steps
    at ``lr`` on batches of ``batch_size``; ``count`` test goals of each shape per run (seed ``test_seed + run``)."""

    runs: int = 20
    S: int = 80
    m: int = 2
    steps: int = 1000
    lr: float = 8.0
    batch_size: int = 32
    count: int = 100
    test_seed: int = 7


def members(settings: Settings) -> list[Member]:
    return [Member(key=f"draw{i:03d}", fields={"seed": i}) for i in range(settings.runs)]


def run_member(settings: Settings, member: Member) -> dict:
    """One draw: the final training loss, ``counts`` (shape -> goal depth -> ``[goals, exact paths, stops]``) and
    the largest test tree. Runs in float64 (the default dtype is set for the call and put back)."""
    s, i = settings, member.fields["seed"]
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        A = embeddings("gaussian", s.S, seed=i)
        hist = gaussian_members([A], m=s.m, steps=s.steps, lr=s.lr, batch_size=s.batch_size, seeds=[i])
        items = test_set(s.S, s.count, s.test_seed + i)
        batch = forward_batch([t for _, t, _ in items], [g for _, _, g in items], np.random.default_rng(s.test_seed + i),
                              eos=True)
        eos = (batch.step_type == 3) & batch.target_mask
        res = greedy_decode({k: v[0] for k, v in hist.params.items()}, two_head(), A, batch)
        stop_ok, path_ok = (res.step_correct & eos).any(1).numpy(), res.answer_correct.numpy()
        counts: dict = {}
        for (shape, tree, goal), p, q in zip(items, path_ok, stop_ok):
            c = counts.setdefault(shape, {}).setdefault(str(tree.depth_of(goal)), [0, 0, 0])
            c[0], c[1], c[2] = c[0] + 1, c[1] + int(p), c[2] + int(q)
        return {"seed": i, "train_loss": float(hist["loss"][-1][0]), "counts": counts,
                "largest_tree": max(t.n for _, t, _ in items)}
    finally:
        torch.set_default_dtype(dtype)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The settings and ``per_run``: every draw's result, in draw order."""
    s = settings
    per_run = [r["result"] for r in sorted(records, key=lambda r: r["fields"]["seed"])]
    return {"embeddings": "gaussian", "runs": len(per_run), "S": s.S, "d": s.S, "m": s.m, "steps": s.steps,
            "lr": float(s.lr), "batch_size": s.batch_size, "count": s.count, "test_seed": s.test_seed, "per_run": per_run}


STUDY = Study(name="trees-forward-beyond", stored="trees/data/forward_beyond.json", kind="trees-forward-beyond",
              settings=Settings(), quick=Settings(runs=2, steps=20, count=10), members=members, run_member=run_member,
              summarize=summarize,
              description="Trees II: the forward model past the assumptions over 20 Gaussian embedding draws")


def stored(path=None) -> dict:
    """The stored study's summary (:func:`summarize`; ``path``: another file of this study): what the chapters read."""
    return load(STUDY.name, path=path)["summary"]
