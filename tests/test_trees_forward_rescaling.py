"""The learning-rate rescaling check over seeds (onelayer.studies.trees.forward_rescaling): the batched members are the
separate runs, the comparison at equal eta_eff * t, and the stored study against a recomputation."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.studies.registry import load
from onelayer.studies.trees import forward_rescaling as rescaling, stored_study
from onelayer.trees.forward.model import train_forward, two_head
from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.trees.shared.data import LossOptions


def test_eta_eff_puts_the_sum_on_the_mean_scale():
    assert rescaling.eta_eff("mean", 0.2, 3) == 0.2  # exact: returned unchanged
    assert rescaling.eta_eff("sum", 0.2, 3) == 1.4  # exact: rounded to 12 decimals
    with pytest.raises(ValueError, match="reduction"):
        rescaling.eta_eff("max", 0.2, 3)
    with pytest.raises(ValueError, match="lr"):
        rescaling.eta_eff("mean", 0.0, 3)


def test_batched_members_are_the_separate_runs():
    """Member 1 (seed 3) trains on the stream of train_forward(seed=3): the same training losses, under both
    normalisations."""
    A = one_hot_embeddings(9)
    hists = rescaling.rescaling_seeds(A, m=2, batch_size=16, seeds=[1, 3], runs=(("mean", 2.0, 6, 2), ("sum", 0.2, 6, 3)),
                                      eval_size=8)
    for hist, (reduction, lr, steps, every) in zip(hists, (("mean", 2.0, 6, 2), ("sum", 0.2, 6, 3))):
        separate = train_forward(two_head(), A, m=2, steps=steps, lr=lr, batch_size=16, seed=3,
                                 options=LossOptions(reduction, True), record_every=every)
        assert list(hist.steps) == list(separate.steps)
        assert np.allclose(hist["loss"][:, 1], separate["loss"], rtol=1e-12)  # tol: summation order
        assert hist["eval_loss"].shape == (len(hist.steps), 2)
    # from zero both members start equal; the fixed batch is the same for every member
    assert hists[0]["eval_loss"][0, 0] == hists[0]["eval_loss"][0, 1]  # exact: the same computation on equal inputs


def test_compare_matches_equal_eta_t_and_summarises_over_seeds():
    a = {"eta_eff": 0.2, "steps": [0, 10, 20], "eval_loss": [[1.0, 1.0], [0.9, 0.8], [0.5, 0.4]]}
    b = {"eta_eff": 2.0, "steps": [0, 1, 2], "eval_loss": [[1.0, 1.0], [1.0, 0.8], [0.5, 0.5]]}
    rows = rescaling.compare(a, b)
    assert [(r["eta_t"], r["step_a"], r["step_b"]) for r in rows] == [(2.0, 10, 1), (4.0, 20, 2)]
    assert np.allclose(rows[0]["gap"], [0.1, 0.0]) and np.allclose(rows[1]["gap"], [0.0, 0.2])  # tol: round-off
    g = rescaling.gap_summary(a, b, tol=0.15)
    assert g["largest_gap"] == pytest.approx(0.2)  # tol: round-off
    assert (g["within"].k, g["within"].n) == (1, 2)  # seed 1 has a gap of 0.2 at the last point
    assert (g["a_below"], g["pairs"]) == (2, 4)
    with pytest.raises(TypeError, match="stored run"):
        rescaling.compare({"steps": []}, b)
    with pytest.raises(ValueError, match="common"):
        rescaling.gap_summary(a, {**b, "eta_eff": 3.0}, tol=0.1)


def test_arguments_are_validated():
    A = one_hot_embeddings(9)
    with pytest.raises(ValueError, match="every run"):
        rescaling.rescaling_seeds(A, runs=(("mean", 2.0, 6),))
    with pytest.raises(ValueError, match="reduction"):
        rescaling.rescaling_seeds(A, runs=(("median", 2.0, 6, 2),))
    with pytest.raises(ValueError, match="seeds"):
        rescaling.rescaling_seeds(A, seeds=[-1])


@pytest.mark.recompute
def test_stored_study_matches_a_recomputation():
    """Seeds 0 and 5 of every stored member (one run setting), the first recorded steps recomputed: the fixed-batch
    losses agree."""
    study = load("trees-forward-rescaling-seeds")
    stored = study["summary"]
    assert [(r["reduction"], r["lr"], r["steps_run"]) for r in stored["runs"]] == [r[:3] for r in rescaling.RUNS]
    by_key = {m["key"]: m["result"] for m in study["members"]}
    assert [by_key[rescaling._key(run)] for run in rescaling.RUNS] == stored["runs"]
    A = one_hot_embeddings(stored["S"])
    runs = tuple((r["reduction"], r["lr"], r["steps"][1], r["steps"][1]) for r in stored["runs"])
    fresh = rescaling.rescaling_seeds(A, m=stored["m"], batch_size=stored["batch_size"], seeds=[0, 5], runs=runs,
                                      eval_size=stored["eval_size"], eval_seed=stored["eval_seed"])
    for hist, run in zip(fresh, stored["runs"]):
        want = np.asarray(run["eval_loss"])[:2][:, [0, 5]]
        assert np.allclose(hist["eval_loss"], want, rtol=1e-10)  # tol: a few steps of summation-order noise


def test_quick_study_members_are_the_batched_runs():
    """The quick study's summary: one run per setting, in the settings' order, each with one loss column per seed."""
    quick = rescaling.STUDY.quick
    data = stored_study.summary(rescaling.STUDY, quick=True)
    assert [(r["reduction"], r["lr"], r["steps_run"]) for r in data["runs"]] == [r[:3] for r in quick.runs]
    assert all(np.asarray(r["eval_loss"]).shape == (len(r["steps"]), quick.seeds) for r in data["runs"])
    fresh = rescaling.rescaling_seeds(one_hot_embeddings(quick.S), m=quick.m, batch_size=quick.batch_size,
                                      seeds=range(quick.seeds), runs=quick.runs[:1], eval_size=quick.eval_size)
    assert np.array_equal(fresh[0]["eval_loss"], data["runs"][0]["eval_loss"])  # exact: the same computation
