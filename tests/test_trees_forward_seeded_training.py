"""Seeded training of the forward structured models (onelayer.studies.trees.forward_seeded_training): the batched members
reproduce the separate runs, the split rates, and the stored study against a recomputation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from onelayer.trees.forward import dynamics
from onelayer.studies.trees import forward_learned_values as learned_values
from onelayer.studies.registry import load
from onelayer.studies.trees import analysis, forward_seeded_training as st, stored_study
from onelayer.studies.trees.inputs import gaussian_embeddings
from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.seeding import generator


def test_batched_two_head_members_are_the_separate_tracked_runs():
    A = one_hot_embeddings(25)
    separate = analysis.tracked_training(A, m=3, steps=40, record_every=20, seed=3)
    batched = st.two_head_seeds(A, m=3, steps=40, seeds=[1, 3], record_every=20)
    for name in separate.params:
        assert torch.allclose(batched.params[name][1], separate.params[name], atol=1e-12)  # tol: summation order
    assert np.allclose(batched["roles"][:, 1], separate["roles"], atol=1e-12)  # tol: summation order
    assert np.allclose(batched["accuracy"][:, 1], separate["accuracy"])  # tol: shares of right steps


def test_batched_learned_value_members_are_the_separate_runs_one_hot_and_gaussian():
    for A in (one_hot_embeddings(17), gaussian_embeddings(17, 20, generator(2))):
        separate = learned_values.train_learned_values(A, m=2, steps=30, lr=2.0, init_scale=0.1, seed=4, batch_size=32)
        batched = st.learned_values_seeds(A, m=2, steps=30, init_scale=0.1, seeds=[0, 4], record_at=[10], batch_size=32)
        assert list(batched.steps) == [0, 10, 30]
        for name in separate.params:
            assert torch.allclose(batched.params[name][1], separate.params[name], atol=1e-12)  # tol: summation order


def test_split_curve_counts_runs_with_one_head_above_the_threshold():
    shares = np.array([[[0.5, 0.5], [0.95, 0.05], [0.2, 0.9]],
                       [[0.96, 0.04], [0.97, 0.03], [0.1, 0.95]]])  # (steps, runs, heads)
    low, high = st.split_curve(shares, threshold=0.94)
    assert (low.k, low.n, high.k, high.n) == (1, 3, 3, 3)
    assert st.split_curve(shares, threshold=0.9)[0].k == 2
    with pytest.raises(ValueError, match="threshold"):
        st.split_curve(shares, threshold=1.5)
    with pytest.raises(ValueError, match="node_share"):
        st.split_curve(shares[0], threshold=0.9)


def test_arguments_are_validated():
    A = one_hot_embeddings(17)
    with pytest.raises(ValueError, match="seeds"):
        st.learned_values_seeds(A, seeds=[-1], steps=2)
    with pytest.raises(ValueError, match="record_at"):
        st.learned_values_seeds(A, seeds=[0], steps=2, record_at=[5])
    with pytest.raises(TypeError, match="rngs"):
        st.stacked_data(A, 2, 4, [0])
    with pytest.raises(ValueError, match="values"):
        st.batched_structured_loss({}, {}, values="dense")


@pytest.mark.recompute
def test_stored_study_matches_a_recomputation():
    """Seed 1 of the stored learned-value runs (init 0.1) recomputed for 300 steps with the separate trainer, and
    seed 0 of the stored two-head runs against a fresh tracked run to step 300 (its early phase times and head 1's
    traversal event)."""
    study = load("trees-forward-training-seeds")
    stored = study["summary"]
    assert [m["key"] for m in study["members"]] == ["learned-values-init0.01", "learned-values-init0.1", "two-head"]
    lv = next(r for r in stored["learned_values"] if r["init_scale"] == 0.1)
    t = lv["steps"].index(300)
    A = one_hot_embeddings(lv["S"])
    hist = learned_values.train_learned_values(A, m=lv["m"], steps=300, lr=lv["lr"], init_scale=0.1, seed=1,
                                               batch_size=lv["batch_size"])
    ev = st.perfect_forward_batch(lv["m"], lv["S"], 128, np.random.default_rng(50_000))
    dol = learned_values.division_of_labour(learned_values.lv_head_outputs(hist.params, A, ev),
                                            st.forward_target_vectors(ev, A), ev.target_mask)
    assert np.allclose(dol["node_share"], lv["node_share"][t][1], atol=1e-6)  # tol: 300 steps of summation-order noise
    assert np.allclose(dol["stage_share"], lv["stage_share"][t][1], atol=1e-6)  # tol: as above
    two = stored["two_head"]
    run = next(r for r in two["runs"] if r["seed"] == 0)  # exact: seeds are integers
    A = one_hot_embeddings(two["S"])
    fresh = analysis.tracked_training(A, m=two["m"], steps=300, lr=two["lr"], batch_size=two["batch_size"],
                                      record_every=two["record_every"], seed=0)
    phases = dynamics.phase_times(fresh.steps, fresh["accuracy"])
    events = dynamics.role_events(fresh.steps, fresh["roles"])
    assert (phases["forward"], phases["backward"]) == (run["phases"]["forward"], run["phases"]["backward"])
    assert events["head1 traversal"] == run["events"]["head1 traversal"]


def test_quick_study_summary_has_the_stored_shape():
    data = stored_study.summary(st.STUDY, quick=True)
    assert data["seeds"] == [0, 1] and len(data["two_head"]["runs"]) == 2
    (lv,) = data["learned_values"]
    assert lv["steps"] == [0, 5, 10] and np.asarray(lv["node_share"]).shape == (3, 2, 2)
