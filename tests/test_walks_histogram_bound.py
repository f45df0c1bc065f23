"""The exact no-positions bound by dynamic programming over visit histograms (onelayer.studies.walks.histogram_bound)."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest

from onelayer.studies.walks import chains, histogram_bound


def _brute_force(K: int, p: float, N: int) -> float:
    """A literal loop over every start and every sequence of N - 1 steps (the last one gives the label)."""
    table: dict = defaultdict(lambda: np.zeros(K))
    for start in range(K):
        for moves in itertools.product((1, -1), repeat=N - 1):
            s, counts, prob = start, [0] * K, 1.0 / K
            counts[s] += 1
            for i, m in enumerate(moves):
                prob *= p if m == 1 else 1.0 - p
                s = (s + m) % K
                if i < N - 2:
                    counts[s] += 1
            table[tuple(counts)][s] += prob
    return float(sum(v.max() for v in table.values()))


@pytest.mark.parametrize("K,p,N", [(6, 0.5, 7), (6, 0.7, 8), (6, 0.5, 11), (5, 0.6, 9), (4, 0.8, 10), (3, 0.3, 8),
                                   (6, 1.0, 9), (6, 0.0, 7)])
def test_dynamic_programme_matches_a_literal_enumeration(K, p, N):
    assert histogram_bound.histogram_bayes_bound(K, p, N) == pytest.approx(_brute_force(K, p, N), abs=1e-12)  # tol: sums of 2^N products


def test_dynamic_programme_matches_the_population_grouping_at_n13():
    for p in (0.5, 0.7):
        assert histogram_bound.histogram_bayes_bound(6, p, 13) == pytest.approx(chains.histogram_bayes_accuracy(6, p, 13),
                                                                                abs=1e-12)  # tol: 2^11 * 6 summed terms


def test_the_distribution_is_a_law_over_histograms_of_n_minus_1_tokens():
    keys, Q, bits = histogram_bound.histogram_distribution(6, 0.7, 25)
    assert Q.sum() == pytest.approx(1.0, abs=1e-12)  # tol: a sum of probabilities
    assert np.all(np.diff(keys) > 0) and np.all(Q > 0)
    digits = (keys[:, None] >> (bits * np.arange(6))) & ((1 << bits) - 1)
    assert np.all(digits.sum(axis=1) == 24) and np.all(digits[:, 0] >= 1)  # the current node is visited


def test_known_values_and_monotone_decrease_with_length():
    # K divides N - 1: a deterministic walk's histogram is flat, so nothing beats 1/K
    for N in (13, 25, 49, 97):
        assert histogram_bound.histogram_bayes_bound(6, 1.0, N) == pytest.approx(1 / 6, abs=1e-12)  # tol: one term
    rows = histogram_bound.histogram_bound_table(ps=(0.5,), Ns=(13, 25, 49))
    bounds = [r["bound"] for r in rows]
    assert bounds[0] == pytest.approx(0.2350260416666, abs=1e-9)  # the enumeration of the chapter (0.235)
    assert bounds[0] > bounds[1] > bounds[2] > 1 / 6


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="p"):
        histogram_bound.histogram_bayes_bound(6, 1.5, 7)
    with pytest.raises(ValueError, match="K"):
        histogram_bound.histogram_bayes_bound(2, 0.5, 7)
    with pytest.raises(ValueError, match="N"):
        histogram_bound.histogram_bayes_bound(6, 0.5, 1)
    with pytest.raises(ValueError, match="K"):
        histogram_bound.histogram_bayes_bound(12, 0.5, 1000)  # 12 * 10 bits do not fit one int64
    with pytest.raises(TypeError):
        histogram_bound.histogram_bayes_bound(6.0, 0.5, 7)


def test_stored_no_position_study_holds_both_tables():
    """The stored study walks-no-position-bounds: the bound for every p and N of the variations chapter, and one
    capacity row per p, each bound between chance and the Bayes accuracy."""
    from onelayer.studies.walks import no_position_bounds

    data = no_position_bounds.load()
    s = data["settings"]
    assert s == no_position_bounds.Settings()
    assert [(r["p"], r["N"]) for r in data["bound"]] == [(p, N) for p in s.bound_ps for N in s.bound_Ns]
    assert all(r["chance"] - 1e-12 <= r["bound"] <= r["bayes"] + 1e-12 for r in data["bound"])  # tol: round-off
    assert [r["p"] for r in data["capacity"]] == list(s.capacity_ps)
    assert all(set(r) == {"p", "chance", "bayes", "histogram_bayes_N7", "histogram_bayes_N13", "histogram_bayes_N17",
                          "linear_N97"} for r in data["capacity"])


@pytest.mark.recompute
def test_stored_no_position_member_recomputes_equal():
    """The cheapest stored member (the bound at the smallest N), recomputed here, agrees with its record."""
    from onelayer.studies import runner
    from onelayer.studies.walks import no_position_bounds

    assert runner.verify(no_position_bounds.STUDY, sample=1, echo=None)
