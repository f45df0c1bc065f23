"""Issue 14 (a): structured heads with learned value maps; the division-of-labour statistic."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.trees.forward.construction import constructed_params
from onelayer.trees.forward.layout import forward_target_vectors, perfect_forward_batch
from onelayer.studies.trees.forward_learned_values import attention_match, division_of_labour, head_asymmetry, learned_value_params, learned_values_runs, lv_loss
from onelayer.trees.forward.model import attention, head_outputs, two_head
from onelayer.trees.shared.embeddings import one_hot_embeddings


def test_statistic_is_one_for_the_construction_and_zero_for_twin_heads():
    A = one_hot_embeddings(11)
    batch = perfect_forward_batch(2, 11, 32, np.random.default_rng(0))
    p = constructed_params(A, 20.0, 10.0, 10.0)
    y = forward_target_vectors(batch, A)
    dol = division_of_labour(head_outputs(p, two_head(), A, batch), y, batch.target_mask)
    assert dol["index"] == pytest.approx(1.0, abs=1e-3) and dol["node_head"] == 1
    twin = head_outputs(p, two_head(), A, batch).sum(0) / 2
    assert division_of_labour(torch.stack([twin, twin]), y, batch.target_mask)["index"] == pytest.approx(0.0, abs=1e-12)
    w = attention(p, two_head(), A, batch)
    match = attention_match(w, w, batch.target_mask)
    assert np.allclose(np.diag(match), 1.0) and match[0, 1] < 0.5


def test_learned_value_model_equals_fixed_values_when_given_the_fixed_maps():
    A = one_hot_embeddings(11)
    batch = perfect_forward_batch(2, 11, 16, np.random.default_rng(1))
    p = constructed_params(A, 3.0, 2.0, 1.0)
    q = learned_value_params(A)
    d = 11
    swap = torch.zeros(2 * d + 2, 2 * d + 2, dtype=torch.float64)
    swap[:d, d : 2 * d] = torch.eye(d)
    swap[d : 2 * d, :d] = torch.eye(d)
    stage = torch.zeros_like(swap)
    stage[2 * d :, 2 * d :] = torch.eye(2)
    q.update(p, WV1=swap, WV2=stage)
    from onelayer.trees.forward.model import loss

    assert float(lv_loss(q, A, batch)) == pytest.approx(float(loss(p, two_head(), A, batch)), rel=1e-12)


def test_validation():
    A = one_hot_embeddings(7)
    with pytest.raises(TypeError, match="gen"):
        learned_value_params(A, init_scale=0.1)
    with pytest.raises(ValueError, match="heads"):
        learned_value_params(A, heads=0)
    with pytest.raises(ValueError, match="outputs"):
        division_of_labour(torch.zeros(3), torch.zeros(3), torch.zeros(3, dtype=torch.bool))


@pytest.fixture(scope="module")
def runs():
    return learned_values_runs(m=2, S=17, steps=500, lr=2.0, seeds=(0, 2), init_scales=(0.0, 0.1), record_every=250)


def test_zero_init_keeps_twin_heads_and_still_learns(runs):
    zero = runs[0]
    assert zero["init_scale"] == 0.0  # exact: the input value, returned
    assert max(zero["asymmetry"]) <= 1e-12  # tol: twin heads, equal values in other buffers (BLAS may round by alignment)
    assert max(zero["index"]) <= 1e-12  # tol: as above; split runs reach 0.1 to 0.7: no division of labour can appear
    assert zero["chain"][-1] == 1.0  # exact: mean of booleans; ... and none is needed: the twin heads solve the training task


def test_small_init_splits_the_node_blocks_but_not_the_stage(runs):
    for r in runs[1:]:
        assert r["chain"][-1] == 1.0  # exact: mean of booleans (integer counts)
        assert 0.1 < r["index"][-1] < 0.7  # partial, far from the construction's 1
        assert max(r["node_share"][-1]) > 0.7  # one head writes most node blocks
        assert min(r["stage_share"][-1]) > 0.2  # the stage stays shared
        # neither head attends like the construction's stage-control head
        assert max(row[1] for row in r["attention_match"]) < 0.4
        assert max(row[0] for row in r["attention_match"]) > 0.7
