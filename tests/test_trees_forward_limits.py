"""The stored-results script of the limits chapter (onelayer.studies.trees.forward_limits) and the heads helpers' checks."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from onelayer.trees.shared.embeddings import one_hot_embeddings
from onelayer.trees.forward.dynamics import ROLE_METRICS, role_metrics, specialization_statement
from onelayer.trees.forward.layout import perfect_forward_batch
from onelayer.trees.forward.architecture import init_params, single_head
from onelayer.studies.trees.forward_limits import main, run_config


def test_command_line_quick_table(tmp_path):
    out = tmp_path / "sweep.json"
    assert main(["--out", str(out), "--quick", "--part", "table"]) == 0
    data = json.loads(out.read_text())
    assert data["quick"] and len(data["loss_table"]) == 9 and "heads_depth" not in data
    row = data["loss_table"][0]
    assert row["steps"] == [0, 1, 5, 10, 20] and len(row["loss"]) == 5 and "params" in row


def test_command_line_only_replaces_single_runs(tmp_path):
    out = tmp_path / "sweep.json"
    assert main(["--out", str(out), "--quick", "--part", "sweep"]) == 0
    before = json.loads(out.read_text())["heads_depth"]
    assert main(["--out", str(out), "--quick", "--part", "sweep", "--only", "full2:3"]) == 0
    after = json.loads(out.read_text())["heads_depth"]
    assert [(r["arch"], r["m"]) for r in after] == [(r["arch"], r["m"]) for r in before]
    assert after[-1]["loss"] == before[-1]["loss"]  # deterministic re-run
    assert main(["--out", str(out), "--quick", "--part", "sweep", "--only", "two_head:2", "--budget", "7"]) == 0
    data = json.loads(out.read_text())
    assert [r["arch"] for r in data["heads_depth_extra"]] == ["two_head"] and data["heads_depth"] == after
    with pytest.raises(SystemExit):
        main(["--out", str(out), "--budget", "7"])


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


def test_stored_sweep_matches_the_current_code():
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
