"""Rebuttal experiments: separate W_Q, W_K and the linear autoregressive baseline (issue 13, item 5)."""

from __future__ import annotations

import pytest

from onelayer.studies.walks import rebuttal


def test_separate_query_key_from_zero_never_moves():
    r = rebuttal.separate_qk_run(0.7, sigma=0.0, steps=5)
    assert r["max_grad_WQ"] == 0.0 and r["max_grad_WK"] == 0.0 and r["max_W"] == 0.0  # exact: products with W_Q = W_K = 0
    assert r["attention_spread"] == 0.0 and r["parent_attention"] == pytest.approx(1 / 13)  # exact: all logits 0, the same ops per entry


def test_separate_query_key_from_small_random_init_moves():
    r = rebuttal.separate_qk_run(0.7, sigma=0.01, steps=5)
    assert r["max_grad_WQ"] > 1e-4 and r["max_grad_WK"] > 1e-4
    assert r["attention_spread"] > 1e-3


def test_linear_baseline_needs_fewer_walks_than_the_transformer():
    rows = rebuttal.linear_baseline_table(ns=(30, 1000), seeds=(0, 1), steps=20)
    small, large = rows
    assert small["linear_optimal"] > small["transformer_optimal"] + 0.2
    assert large["linear_optimal"] == 1.0 and large["transformer_optimal"] == 1.0  # exact: means of booleans (integer counts)


def test_rebuttal_validation():
    with pytest.raises(ValueError, match="sigma"):
        rebuttal.separate_qk_run(sigma=-1.0)
    with pytest.raises(ValueError, match="n"):
        rebuttal.linear_baseline_table(ns=(0,))


def test_stored_baseline_study_holds_the_chapters_seeds():
    """The stored study walks-baseline-seeds: 20 seeds at 30 and 1000 training walks, every share a fraction."""
    from onelayer.studies.walks import baseline_seeds

    data = baseline_seeds.load()
    assert data["settings"] == baseline_seeds.Settings()
    assert [r["n"] for r in data["rows"]] == [30, 1000]
    for r in data["rows"]:
        for key in ("linear_optimal_seeds", "transformer_optimal_seeds", "transformer_parent_seeds"):
            assert len(r[key]) == 20 and all(0.0 <= x <= 1.0 for x in r[key])


@pytest.mark.recompute
def test_stored_baseline_members_recompute_equal():
    """The cheapest stored pair of runs and two others, recomputed here, agree with their records."""
    from onelayer.studies import runner
    from onelayer.studies.walks import baseline_seeds

    assert runner.verify(baseline_seeds.STUDY, sample=3, echo=None)
