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


def test_chain_row_validation():
    with pytest.raises(ValueError, match="kind"):
        chains.chain_row("circulant", 0)
    with pytest.raises(ValueError, match="chain_seed"):
        chains.chain_row("non-uniform", -1)


def test_stored_chain_study_holds_every_chain_of_the_table():
    """The stored study walks-chain-seeds (the variations chapter's chain table): 20 chains of each kind, in the
    order of chain_table, each row with the table's fields."""
    from onelayer.studies.walks import chain_seeds

    data = chain_seeds.load()
    assert data["settings"] == chain_seeds.Settings() and data["settings"].n_chains == 20
    rows = data["rows"]
    assert [(r["kind"], r["chain_seed"]) for r in rows] == [(k, c) for k in chains.CHAIN_KINDS for c in range(20)]
    assert all(set(r) == {"kind", "chain_seed", "mu_spread", "parent_attention", "optimal_fraction", "learned",
                          "test_accuracy", "bayes_test"} for r in rows)


@pytest.mark.recompute
def test_stored_chain_members_recompute_equal():
    """The cheapest stored chain and two others, recomputed here, agree with their records."""
    from onelayer.studies import runner
    from onelayer.studies.walks import chain_seeds

    assert runner.verify(chain_seeds.STUDY, sample=3, echo=None)
