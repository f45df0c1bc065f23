"""Theorem 5 (reconstruction): SGD from zero trains the two-head model in phases, and the heads specialize."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.trees.forward.dynamics import (
    ROLE_METRICS,
    SCALAR_NAMES,
    phase_times,
    role_events,
    sign_table,
    specialization_statement,
)
from onelayer.studies.trees.analysis import tracked_training
from onelayer.trees.forward.layout import random_forward_batch
from onelayer.trees.forward.decoding import greedy_decode
from onelayer.trees.forward.model import two_head


@pytest.fixture(scope="module")
def run():
    A = one_hot_embeddings(12)
    return A, tracked_training(A, m=2, steps=300, lr=2.0, batch_size=128, record_every=10, eval_size=128)


def test_loss_goes_down_and_every_step_type_is_learned(run):
    A, hist = run
    assert hist["loss"][-1] < 0.1 * hist["loss"][0]
    assert np.all(hist["accuracy"][-1] == 1.0)  # exact: means of booleans (integer counts)
    test, _ = random_forward_batch(12, 200, np.random.default_rng(3), max_depth=5)
    assert greedy_decode(hist.params, two_head(), A, test).path_accuracy >= 0.99


def test_phases_come_in_order_forward_backward_turning(run):
    _, hist = run
    ph = phase_times(hist.steps, hist["accuracy"])
    assert ph["order"] == "forward < backward < turning"
    assert ph["turning"] > ph["backward"] + 20  # root detection is clearly last


def test_learned_signs_match_the_construction(run):
    A, hist = run
    rows = sign_table(hist.params, A)
    assert [r["scalar"] for r in rows] == list(SCALAR_NAMES)
    bad = [r for r in rows if r["agree"] == "no"]
    assert not bad, bad
    u = {r["scalar"]: r["learned"] for r in rows}
    assert u["V2[f,b]"] > u["V2[b,b]"]  # the stage flips at the root
    assert u["V1[b,f]"] > 0 > u["V1[b,b]"]


def test_heads_take_distinct_roles_traversal_first(run):
    _, hist = run
    ev = role_events(hist.steps, hist["roles"])
    assert np.isfinite(ev["head1 traversal"]) and np.isfinite(ev["head2 stage"])
    assert np.isnan(ev["head2 traversal"])  # head 2 never becomes a traverser
    assert ev["head2 stage"] >= ev["head1 traversal"]
    text = specialization_statement(ev, phase_times(hist.steps, hist["accuracy"]), hist["roles"][-1])
    assert "Head 1 took the traversal role" in text and "Head 2 took the stage control role" in text


def test_symmetry_reduction_holds_approximately(run):
    _, hist = run
    assert hist["residual"][0] == 0.0  # exact: zero init, H = 0 returns 0.0
    assert np.max(hist["residual"]) < 0.1


def test_validation():
    with pytest.raises(ValueError, match="accuracy must have shape"):
        phase_times([0, 1], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="metrics must have shape"):
        role_events([0, 1], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="level must be"):
        role_events([0], np.zeros((1, len(ROLE_METRICS))), level=1.5)
