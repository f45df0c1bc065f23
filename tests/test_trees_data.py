"""Unit and property tests of the shared trees data and embeddings modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from onelayer.seeding import generator, numpy_rng
from onelayer.trees.shared import data, embeddings
from onelayer.trees.shared.data import Tree

FAST = settings(max_examples=40, deadline=None)


# -- Tree ---------------------------------------------------------------------
def test_example_tree_structure():
    t = data.example_tree()
    assert t.n == 7 and t.root == 0 and t.depth == 2
    assert [t.label_of(i) for i in t.path_to_root(4)] == [7, 3, 5]
    assert sorted(t.children(0).tolist()) == [1, 2]
    assert t.leaves().tolist() == [3, 4, 5, 6]
    assert t.edges().shape == (6, 2)
    assert t.node_of(8) == 2
    assert t.depth_of(6) == 2


@pytest.mark.parametrize(
    "parent, labels, S, exc",
    [
        ([0, 0], [0, 1], 3, ValueError),  # no root
        ([-1, -1], [0, 1], 3, ValueError),  # two roots
        ([-1, 2, 1], [0, 1, 2], 3, ValueError),  # cycle 1 <-> 2
        ([-1, 0], [1, 1], 3, ValueError),  # repeated label
        ([-1, 0], [0, 3], 3, ValueError),  # label out of range
        ([-1, 0, 0], [0, 1, 2], 2, ValueError),  # n > S
        ([-1, 5], [0, 1], 3, ValueError),  # parent out of range
        ([-1.0, 0.0], [0, 1], 3, TypeError),  # float parent
    ],
)
def test_tree_validation(parent, labels, S, exc):
    with pytest.raises(exc):
        Tree(parent=np.asarray(parent), labels=np.asarray(labels), S=S)


def test_tree_is_immutable_and_hashable():
    t = data.example_tree()
    with pytest.raises(ValueError):
        t.parent[0] = 3
    assert t == data.example_tree() and hash(t) == hash(data.example_tree())
    with pytest.raises(ValueError, match="i must be"):
        t.children(7)
    with pytest.raises(ValueError, match="no node"):
        t.node_of(0)


# -- generators -----------------------------------------------------------------
def test_generator_validation():
    rng = numpy_rng(0)
    with pytest.raises(ValueError, match="S must be"):
        data.perfect_binary_tree(4, 30, rng)
    with pytest.raises(ValueError, match="m must be"):
        data.perfect_binary_tree(-1, 30, rng)
    with pytest.raises(TypeError, match="rng"):
        data.perfect_binary_tree(2, 30, 0)
    with pytest.raises(ValueError, match="max_children"):
        data.random_tree(10, rng, max_depth=3, max_children=0)
    with pytest.raises(ValueError, match="min_depth"):
        data.random_tree(10, rng, max_depth=3, min_depth=4)
    with pytest.raises(ValueError, match="draws"):
        data.random_tree(3, rng, max_depth=1, max_children=1, min_nodes=3, max_attempts=5)
    with pytest.raises(ValueError, match="at least 2 nodes"):
        data.sample_goal(Tree(parent=np.array([-1]), labels=np.array([0]), S=1), rng)
    with pytest.raises(TypeError, match="tree"):
        data.sample_goal("tree", rng)


@FAST
@given(m=st.integers(0, 5), extra=st.integers(0, 10), seed=st.integers(0, 2**32 - 1))
def test_perfect_tree_properties(m, extra, seed):
    n = 2 ** (m + 1) - 1
    t = data.perfect_binary_tree(m, n + extra, numpy_rng(seed))
    assert t.n == n and t.depth == m and t.root == 0
    assert np.unique(t.labels).size == n and t.labels.min() >= 0 and t.labels.max() < n + extra
    assert t.leaves().size == 2**m
    assert np.all(t.depths[t.leaves()] == m)
    for i in range(n):
        assert t.children(i).size in (0, 2)


@FAST
@given(
    S=st.integers(2, 40),
    max_depth=st.integers(1, 7),
    max_children=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    leaves_only=st.booleans(),
)
def test_random_tree_properties(S, max_depth, max_children, seed, leaves_only):
    rng = numpy_rng(seed)
    t = data.random_tree(S, rng, max_depth=max_depth, max_children=max_children)
    assert 2 <= t.n <= S
    assert t.depth <= max_depth
    assert np.unique(t.labels).size == t.n
    assert all(t.children(i).size <= max_children for i in range(t.n))
    # every non-root node is the child of exactly one edge
    edges = t.edges()
    assert edges.shape == (t.n - 1, 2)
    assert sorted(edges[:, 1].tolist()) == sorted(set(range(t.n)) - {t.root})
    g = data.sample_goal(t, rng, leaves_only=leaves_only)
    assert g != t.root
    if leaves_only:
        assert t.children(g).size == 0
    path = t.path_to_root(g)
    assert path[0] == g and path[-1] == t.root and path.size == t.depth_of(g) + 1
    assert all(t.parent[a] == b for a, b in zip(path[:-1], path[1:]))


def test_random_tree_min_depth_and_sizes():
    rng = numpy_rng(1)
    trees = [data.random_tree(31, rng, max_depth=8, min_depth=6) for _ in range(30)]
    assert all(6 <= t.depth <= 8 for t in trees)
    assert len({t.n for t in trees}) > 3


def test_goal_distribution_is_uniform_over_leaves():
    t = data.example_tree()
    rng = numpy_rng(3)
    counts = np.bincount([data.sample_goal(t, rng) for _ in range(4000)], minlength=7)
    assert counts[:3].sum() == 0
    assert np.all(np.abs(counts[3:] / 4000 - 0.25) < 0.03)


def test_labels_are_uniform():
    # each symbol lands on the root about equally often
    rng = numpy_rng(4)
    roots = np.bincount([data.perfect_binary_tree(1, 6, rng).label_of(0) for _ in range(3000)], minlength=6)
    assert np.all(np.abs(roots / 3000 - 1 / 6) < 0.03)


# -- embeddings ------------------------------------------------------------------------
def test_one_hot_and_lemma1_identity():
    A = embeddings.one_hot_embeddings(5)
    assert torch.equal(A, torch.eye(5, dtype=torch.float64))  # exact: one-hot
    assert torch.allclose(embeddings.lemma1_matrix(A), torch.eye(5, dtype=torch.float64))


@FAST
@given(S=st.integers(1, 12), extra=st.integers(0, 8), seed=st.integers(0, 10_000))
def test_lemma1_on_random_embeddings(S, extra, seed):
    A = embeddings.independent_embeddings(S, S + extra, generator(seed))
    B = embeddings.lemma1_matrix(A)
    assert B.shape == (S + extra, S + extra)
    # tol: B goes through (A^T A)^{-2}, so the round-off of A^T B A grows with cond(A^T A) (measured 1.4e-14 x cond
    # at seed 1394, S = 9, where cond = 5e6 and a fixed 1e-8 failed on every machine)
    tol = 1e-12 * max(1.0, float(torch.linalg.cond(A.T @ A)))
    assert torch.allclose(A.T @ B @ A, torch.eye(S, dtype=torch.float64), atol=tol)
    Q = embeddings.orthonormal_embeddings(S, S + extra, generator(seed))
    assert torch.allclose(Q.T @ Q, torch.eye(S, dtype=torch.float64), atol=1e-12)


def test_independent_embeddings_are_not_orthogonal():
    A = embeddings.independent_embeddings(10, 12, generator(0))
    off = (A.T @ A) - torch.diag(torch.diagonal(A.T @ A))
    assert off.abs().max() > 0.05


def test_embedding_validation():
    with pytest.raises(ValueError, match="d must be"):
        embeddings.orthonormal_embeddings(5, 4, generator(0))
    with pytest.raises(TypeError, match="gen"):
        embeddings.independent_embeddings(5, 6, 0)
    with pytest.raises(TypeError, match="dtype"):
        embeddings.one_hot_embeddings(3, dtype=torch.int64)
    with pytest.raises(ValueError, match="linearly independent"):
        embeddings.lemma1_matrix(torch.ones(4, 2, dtype=torch.float64))
    with pytest.raises(ValueError, match="d >= S"):
        embeddings.lemma1_matrix(torch.ones(2, 4, dtype=torch.float64))
    with pytest.raises(TypeError, match="A must be"):
        embeddings.lemma1_matrix(np.eye(3))
    E = embeddings.with_empty(embeddings.one_hot_embeddings(3))
    assert E.shape == (3, 4) and torch.all(E[:, 3] == 0)  # exact: the appended column is torch.zeros


def test_padded_batch_mixin():
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Toy(data.PaddedBatch):
        S: int
        first: torch.Tensor
        query: torch.Tensor

    b = Toy(S=3, first=torch.zeros(4, 6, dtype=torch.long), query=torch.zeros(4, 2, dtype=torch.long))
    assert (b.size, b.length, b.steps) == (4, 6, 2)
    sub = b[1]
    assert isinstance(sub, Toy) and sub.size == 1 and sub.S == 3
    assert b[torch.tensor([0, 2, 3])].size == 3
