"""Chapter "Theorem 5: the heads specialize": its module (onelayer.chapters.trees.forward_training)."""

from __future__ import annotations

from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer.chapters.trees import forward_training as chapter
from onelayer.trees.forward.dynamics import SCALAR_NAMES

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}
CACHED = (chapter.training_run, chapter.paper_lr_runs, chapter.learned_values_runs)


def test_quick_run_records_every_interval_and_keeps_the_player_snapshots():
    s = chapter.SETTINGS
    _, hist = chapter.training_run(quick=True)
    assert list(hist.steps) == list(range(0, s.quick_steps + 1, s.record_every))
    assert sorted(hist.snapshots) == [t for t in s.scrub_steps if t <= s.quick_steps]
    _, frames = chapter.attention_steps_frames(quick=True)
    assert [f["setting"] for f in frames["frames"]] == [[t] for t in sorted(hist.snapshots)]


def test_node_block_columns_keep_summing_to_zero():
    """u_{l,2} = -u_{l,1} / (S - 1) at every recorded step: with one-hot embeddings the gradient of each column of U_l
    is a sum of softmax logit gradients, which add up to zero (the chapter's exercise)."""
    A, hist = chapter.training_run(quick=True)
    S = A.shape[1]
    sc = hist["scalars"]
    for diag, off in ((SCALAR_NAMES.index("u1,1"), SCALAR_NAMES.index("u1,2")), (SCALAR_NAMES.index("u2,1"), SCALAR_NAMES.index("u2,2"))):
        assert np.allclose(sc[:, off], -sc[:, diag] / (S - 1), atol=1e-12)  # tol: float64 sums of 625 entries


def test_rescaling_puts_the_sum_run_on_the_mean_scale():
    fig, numbers = chapter.rescaling(quick=True)
    plt.close(fig)
    s = chapter.SETTINGS
    positions = 2 * s.m + 1
    by_run = {}
    for r in numbers["table"]:
        by_run.setdefault(r["run"], []).append(r)
    assert set(by_run) == {"lr 2, mean (main run)", "lr 0.2, mean", "lr 0.2, sum over positions"}
    short = chapter.paper_lr_runs(quick=True)
    for r, loss in zip(by_run["lr 0.2, sum over positions"], short["sum"]["loss"]):
        assert r["eta_eff_t"] == pytest.approx(s.paper_lr * positions * r["step"], rel=1e-12)  # tol: round-off
        assert r["loss_mean_half"] == pytest.approx(loss / positions, rel=1e-12)  # tol: round-off
    assert numbers["pairs"] is None  # quick mode has no step 140 of the main run


def test_sign_table_has_one_row_per_scalar_and_frees_the_construction_zeros():
    fig, numbers = chapter.roles(quick=True)
    plt.close(fig)
    table = numbers["table"]
    assert [r["scalar"] for r in table] == list(SCALAR_NAMES)
    assert all((r["agree"] == "free") == (r["construction"] == 0) for r in table)


def test_verdicts_follow_from_their_measurements(monkeypatch):
    """On a short version of every run (the full ones take a minute): the keys, and each verdict as the measurement
    says (a Theorem 5 row that "holds" needs every step type at accuracy 1)."""
    small = replace(chapter.SETTINGS, steps=200, paper_lr_steps=200, lv_steps=40, lv_seeds=(0,), lv_record_every=20,
                    scrub_steps=(0, 100, 200))
    monkeypatch.setattr(chapter, "SETTINGS", small)
    for f in CACHED:
        f.cache_clear()
    try:
        rows = chapter.verdict_rows()
        _, hist = chapter.training_run()
    finally:
        for f in CACHED:
            f.cache_clear()
    assert len(rows) == 4
    for row in rows:
        assert set(row) == KEYS and row["chapter"] == "forward_training"
        assert row["source"] in {"[paper]", "[ours]"}
    assert rows[0]["verdict"] == ("holds in this run" if hist["accuracy"][-1].min() == 1.0 else "fails in this run")  # exact: a share of right steps
    assert "one seed" in rows[0]["measurement"] and "one seed" in rows[1]["measurement"]
