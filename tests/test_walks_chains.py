"""Uniform stationary law and the no-positions capacity bound (issue 13 (d), item 5 (iv))."""

from __future__ import annotations

import pytest

from onelayer.studies.walks import chains


def test_doubly_stochastic_chains_are_learned_and_non_uniform_ones_are_not():
    rows = chains.chain_table(3, steps=10)
    ds = [r for r in rows if r["kind"] == "doubly stochastic"]
    nu = [r for r in rows if r["kind"] == "non-uniform"]
    assert all(r["learned"] and r["mu_spread"] < 1e-12 for r in ds)
    assert all(r["test_accuracy"] == pytest.approx(r["bayes_test"]) for r in ds)
    assert not any(r["learned"] for r in nu) and all(r["mu_spread"] > 0.1 for r in nu)


def test_histogram_bayes_accuracy_exact_values():
    # K divides N - 1: every deterministic walk has the same histogram, so nothing beats 1/K
    assert chains.histogram_bayes_accuracy(6, 1.0, 13) == pytest.approx(1 / 6, abs=1e-12)
    # K does not divide N - 1: the histogram reveals the start node and hence the label
    assert chains.histogram_bayes_accuracy(6, 1.0, 17) == pytest.approx(1.0, abs=1e-12)
    # a random walk: some function of the histogram beats chance, far below the Bayes accuracy
    acc = chains.histogram_bayes_accuracy(6, 0.5, 13)
    assert 0.2 < acc < 0.3


def test_some_linear_value_matrix_beats_chance_without_positions():
    res = chains.linear_histogram_accuracy(6, 0.5, 97, n=20000)
    # 20000 fresh walks: the standard error of an accuracy near 0.19 is about 0.003
    assert res["test_accuracy"] > 1 / 6 + 0.012
    assert res["test_accuracy"] < 0.3


def test_chains_validation():
    with pytest.raises(ValueError, match="n_chains"):
        chains.chain_table(0)
    with pytest.raises(ValueError, match="p"):
        chains.histogram_bayes_accuracy(6, 1.5, 7)
