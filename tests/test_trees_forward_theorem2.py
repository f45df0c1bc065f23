"""Theorem 2 (reconstruction): the constructed two-head model reasons forward on any tree as its scales grow."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.seeding import generator
from onelayer.trees.forward.construction import (
    constructed_params,
    full_single_head_construction,
    margin_table,
    predicted_margins,
)
from onelayer.studies.trees.analysis import scale_grid
from onelayer.studies.trees.inputs import gaussian_embeddings
from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.trees.forward.layout import perfect_forward_batch, random_forward_batch
from onelayer.studies.trees.layout_variants import random_batch
from onelayer.trees.forward.decoding import greedy_decode
from onelayer.trees.forward.model import full_heads, loss, two_head


@pytest.fixture(scope="module")
def setting():
    S, d = 20, 27
    A = gaussian_embeddings(S, d, generator(5))  # linearly independent, not orthogonal
    batch, _ = random_forward_batch(S, 200, np.random.default_rng(11), max_depth=6)
    return A, batch


@pytest.mark.parametrize("lam, mu, kappa", [(4.0, 2.0, 2.0), (1.5, 3.0, 0.7)])
def test_margins_equal_the_predicted_table(setting, lam, mu, kappa):
    A, batch = setting
    rows = margin_table(constructed_params(A, lam, mu, kappa), A, batch)
    predicted = predicted_margins(lam, mu, kappa)
    assert len(rows) == 6
    for r in rows:
        assert r["target_unique"], r
        assert r["min_margin"] == pytest.approx(predicted[(r["head"], r["situation"])], abs=1e-8), r


def test_loss_decays_like_exp_of_minus_twice_the_margin(setting):
    A, batch = setting
    rows = scale_grid(A, batch, [6.0, 9.0, 12.0])  # margins c: min(2c, c) = c and kappa = c
    logs = np.log([r["loss"] for r in rows])
    slopes = np.diff(logs) / 3.0
    assert np.all(slopes < -1.8) and np.all(slopes > -2.2), slopes
    assert all(r["path_accuracy"] == 1.0 and r["chain_accuracy"] == 1.0 for r in rows)  # exact: means of booleans (integer counts)
    small = scale_grid(A, batch, [0.25])[0]
    assert small["path_accuracy"] < 0.5  # at a small scale the softmax is not yet a selector


def test_exact_chain_on_perfect_and_random_trees():
    A = one_hot_embeddings(25)
    p = constructed_params(A, 20.0, 10.0, 10.0)
    perfect = perfect_forward_batch(3, 25, 256, np.random.default_rng(0))
    with torch.no_grad():
        assert float(loss(p, two_head(), A, perfect)) < 1e-7
    test, _ = random_forward_batch(25, 300, np.random.default_rng(1), max_depth=6)
    res = greedy_decode(p, two_head(), A, test)
    assert res.cot_accuracy == 1.0 and res.path_accuracy == 1.0  # exact: means of booleans (integer counts)


def test_stage_control_needs_the_root_detection_entry(setting):
    """Without V_2[f, b] > V_2[b, b] head 2 never flips the stage: the turning step fails (the test can fail)."""
    A, batch = setting
    p = constructed_params(A, 20.0, 10.0, 10.0)
    p["V2"] = 10.0 * torch.eye(2, dtype=A.dtype)
    res = greedy_decode(p, two_head(), A, batch)
    assert res.accuracy_by_type()["turning"] == 0.0 and res.path_accuracy == 0.0  # exact: means of booleans (integer counts)


def test_one_full_head_can_represent_the_chain(setting):
    A, batch = setting
    p = full_single_head_construction(A, 20.0, 10.0)
    res = greedy_decode(p, full_heads(1), A, batch)
    assert res.path_accuracy == 1.0  # exact: mean of booleans (integer counts)
    with torch.no_grad():
        assert float(loss(p, full_heads(1), A, batch)) < 1e-6


def test_validation():
    A = one_hot_embeddings(5)
    with pytest.raises(ValueError, match="lam must be"):
        constructed_params(A, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="kappa must be"):
        predicted_margins(1.0, 1.0, -1.0)
    batch = perfect_forward_batch(1, 5, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="two-head"):
        margin_table({"WKQ1": torch.zeros(12, 12), "WV1": torch.zeros(12, 12)}, A, batch, full_heads(1))


def test_one_stage_entry_gives_a_construction_without_the_turning_token():
    """V1[f,b] = -2 mu (0 in the construction) makes head 1 swap the last backward token itself at the turn: every
    chain of the layout without a turning token right, none of R-F; the entry is set where with_stage_entry says."""
    from onelayer.studies.trees.analysis import stage_entry_search, with_stage_entry

    A = one_hot_embeddings(15)
    lam, mu, kappa = 20.0, 10.0, 10.0
    changed = with_stage_entry(A, "two heads", "V1", "f", "b", -2 * mu, lam=lam, mu=mu, kappa=kappa)
    built = constructed_params(A, lam, mu, kappa)
    assert float(changed["V1"][1, 0]) == -2 * mu  # exact: the value written
    assert all(torch.equal(changed[k], built[k]) for k in ("U1", "U2", "V2"))  # exact: untouched copies
    full = with_stage_entry(A, "one full head", "WKQ1", "f", "b", -2 * mu, lam=lam, mu=mu, kappa=kappa)
    assert float(full["WKQ1"][2 * 15 + 1, 2 * 15]) == -2 * mu  # exact: the value written
    for turning, expected in ((False, 1.0), (True, 0.0)):
        batch, _ = random_batch(15, 64, np.random.default_rng(3), max_depth=4, turning=turning)
        assert greedy_decode(changed, two_head(), A, batch).cot_accuracy == expected  # exact: a share of all chains
        assert greedy_decode(full, full_heads(1), A, batch).cot_accuracy == expected  # exact: a share of all chains
    batch, _ = random_batch(15, 64, np.random.default_rng(3), max_depth=4, turning=False)
    rows = stage_entry_search(A, batch, lam=lam, mu=mu, kappa=kappa, multiples=(-2.0, 0.0))
    assert len(rows) == 24 and sum(r["original"] for r in rows) == 3  # the constructed zeros V1[f,b], V2[b,f], WKQ1[f,b]
    right = {(r["matrix"], r["key"], r["query"], r["multiple"]) for r in rows if r["chains_right"] == r["chains"]}
    assert right == {("V1", "f", "b", -2.0), ("WKQ1", "f", "b", -2.0)}
    with pytest.raises(ValueError, match="matrix"):
        with_stage_entry(A, "two heads", "WKQ1", "f", "b", 0.0, lam=lam, mu=mu, kappa=kappa)
    with pytest.raises(TypeError, match="batch"):
        stage_entry_search(A, "trees", lam=lam, mu=mu, kappa=kappa)
