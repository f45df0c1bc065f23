"""Theorem 1 (reconstruction): lam * B solves the backward task on every tree as lam grows."""

import numpy as np
import pytest
import torch

from onelayer.seeding import generator, numpy_rng
from onelayer.trees.backward import layout
from onelayer.trees.backward import construction
from onelayer.studies.trees.inputs import gaussian_embeddings
from onelayer.trees.shared import embeddings


@pytest.fixture(scope="module")
def setting():
    A = gaussian_embeddings(31, 40, generator(1))
    perfect = layout.perfect_tree_batch(4, 31, 64, numpy_rng(2))
    rand, _ = layout.random_tree_batch(31, 256, numpy_rng(3), max_depth=7)
    return A, perfect, rand


def test_attention_matches_closed_form(setting):
    A, perfect, rand = setting
    for batch in (perfect, rand):
        grid = construction.lambda_grid(A, batch, [1.0, 4.0, 9.0])
        assert grid["max_weight_error"].max() < 1e-10


def test_loss_decays_like_exp_minus_two_lambda(setting):
    A, perfect, _ = setting
    lams = np.array([5.0, 7.5, 10.0, 12.5])
    grid = construction.lambda_grid(A, perfect, lams)
    assert np.all(np.diff(grid["loss"]) < 0)
    assert abs(construction.log_slope(lams, grid["loss"]) + 2.0) < 0.05


def test_exact_paths_for_large_lambda_on_all_shapes(setting):
    A, perfect, rand = setting
    for batch in (perfect, rand):
        grid = construction.lambda_grid(A, batch, [10.0])
        assert grid["path_accuracy"][0] == 1.0 and grid["step_accuracy"][0] == 1.0  # exact: means of booleans (integer counts)
    # small lambda is not enough on perfect trees: the theorem is a limit statement
    assert construction.lambda_grid(A, perfect, [0.5])["path_accuracy"][0] < 0.5


def test_deep_trees():
    A = gaussian_embeddings(127, 130, generator(3))
    deep, trees = layout.random_tree_batch(127, 40, numpy_rng(4), max_depth=12, min_depth=9)
    assert max(t.depth for t in trees) >= 10
    assert construction.lambda_grid(A, deep, [10.0])["path_accuracy"][0] == 1.0  # exact: mean of booleans (integer counts)


def test_constructed_B_validation():
    A = embeddings.one_hot_embeddings(4)
    assert torch.allclose(construction.constructed_B(A, 2.0), 2.0 * torch.eye(4, dtype=torch.float64))
    with pytest.raises(ValueError, match="lam"):
        construction.constructed_B(A, 0.0)
    with pytest.raises(ValueError, match="n_visible"):
        construction.exact_correct_weight(1.0, 0)
    with pytest.raises(ValueError):
        construction.log_slope([1.0], [1.0])
