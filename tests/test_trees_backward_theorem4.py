"""Theorem 4 (reconstruction): trained on perfect trees, the model solves random trees; the margin bound holds."""

import numpy as np
import pytest

from onelayer.seeding import numpy_rng
from onelayer.studies.trees import backward_generalization as gen
from onelayer.trees.backward import construction
from onelayer.trees.backward import layout
from onelayer.trees.backward import model
from onelayer.trees.backward import dynamics
from onelayer.trees.shared import embeddings


@pytest.fixture(scope="module")
def trained():
    A = embeddings.one_hot_embeddings(31)
    test, _ = layout.random_tree_batch(31, 512, numpy_rng(7), max_depth=7)
    run = model.train_backward(A, m=4, steps=800, lr=1.0, seed=0, record_at=[200, 400, 600, 800],
                               record={"test": gen.test_record(A, test)})
    return A, test, run


def test_generalizes_to_random_and_deeper_trees(trained):
    A, test, run = trained
    by_len = gen.accuracy_by_length(run.params["B"], A, test)
    assert max(by_len) > 4  # longer paths than in training are present
    assert all(acc == 1.0 for _, acc in by_len.values())  # exact: means of booleans (integer counts)
    T = run["test"]
    assert T[-1, gen.TEST_FIELDS.index("path_accuracy")] == 1.0  # exact: mean of booleans (integer counts)
    # the test loss goes down with the training loss and stays below it (smaller trees)
    test_loss = T[:, 0]
    assert np.all(np.diff(test_loss) < 0)
    assert np.all(test_loss <= run["loss"])


def test_margin_bound_holds(trained):
    A, test, run = trained
    T = run["test"]
    m_idx, b_idx = gen.TEST_FIELDS.index("margin"), gen.TEST_FIELDS.index("margin_bound")
    pos = T[:, m_idx] > 0
    assert pos.sum() >= 3
    assert np.all(T[pos, 0] <= T[pos, b_idx])
    # for nearly symmetric H with h2 < 0 the margin is close to h1
    h1, h2 = dynamics.symmetric_part(run.params["B"])
    assert h2 < 0 and abs(construction.margin(run.params["B"]) - h1) < 0.1


def test_margin_bound_on_constructed_model():
    import torch

    test, _ = layout.random_tree_batch(31, 128, numpy_rng(8), max_depth=6)
    A = embeddings.one_hot_embeddings(31)
    for lam in (1.0, 3.0, 8.0):
        B = lam * torch.eye(31, dtype=torch.float64)
        assert construction.margin(B) == pytest.approx(lam)
        assert float(model.loss(B, A, test)) <= construction.margin_bound(B, test)


def test_untrained_model_fails(trained):
    A, test, _ = trained
    import torch

    ev = gen.evaluate(torch.zeros(31, 31, dtype=torch.float64), A, test)
    assert ev["path_accuracy"] < 0.3
