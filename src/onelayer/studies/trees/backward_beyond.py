"""The backward model past the assumptions over many runs: the stored study ``trees-backward-beyond``.

:func:`onelayer.studies.trees.beyond.backward_beyond` over 20 runs per embedding family, as counts. One-hot: training
seeds ``0 .. 19`` on the shared one-hot embeddings; Gaussian: run ``i`` uses the embedding draw ``i``
(:func:`~onelayer.studies.trees.beyond.embeddings` with ``seed=i``) and the training seed ``i``. Each run is decoded
on :func:`~onelayer.studies.trees.beyond.test_set` (``count`` goals of each shape, seed ``test_seed``) with an
end-of-sequence step, and counts per shape its exact paths and its stops.

A member is one run (family x seed). The first script trained the one-hot seeds together in one batched call;
a member trained alone gives the same bits (the batched trainer keeps members apart:
:mod:`onelayer.studies.trees.backward_batched`), so the stored counts are unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...trees.backward.layout import backward_batch
from ..registry import load
from ..runner import Member, Study
from .backward_batched import train_backward_members
from .beyond import EMBEDDINGS, SHAPES, decode_ok, embeddings, test_set

__all__ = ["Settings", "members", "run_member", "summarize", "STUDY", "stored"]


@dataclass(frozen=True)
class Settings:
    """``runs`` per embedding family in ``kinds``; ``S = 80``, ``m = 3``, ``steps`` SGD steps at ``lr``, batches of
    ``batch_size`` perfect trees; ``count`` test goals of each shape (seed ``test_seed``)."""

    runs: int = 20
    kinds: tuple[str, ...] = EMBEDDINGS
    S: int = 80
    m: int = 3
    steps: int = 400
    lr: float = 8.0
    batch_size: int = 128
    count: int = 400
    test_seed: int = 7


def members(settings: Settings) -> list[Member]:
    # cost: the Gaussian runs took 38 s against 28 s for the one-hot ones (the first script's seconds)
    return [Member(key=f"{kind}-s{seed:03d}", fields={"kind": kind, "seed": seed}, cost=1.0 if kind == "one_hot" else 1.4)
            for kind in settings.kinds for seed in range(settings.runs)]


def run_member(settings: Settings, member: Member) -> dict:
    s, kind, seed = settings, member.fields["kind"], member.fields["seed"]
    items = test_set(s.S, s.count, s.test_seed)
    batch = backward_batch([t for _, t, _ in items], [g for _, _, g in items], np.random.default_rng(s.test_seed), eos=True)
    shapes = np.array([shape for shape, _, _ in items])
    A = embeddings(kind, s.S) if kind == "one_hot" else embeddings(kind, s.S, seed=seed)
    hist = train_backward_members(A, m=s.m, steps=s.steps, lr=s.lr, seeds=[seed], batch_size=s.batch_size,
                                  record_every=s.steps)
    path_ok, stop_ok = decode_ok(hist.params["B"][0], A, batch)
    return {"train_loss": float(hist.records["loss"][-1][0]),
            "exact": {sh: int(path_ok[shapes == sh].sum()) for sh in SHAPES},
            "stops": {sh: int(stop_ok[shapes == sh].sum()) for sh in SHAPES},
            "goals": {sh: int((shapes == sh).sum()) for sh in SHAPES}, "largest_tree": max(t.n for _, t, _ in items),
            "deepest_goal": max(t.depth_of(g) for _, t, g in items)}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """``{"families": {kind: ...}}``: per family the settings, ``goals`` per shape, ``exact`` / ``stops`` per shape
    (one count per run, in seed order), the final training losses, the largest tree and the deepest goal."""
    s, families = settings, {}
    for kind in s.kinds:
        runs = sorted((r for r in records if r["fields"]["kind"] == kind), key=lambda r: r["fields"]["seed"])
        res = [r["result"] for r in runs]
        families[kind] = {"kind": kind, "runs": len(res), "S": s.S, "m": s.m, "steps": s.steps, "lr": float(s.lr),
                          "batch_size": s.batch_size, "count": s.count, "test_seed": s.test_seed, "goals": res[0]["goals"],
                          "exact": {sh: [r["exact"][sh] for r in res] for sh in SHAPES},
                          "stops": {sh: [r["stops"][sh] for r in res] for sh in SHAPES},
                          "train_loss": [r["train_loss"] for r in res], "largest_tree": res[0]["largest_tree"],
                          "deepest_goal": res[0]["deepest_goal"]}
    return {"families": families}


STUDY = Study(name="trees-backward-beyond", stored="trees/data/backward_beyond.json", kind="trees-backward-beyond",
              settings=Settings(), quick=Settings(runs=2, steps=40, count=3), members=members, run_member=run_member,
              summarize=summarize,
              description="Trees I: the backward model past the assumptions over 20 seeds (one-hot) and 20 embedding "
                          "draws (Gaussian)")


def stored(path=None) -> dict:
    """The stored study's summary (:func:`summarize`; ``path``: another file of this study): what the chapters read."""
    return load(STUDY.name, path=path)["summary"]
