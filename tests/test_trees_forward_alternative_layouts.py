"""Issue 14 item 3: the forward results under alternative layouts (child first; no turning token)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onelayer.studies import runner
from onelayer.studies.registry import load
from onelayer.studies.trees import forward_alternative_layouts as alternative_layouts, forward_limits as limits, stored_study
from onelayer.trees.forward import construction, decoding, layout, model
from onelayer.studies.trees.layout_variants import random_batch, variant
from onelayer.trees.shared import data
from onelayer.trees.shared.data import perfect_binary_tree
from onelayer.trees.shared.embeddings import one_hot_embeddings


def test_no_turning_layout_drops_exactly_the_turning_step():
    tree = perfect_binary_tree(3, 25, np.random.default_rng(0))
    goal = 9
    prompt, with_turn, types = layout.rf_tokens(tree, goal, shuffle=False)
    b = variant(layout.forward_batch([tree], [goal], shuffle=False), turning=False)
    without = torch.stack([b.target_first[0], b.target_second[0], b.target_stage[0]], -1).numpy()
    types2 = b.step_type[0].numpy()
    assert b.prompt_len.tolist() == [len(prompt)] and b.query[0].tolist() == list(range(len(prompt) - 1, len(prompt) + 5))
    seq = torch.stack([b.first[0], b.second[0], b.stage[0]], -1).numpy()
    assert np.array_equal(seq, np.concatenate([prompt, without[:-1]]))  # exact: integer tokens
    assert len(with_turn) == 2 * 3 + 1 and len(without) == 2 * 3
    keep = types != layout.STEP_TYPES.index("turning")
    assert np.array_equal(with_turn[keep], without) and np.array_equal(types[keep], types2)  # exact: integer tokens
    # the first forward step follows the last backward step, which emitted the root
    r = tree.labels[tree.root]
    assert without[2][1] == r and tuple(without[3][:2]) == (r, without[2][0])
    assert prompt[-2].tolist() == [r, r, layout.STAGE_F]  # the prompt keeps its root token


def test_no_turning_answers_start_at_the_root_and_match_the_turning_layout():
    for turning in (True, False):
        batch, (trees, goals, orders) = layout.perfect_forward_batch(3, 25, 16, np.random.default_rng(3), return_trees=True)
        batch = variant(batch, turning=turning)
        again = variant(layout.forward_batch(trees, goals, edge_orders=orders), turning=turning)
        for field in ("first", "second", "stage", "target_first", "target_second", "target_stage", "step_type"):
            assert torch.equal(getattr(batch, field), getattr(again, field)), field  # exact: integer fields
        if turning:
            reference = batch.answers()
        else:
            assert [a.tolist() for a in batch.answers()] == [a.tolist() for a in reference]
    assert all(len(a) == 4 for a in reference)


def test_answer_from_chain_takes_the_root_from_block_one_only_without_a_turning_token():
    second = np.array([4, 9, 2, 7])
    stage = np.array([1, 1, 2, 2])
    first = np.array([1, 4, 9, 2])
    assert decoding.answer_from_cot(second, stage, 7).tolist() == [2, 7]
    assert decoding.answer_from_cot(second, stage, 7, first=first).tolist() == [9, 2, 7]
    turn_first = np.array([1, 4, 9, 2])
    turn_second = np.array([4, 9, 9, 7])
    assert decoding.answer_from_cot(turn_second, stage, 7, first=turn_first).tolist() == [9, 7]
    with pytest.raises(ValueError, match="first"):
        decoding.answer_from_cot(second, stage, 7, first=first[:2])


def test_the_constructions_need_the_turning_token():
    """Spec open point 2 [guess]: without the turning token the constructed heads have nothing to swap at the turn."""
    S = 25
    A = one_hot_embeddings(S)
    params = construction.constructed_params(A, 20.0, 10.0, 10.0)
    single = construction.full_single_head_construction(A, 20.0, 10.0)
    for turning, expected in ((True, 1.0), (False, 0.0)):
        batch, _ = random_batch(S, 128, np.random.default_rng(0), max_depth=5, turning=turning)
        for p, arch in ((params, model.two_head()), (single, model.full_heads(1))):
            res = decoding.greedy_decode(p, arch, A, batch)
            assert res.path_accuracy == expected  # exact: mean of booleans (integer counts)
            assert res.accuracy_by_type()["backward"] == 1.0  # exact: mean of booleans (integer counts)


def test_swap_node_blocks_swaps_tokens_and_targets():
    batch = layout.perfect_forward_batch(2, 17, 4, np.random.default_rng(1))
    sw = alternative_layouts.swap_node_blocks(batch)
    assert torch.equal(sw.first, batch.second) and torch.equal(sw.target_second, batch.target_first)  # exact: integer tokens
    assert torch.equal(alternative_layouts.swap_node_blocks(sw).first, batch.first)  # exact: integer tokens
    with pytest.raises(TypeError, match="batch"):
        alternative_layouts.swap_node_blocks("batch")


@pytest.mark.parametrize("heads,init_scale", [(1, 0.0), (2, 0.01)])
def test_child_first_is_an_exact_reparameterisation(heads, init_scale):
    out = alternative_layouts.child_first_check(heads=heads, init_scale=init_scale, steps=30, batch_size=32)
    assert out["loss_gap"] < 1e-12 and out["param_gap"] < 1e-12
    assert out["final_loss"] < 0.9  # it trained: the check compares two moving runs, not two zero runs


def test_child_first_check_fails_when_the_tokens_are_not_permuted(monkeypatch):
    """The check can fail: without swapping the data the two runs differ."""
    monkeypatch.setattr(alternative_layouts, "swap_node_blocks", lambda b: b)
    out = alternative_layouts.child_first_check(heads=1, init_scale=0.01, steps=10, batch_size=16)
    assert out["param_gap"] > 1e-3


@pytest.mark.recompute
def test_stored_layout_runs_recompute():
    stored = load("trees-forward-layouts")
    assert not stored["quick"]
    summary = stored["summary"]
    cell = next(p for p in summary["cells"] if p[0]["arch"] == "full1" and p[0]["m"] == 2)
    for row in cell:
        kwargs = limits.heads_depth_kwargs("full1", 2)
        again = limits.run_config("full1", **kwargs, turning=row.get("turning", True))
        for key in ("steps_to_converge", "final_step", "test_path_accuracy", "train_path_accuracy"):
            assert again[key] == row[key], key
        assert np.allclose(again["loss"], row["loss"], rtol=1e-9, atol=1e-12)
    # every stored pair is (turning, no turning) of the same configuration
    for pair in summary["table"] + summary["cells"]:
        assert pair[0].get("turning", True) and pair[1]["turning"] is False
        assert {k: pair[0][k] for k in ("arch", "m", "S", "lr", "norm")} == {k: pair[1][k] for k in ("arch", "m", "S", "lr", "norm")}
    for check in summary["child_first"]:
        assert check["loss_gap"] < 1e-12 and check["param_gap"] < 1e-12
    assert len(stored["members"]) == 28 and stored["provenance"]["adopted"]["from"].endswith("forward_layouts.json")


@pytest.mark.recompute
def test_layouts_cheapest_member_recomputes():
    assert runner.verify(alternative_layouts.STUDY, sample=1, echo=None)


def test_layouts_quick_summary():
    data = stored_study.summary(alternative_layouts.STUDY, quick=True)
    assert len(data["table"]) == 3 and len(data["cells"]) == 2 and len(data["child_first"]) == 2
    assert all(p[1]["turning"] is False for p in data["table"] + data["cells"])
    assert [p[0]["arch"] for p in data["cells"]] == ["two_head", "full1"]


def test_edge_stage_s_b_flags_only_the_prompt_edges():
    t = data.example_tree()
    base = layout.forward_batch([t], [4], shuffle=False)
    flagged = variant(base, edge_stage="s_b")
    prompt = torch.stack([flagged.first[0], flagged.second[0], flagged.stage[0]], -1)[: int(flagged.prompt_len[0])]
    text = [layout.forward_token_text(x, t.S) for x in prompt]
    assert sorted(text[:-2]) == sorted(["[5;3;b]", "[5;8;b]", "[3;1;b]", "[3;7;b]", "[8;2;b]", "[8;6;b]"])
    assert (base.stage[0, :6] == layout.STAGE_NONE).all()
    for name in layout.ForwardBatch.__dataclass_fields__:
        a, b = getattr(base, name), getattr(flagged, name)
        if name != "stage":
            assert (torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b), name  # exact: integer fields
    assert torch.equal(base.stage[0, 6:], flagged.stage[0, 6:])  # exact: integer symbols


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 4), size=st.integers(1, 5), seed=st.integers(0, 10_000), turning=st.booleans())
def test_variants_of_the_vectorised_batch_equal_those_of_the_tree_by_tree_batch(m, size, seed, turning):
    S = 2 ** (m + 1) - 1 + 3
    fast, (trees, goals, orders) = layout.perfect_forward_batch(m, S, size, np.random.default_rng(seed), return_trees=True)
    fast = variant(fast, turning=turning, edge_stage="s_b")
    slow = variant(layout.forward_batch(trees, goals, edge_orders=orders), turning=turning, edge_stage="s_b")
    for name in layout.ForwardBatch.__dataclass_fields__:
        a, b = getattr(fast, name), getattr(slow, name)
        assert (torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b), name  # exact: integer and boolean fields
    assert (fast.stage[:, : 2 ** (m + 1) - 2] == layout.STAGE_B).all()


def test_variants_on_padded_batches_and_validation():
    b, trees = random_batch(20, 6, np.random.default_rng(3), max_depth=3, edge_stage="s_b", turning=False)
    for i, tree in enumerate(trees):
        assert (b.stage[i, : tree.n - 1] == layout.STAGE_B).all() and (b.stage[i, tree.n - 1] == layout.STAGE_F)
    assert not (b.step_type == layout.STEP_TYPES.index("turning")).any()
    assert (b.target_mask.sum(1) == 2 * b.goal_depth).all()
    with pytest.raises(ValueError, match="edge_stage"):
        variant(b, edge_stage="b")
    with pytest.raises(TypeError, match="turning"):
        variant(b, turning=1)
