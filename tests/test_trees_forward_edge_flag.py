"""One head against two under both edge-stage readings (onelayer.studies.trees.forward_edge_flag) and chain accuracy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.studies.registry import load
from onelayer.studies.trees import forward_edge_flag as edge_flag, stored_study
from onelayer.trees.forward.model import train_forward, two_head
from onelayer.trees.forward.construction import constructed_params, full_single_head_construction
from onelayer.chapters.trees.forward_cot import goal_rates
from onelayer.trees.forward.decoding import cot_correct, goal_counts, greedy_decode
from onelayer.trees.forward.layout import STAGE_B, STAGE_F, random_forward_batch
from onelayer.studies.trees.layout_variants import perfect_batch, variant
from onelayer.studies.trees.forward_limits import NORMALISATIONS, architecture
from onelayer.trees.shared.embeddings import one_hot_embeddings


@pytest.mark.parametrize("S", [5, 12])
def test_value_map_least_squares_residual(S):
    empty, s_b = (edge_flag.value_map_residual(S, stage) for stage in ("empty", "s_b"))
    # empty edge stage: one linear map gives every copied token its flag
    assert max(empty["edge_residual"], empty["stored_step_residual"], empty["max_error"]) < 1e-12  # tol: lstsq round-off
    # s_b on the edges: the same vector must give s_b and s_f; the best is their midpoint, 1/2 squared error each
    assert s_b["edge_residual"] == pytest.approx(0.5, abs=1e-12)  # tol: lstsq round-off
    assert s_b["stored_step_residual"] == pytest.approx(0.5, abs=1e-12)  # tol: lstsq round-off
    assert s_b["root_residual"] < 1e-12  # tol: lstsq round-off (the turn alone is satisfiable)
    with pytest.raises(ValueError, match="edge_stage"):
        edge_flag.value_map_residual(S, "b")


def test_the_full_head_construction_needs_the_empty_edge_stage():
    A = one_hot_embeddings(9)
    params = full_single_head_construction(A, 40.0, 20.0)
    for stage, ok in (("empty", 1.0), ("s_b", 0.0)):
        b = perfect_batch(2, 9, 64, np.random.default_rng(1), edge_stage=stage)
        assert greedy_decode(params, architecture("full1"), A, b).cot_accuracy == ok  # exact: a share of counts


def test_chain_correct_judges_the_flags_and_path_does_not():
    A = one_hot_embeddings(11)
    batch, _ = random_forward_batch(11, 40, np.random.default_rng(2), max_depth=3)
    res = greedy_decode(constructed_params(A, 40.0, 20.0, 20.0), two_head(), A, batch)
    assert goal_counts(res) == {"goals": 40, "chain": 40, "path": 40}
    # flip the flag of every backward step to s_f: the path (block 2 after the first s_f) may survive, the chain not
    stage = batch.target_stage.clone()
    stage[batch.target_stage == STAGE_B] = STAGE_F
    steps, chains = cot_correct(batch.target_first, batch.target_second, stage, batch)
    assert not chains.any() and steps[batch.target_mask & (batch.target_stage == STAGE_F)].all()
    rates = goal_rates(res)
    assert rates["chain"].k == rates["path"].k == 40 and rates["chain"].low > 0.9
    with pytest.raises(ValueError, match="stage"):
        cot_correct(batch.target_first, batch.target_second, stage[:, :1], batch)
    with pytest.raises(TypeError, match="result"):
        goal_counts(batch)


def test_members_follow_separate_runs():
    params, hist = edge_flag.train_members("two_head", m=2, S=11, steps=15, lr=0.2, reduction="mean, 1/2",
                                           edge_stage="s_b", seeds=[5, 6], batch_size=8)
    A = one_hot_embeddings(11)
    single = train_forward(two_head(), A, m=2, steps=15, lr=0.2, batch_size=8, seed=6,
                           options=NORMALISATIONS["mean, 1/2"], transform=lambda b: variant(b, edge_stage="s_b"))
    for k in single.params:
        assert torch.allclose(params[k][1], single.params[k], atol=1e-12)  # tol: summation order
    assert np.allclose(hist["loss"][:, 1][[0, -1]], [single["loss"][0], single["loss"][-1]], atol=1e-12)  # tol: idem
    with pytest.raises(ValueError, match="reduction"):
        edge_flag.train_members("full1", m=2, S=11, steps=2, lr=0.2, reduction="mean", edge_stage="s_b", seeds=[0])
    with pytest.raises(ValueError, match="seeds"):
        edge_flag.train_members("full1", m=2, S=11, steps=2, lr=0.2, reduction="sum, 1", edge_stage="s_b", seeds=[])


def test_converged_rule():
    assert edge_flag.converged([10.0, 0.4], 0.05) and not edge_flag.converged([10.0, 0.6], 0.05)
    assert not edge_flag.converged([10.0, float("nan")], 0.05)
    with pytest.raises(ValueError, match="threshold"):
        edge_flag.converged([1.0, 0.1], 0.0)


@pytest.mark.recompute
def test_stored_study_reproduces_two_members():
    study = load("trees-forward-edge-flag")
    stored = study["summary"]
    s = stored["settings"]
    assert not study["quick"] and s["seeds"] >= 20 and s["test_trees"] >= 500
    assert len(study["members"]) == 16 + 2 and all(len(m["result"]["runs"]) == 20 for m in study["members"])
    cells = {(r["edge_stage"], r["reduction"], r["arch"]) for r in stored["runs"]}
    assert len(cells) * s["seeds"] == len(stored["runs"])
    rows = edge_flag.cell_runs("single_head", m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction="sum, 1",
                               edge_stage="s_b", seeds=[0, 1], batch_size=s["batch_size"], test_trees=s["test_trees"],
                               test_max_depth=s["test_max_depth"])
    ref = {r["seed"]: r for r in stored["runs"] if (r["edge_stage"], r["reduction"], r["arch"]) == ("s_b", "sum, 1", "single_head")}
    for r in rows:
        assert np.allclose(r["loss"], ref[r["seed"]]["loss"], rtol=1e-8)  # tol: summation order of 20 vs 2 members
        assert (r["chain"], r["path"], r["goals"]) == (ref[r["seed"]]["chain"], ref[r["seed"]]["path"], ref[r["seed"]]["goals"])


def test_quick_study_has_both_parts():
    data = stored_study.summary(edge_flag.STUDY, quick=True)
    assert len(data["runs"]) == 2 * 2 * 1 * 2  # 2 layouts x 2 models x 1 reduction x 2 seeds
    assert len(data["extra"]["runs"]) == 2 * 2 and data["extra"]["settings"]["lr"] == 0.1  # exact: the stored literal; s_b only
    assert [m.key for m in edge_flag.STUDY.member_list(edge_flag.STUDY.quick)][:2] == ["extra-sb-sum1-full1",
                                                                                       "extra-sb-sum1-two-head"]
