"""The 20-seed study of the forward chapters (onelayer.studies.trees.forward_limit_rates): the full-heads part's joint profile."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.chapters.trees import forward_robustness as chapter
from onelayer.studies.trees import forward_limit_rates as limit_rates
from onelayer.trees.forward.model import two_head
from onelayer.trees.forward.construction import constructed_params
from onelayer.trees.forward.decoding import greedy_decode
from onelayer.trees.forward.layout import random_forward_batch
from onelayer.trees.shared.embeddings import one_hot_embeddings


def test_joint_counts_split_every_goal_by_size_and_depth():
    torch.set_default_dtype(torch.float64)
    S = 15
    batch, trees = random_forward_batch(S, 64, np.random.default_rng(3), max_depth=4)
    A = one_hot_embeddings(S)
    params = constructed_params(A, 20.0, 20.0, 20.0)  # the two-head construction at sharp scales
    res = greedy_decode(params, two_head(), A, batch)
    joint = limit_rates.joint_counts(res, trees)
    assert sum(c[0] for c in joint.values()) == 64  # exact: counts
    assert sum(c[1] for c in joint.values()) == int(res.answer_correct.sum())
    assert sum(c[2] for c in joint.values()) == int(res.cot_correct.sum())
    for key, c in joint.items():
        n, d = (int(x) for x in key.split(","))
        sel = [t.n == n and int(g) == d for t, g in zip(trees, batch.goal_depth.tolist())]
        assert c[0] == sum(sel) and 1 <= d < n
    with pytest.raises(ValueError, match="trees"):
        limit_rates.joint_counts(res, trees[:-1])


def test_heads_runs_validates_its_settings():
    with pytest.raises(ValueError, match="cells"):
        limit_rates.heads_runs({**limit_rates.QUICK["heads"], "cells": []}, [0])
    with pytest.raises(ValueError, match="seeds"):
        limit_rates.heads_runs(limit_rates.QUICK["heads"], [-1])


@pytest.mark.recompute
def test_stored_heads_part_has_every_cell_and_reproduces_seed_0():
    """Seed 0 of the stored m = 2, batch 32, 300-step cell, recomputed alone (one member instead of 20): the same
    training fit and the same joint profile, goal by goal."""
    torch.set_default_dtype(torch.float64)
    data = chapter.limit_rates_stored()
    s = data["settings"]["heads"]
    assert s == limit_rates.SETTINGS["heads"]
    cells = [(c["m"], c["batch_size"], c["steps"]) for c in s["cells"]]
    assert len(data["heads"]) == len(cells) * len(s["models"]) * data["settings"]["seeds"]
    for r in data["heads"]:
        if r["joint"] is not None:
            assert sum(c[0] for c in r["joint"].values()) == s["test_trees"]  # exact: counts
    small = {**s, "models": ["full1", "full2"], "cells": [s["cells"][0]]}
    again = limit_rates.heads_runs(small, [0])
    for row in again:
        stored = next(r for r in data["heads"] if (r["arch"], r["m"], r["batch_size"], r["steps"], r["seed"])
                      == (row["arch"], row["m"], row["batch_size"], row["steps"], 0))
        assert row["train"] == stored["train"] and row["joint"] == stored["joint"]  # exact: counts of right goals
        assert row["loss"][-1] == pytest.approx(stored["loss"][-1], rel=1e-6)  # tol: one member vs 20


def test_member_chunks_give_the_same_members_as_one_call():
    from onelayer.studies.trees.forward_edge_flag import train_members

    kw = dict(m=2, S=15, steps=3, lr=2.0, reduction="mean, 1/2", edge_stage="empty", batch_size=8, record_every=1)
    one, h1 = train_members("full2", seeds=[0, 1, 2], **kw)
    chunked, h2 = train_members("full2", seeds=[0, 1, 2], member_chunk=2, **kw)
    for k in one:
        assert torch.allclose(one[k], chunked[k], rtol=0, atol=1e-12)  # tol: batched products of other sizes
    assert np.allclose(h1["loss"], h2["loss"], rtol=0, atol=1e-12)  # tol: as above
    assert limit_rates.member_chunk(256) == limit_rates.MEMBER_CHUNK and limit_rates.member_chunk(32) is None
    with pytest.raises(ValueError, match="member_chunk"):
        train_members("full2", seeds=[0], member_chunk=0, **kw)
    with pytest.raises(ValueError, match="batch_size"):
        limit_rates.member_chunk(0)
