"""The stored study of the limits chapter (onelayer.studies.trees.forward_limits) and the heads helpers' checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.trees.forward.dynamics import ROLE_METRICS, role_metrics, specialization_statement
from onelayer.trees.forward.layout import perfect_forward_batch
from onelayer.trees.forward.model import init_params, single_head
from onelayer.studies import runner
from onelayer.studies.trees import forward_limits as limits, stored_study
from onelayer.studies.trees.forward_limits import run_config


def test_quick_study_table_and_cells():
    data = stored_study.summary(limits.STUDY, quick=True)
    assert len(data["loss_table"]) == 9 and data["heads_depth_extra"] == []
    row = data["loss_table"][0]
    assert row["steps"] == [0, 1, 5, 10, 20] and len(row["loss"]) == 5 and "params" in row
    assert [(r["arch"], r["m"]) for r in data["heads_depth"]] == limits.heads_depth_cells(quick=True)
    assert all("seconds" not in r for r in data["loss_table"] + data["heads_depth"])  # members are pure


def test_an_extra_budget_is_its_own_member():
    settings = dataclasses.replace(limits.STUDY.settings, extra=(("two_head", 2, 7),))
    (member,) = [m for m in limits.STUDY.member_list(settings) if m.key.startswith("extra")]
    assert member.key == "extra-m2-two-head-t7"
    row = limits.run_member(settings, member)
    assert row["budget"] == 7 and row["final_step"] <= 7


@pytest.mark.recompute
def test_cheapest_stored_member_recomputes():
    assert runner.verify(limits.STUDY, sample=1, echo=None)


def test_run_config_converges_and_trains_on_to_twice_the_time():
    row = run_config("full1", m=2, S=11, steps=600, lr=2.0, record_every=10, batch_size=64, init_scale=0.01,
                     test_trees=32, stop_at_convergence=True)
    t = row["steps_to_converge"]
    assert t is not None and row["final_step"] == max(2 * t, row["at_convergence_chunk"]["step"])
    assert row["train_path_accuracy"] > 0.9


def test_validation():
    with pytest.raises(ValueError, match="norm must be one of"):
        run_config("two_head", m=2, S=11, steps=1, lr=1.0, norm="median")
    with pytest.raises(ValueError, match="S must be"):
        run_config("two_head", m=3, S=10, steps=1, lr=1.0)
    A = one_hot_embeddings(9)
    batch = perfect_forward_batch(2, 9, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least two heads"):
        role_metrics(init_params(single_head(), A), single_head(), A, batch)
    with pytest.raises(ValueError, match="final_metrics must have shape"):
        specialization_statement({}, {}, np.zeros(3))
    assert len(ROLE_METRICS) == 12 and torch.get_default_dtype() == torch.float64


@pytest.mark.recompute
def test_stored_study_matches_the_current_code():
    """The stored heads-by-depth file is reproduced by today's code: recompute the start of one stored run."""
    from onelayer.studies.trees.forward_limits import load_stored

    stored = load_stored()
    row = next(r for r in stored["heads_depth"] if r["arch"] == "two_head" and r["m"] == 2)
    every = row["steps"][1] - row["steps"][0]
    fresh = run_config(row["arch"], m=row["m"], S=row["S"], steps=4 * every, lr=row["lr"], record_every=every,
                       batch_size=row["batch_size"], init_scale=row["init_scale"], test_trees=8,
                       stop_at_convergence=False)
    assert fresh["steps"] == row["steps"][:5]
    np.testing.assert_allclose(fresh["loss"], row["loss"][:5], rtol=1e-9)
