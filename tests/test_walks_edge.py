"""The edge of Theorem 3.1: p close to 1 and small rings (issue 13, item 4)."""

from __future__ import annotations

import math

import pytest

from onelayer.studies.walks import edge


def test_moderate_p_selects_the_parent_and_is_optimal():
    rows = edge.edge_table((0.9,), seeds=(0, 1), steps=10)
    for r in rows:
        assert r["top_lag"] == 1 and r["parent_attention"] > 0.99
        assert r["T0"] <= 4 and r["conditional_accuracy"] == pytest.approx(0.9, abs=1e-9)


def test_near_deterministic_walk_can_settle_on_the_grandparent():
    (r,) = edge.edge_table((0.99,), seeds=(0,), steps=20)
    assert r["top_lag"] == 2 and r["top_attention"] > 0.99 and r["parent_attention"] < 1e-6
    assert math.isnan(r["T0"]) and r["conditional_accuracy"] < 0.985
    # reading x_{N-2} and predicting two steps clockwise is right with probability p^2 (K = 6)
    assert r["conditional_accuracy"] == pytest.approx(0.99**2, abs=0.01)
    # the Bayes rule on the same test walks does better than the model
    assert r["bayes_test_accuracy"] > r["test_accuracy"]


def test_small_ring_k4_settles_on_lag_two_for_some_seeds():
    rows = edge.edge_table((0.9,), seeds=(0, 1), Ks=(4,), steps=20)
    lags = {r["seed"]: r["top_lag"] for r in rows}
    assert lags == {0: 2, 1: 1}
    # on a ring of 4 nodes two steps either way land on the same node: p^2 + (1-p)^2 from the grandparent
    (grand,) = [r for r in rows if r["top_lag"] == 2]
    assert grand["conditional_accuracy"] == pytest.approx(0.9**2 + 0.1**2, abs=0.015)
    summary = edge.edge_summary(rows)
    assert summary[0]["runs"] == 2 and summary[0]["optimal_runs"] == 1 and summary[0]["top_lags"] == [1, 2]


def test_edge_validation():
    with pytest.raises(ValueError, match="ps"):
        edge.edge_table((1.0,))
    with pytest.raises(ValueError, match="Ks"):
        edge.edge_table((0.9,), Ks=(2,))
    with pytest.raises(ValueError, match="rows"):
        edge.edge_summary([])


def test_edge_rates_count_parent_and_other_lags():
    nan = float("nan")
    rows = [{"K": 6, "p": 0.99, "T0": 3.0, "top_lag": 1}] * 7 + [{"K": 6, "p": 0.99, "T0": nan, "top_lag": 2}] * 2 \
        + [{"K": 6, "p": 0.99, "T0": nan, "top_lag": 1}] + [{"K": 6, "p": 0.9, "T0": 3.0, "top_lag": 1}] * 5
    low, high = edge.edge_rates(rows)
    assert (low["p"], low["runs"], low["optimal_parent_rate"].k, low["other_lag_rate"].k) == (0.9, 5, 5, 0)
    assert (high["runs"], high["optimal_parent_rate"].k, high["other_lag_rate"].k) == (10, 7, 2)
    assert high["other_lags"] == [2] and high["optimal_parent"].startswith("7/10 = 0.70 [")
    assert high["other_lag_rate"].high < 0.6 and low["optimal_parent_rate"].low > 0.5
    with pytest.raises(ValueError, match="rows"):
        edge.edge_rates([])
