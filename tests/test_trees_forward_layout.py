"""Unit and property tests of the forward layout R-F (onelayer.trees.forward.layout)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onelayer.trees.shared import data
from onelayer.trees.shared.embeddings import one_hot_embeddings, orthonormal_embeddings
from onelayer.trees.forward.layout import (
    STAGE_B,
    STAGE_NONE,
    STAGE_F,
    STEP_TYPES,
    ForwardBatch,
    forward_batch,
    forward_target_vectors,
    forward_token_text,
    forward_token_vectors,
    rf_tokens,
    perfect_forward_batch,
    random_forward_batch,
)
from onelayer.trees.forward.decoding import answer_from_cot
from onelayer.seeding import generator

FAST = settings(max_examples=30, deadline=None)


def test_worked_example_matches_the_spec():
    t = data.example_tree()  # root 5; 3 -> (1, 7); 8 -> (2, 6); goal 7 is node 4
    prompt, targets, types = rf_tokens(t, 4, shuffle=False)
    text = [forward_token_text(x, t.S) for x in prompt]
    assert text[-2:] == ["[5;5;f]", "[-;7;b]"]
    assert sorted(text[:-2]) == sorted(["[5;3;.]", "[5;8;.]", "[3;1;.]", "[3;7;.]", "[8;2;.]", "[8;6;.]"])
    assert [forward_token_text(x, t.S) for x in targets] == ["[7;3;b]", "[3;5;b]", "[5;5;f]", "[5;3;f]", "[3;7;f]"]
    assert [STEP_TYPES[i] for i in types] == ["backward", "backward", "turning", "forward", "forward"]
    batch = forward_batch([t], [4], shuffle=False)
    assert batch.answers()[0].tolist() == [5, 3, 7]


def test_no_cot_and_eos_variants():
    t = data.example_tree()
    _, targets, types = rf_tokens(t, 4, shuffle=False, cot=False, eos=True)
    assert [forward_token_text(x, t.S) for x in targets] == ["[5;5;f]", "[5;3;f]", "[3;7;f]", "[7;-;f]"]
    assert [STEP_TYPES[i] for i in types] == ["turning", "forward", "forward", "eos"]
    b = forward_batch([t], [4], shuffle=False, cot=False)
    assert not b.cot and b.answers()[0].tolist() == [5, 3, 7]


@FAST
@given(m=st.integers(1, 4), batch=st.integers(1, 6), seed=st.integers(0, 10_000), cot=st.booleans(), eos=st.booleans())
def test_vectorised_batch_equals_tree_by_tree(m, batch, seed, cot, eos):
    S = 2 ** (m + 1) - 1 + 3
    rng = np.random.default_rng(seed)
    fast, (trees, goals, orders) = perfect_forward_batch(m, S, batch, rng, cot=cot, eos=eos, return_trees=True)
    slow = forward_batch(trees, goals, edge_orders=orders, cot=cot, eos=eos)
    for name in ForwardBatch.__dataclass_fields__:
        a, b = getattr(fast, name), getattr(slow, name)
        assert (torch.equal(a, b) if isinstance(a, torch.Tensor) else a == b), name  # exact: integer and boolean fields
    K = (2 * m + 1 if cot else m + 1) + eos
    assert fast.steps == K and fast.length == 2 ** (m + 1) + K - 1
    assert (fast.goal_depth == m).all()


@FAST
@given(seed=st.integers(0, 10_000), max_depth=st.integers(1, 5), cot=st.booleans())
def test_random_batch_structure(seed, max_depth, cot):
    rng = np.random.default_rng(seed)
    batch, trees = random_forward_batch(20, 5, rng, max_depth=max_depth, cot=cot)
    for b, tree in enumerate(trees):
        D = int(batch.goal_depth[b])
        K = int(batch.target_mask[b].sum())
        P = int(batch.prompt_len[b])
        assert P == tree.n + 1 and K == (2 * D + 1 if cot else D + 1)
        assert int(batch.valid[b].sum()) == P + K - 1
        # the query of target k is the token just before it: causal, no peeking
        assert batch.query[b, :K].tolist() == list(range(P - 1, P - 1 + K))
        # teacher forcing: the token after the query is the previous target
        for k in range(1, K):
            pos = int(batch.query[b, k])
            assert (int(batch.first[b, pos]), int(batch.second[b, pos]), int(batch.stage[b, pos])) == (
                int(batch.target_first[b, k - 1]), int(batch.target_second[b, k - 1]), int(batch.target_stage[b, k - 1]))
        # the answer is the root-to-goal path of the tree
        path = tree.labels[tree.path_to_root(tree.node_of(int(batch.goal[b])))][::-1]
        assert batch.answers()[b].tolist() == path.tolist()
        got = answer_from_cot(batch.target_second[b, :K].numpy(), batch.target_stage[b, :K].numpy(), int(batch.goal[b]))
        assert got.tolist() == path.tolist()
        # stages: backward steps carry s_b, the turn and the forward steps s_f
        types = batch.step_type[b, :K]
        assert (batch.target_stage[b, :K][types == 0] == STAGE_B).all()
        assert (batch.target_stage[b, :K][types > 0] == STAGE_F).all()


def test_token_vectors_blocks():
    rng = np.random.default_rng(0)
    batch = perfect_forward_batch(2, 9, 3, rng)
    A = orthonormal_embeddings(9, 12, generator(0))
    X = forward_token_vectors(batch, A)
    assert X.shape == (3, batch.length, 2 * 12 + 2)
    # coefficients of block 1 / block 2 recover the symbols; stage block is one-hot
    c1 = X[..., :12] @ A
    c2 = X[..., 12:24] @ A
    has1 = batch.first < 9
    assert torch.equal(c1.argmax(-1)[has1], batch.first[has1])  # exact: integer argmax
    assert torch.allclose(c1[~has1], torch.zeros(1, dtype=c1.dtype))
    assert torch.equal(c2.argmax(-1), batch.second)  # exact: integer argmax
    stage = X[..., 24:]
    assert torch.equal((stage * torch.tensor([1.0, 2.0], dtype=stage.dtype)).sum(-1).long(), batch.stage)  # exact: one-hot stage, integer sums
    Y = forward_target_vectors(batch, A)
    assert Y.shape == (3, batch.steps, 26)


def test_padding_is_zero_and_masked():
    rng = np.random.default_rng(3)
    batch, _ = random_forward_batch(15, 8, rng, max_depth=4)
    X = forward_token_vectors(batch, one_hot_embeddings(15))
    assert torch.all(X[~batch.valid] == 0)  # exact: padding copies the zero embedding column
    assert torch.all(batch.step_type[~batch.target_mask] == -1)
    sub = batch[2]
    assert sub.size == 1 and torch.equal(sub.first[0], batch.first[2])  # exact: integer tokens


def test_answer_from_chain_edge_cases():
    assert answer_from_cot(np.array([3, 5]), np.array([1, 1]), 3) is None  # never turned
    assert answer_from_cot(np.array([3, 5, 4]), np.array([1, 2, 2]), 9) is None  # never reaches the goal
    assert answer_from_cot(np.array([3, 5, 4, 9, 1]), np.array([1, 2, 2, 2, 2]), 9).tolist() == [5, 4, 9]
    with pytest.raises(ValueError, match="second and stage"):
        answer_from_cot(np.array([1, 2]), np.array([1]), 1)


def test_validation_messages():
    t = data.example_tree()
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="goal must not be the root"):
        rf_tokens(t, 0, rng)
    with pytest.raises(ValueError, match="goal must be"):
        rf_tokens(t, 9, rng)
    with pytest.raises(TypeError, match="tree must be a Tree"):
        rf_tokens("tree", 1, rng)
    with pytest.raises(TypeError, match="rng must be"):
        rf_tokens(t, 4, None)
    with pytest.raises(TypeError, match="cot must be"):
        rf_tokens(t, 4, rng, cot=1)
    with pytest.raises(ValueError, match="edge_order must be a permutation"):
        rf_tokens(t, 4, edge_order=np.array([0, 0, 1, 2, 3, 4]))
    with pytest.raises(ValueError, match="S must be an integer"):
        perfect_forward_batch(3, 10, 4, rng)
    with pytest.raises(ValueError, match="m must be"):
        perfect_forward_batch(0, 10, 4, rng)
    with pytest.raises(ValueError, match="goals must have one entry"):
        forward_batch([t], [4, 5], rng)
    with pytest.raises(ValueError, match="trees must contain"):
        forward_batch([], [], rng)

