"""Rates with Wilson intervals (onelayer.rates)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer import rates


def test_wilson_interval_reference_values():
    # 95% Wilson interval of 8/10 and 24/25: the roots p of (k/n - p)^2 = z^2 p (1 - p) / n, z = 1.959964
    assert rates.wilson_interval(8, 10) == pytest.approx((0.4901625, 0.9433178), abs=1e-6)
    assert rates.wilson_interval(24, 25) == pytest.approx((0.8045594, 0.9929038), abs=1e-6)


def test_ends_are_exact_and_the_interval_is_never_a_point():
    low, high = rates.wilson_interval(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2  # exact: the k = 0 end is set to 0, not computed
    low, high = rates.wilson_interval(20, 20)
    assert high == 1.0 and 0.8 < low < 0.9  # exact: the k = n end is set to 1, not computed


def test_coverage_is_near_nominal():
    # the fraction of simulated proportions whose interval holds the truth, over many (n, p)
    rng = np.random.default_rng(0)
    hits = total = 0
    for n in (20, 50, 200):
        for p in (0.1, 0.5, 0.9):
            for k in rng.binomial(n, p, size=400):
                hits += rates.rate(int(k), n).contains(p)
                total += 1
    assert 0.93 <= hits / total <= 0.97


def test_rate_text_contains_excludes():
    r = rates.rate(24, 25)
    assert r.value == pytest.approx(0.96) and r.text(2) == "24/25 = 0.96 [0.80, 0.99]"
    assert r.contains(0.9) and not r.contains(0.5)
    assert r.excludes(rates.rate(5, 25)) and not r.excludes(rates.rate(20, 25))
    with pytest.raises(TypeError, match="other"):
        r.excludes(0.5)


def test_mean_interval_matches_the_t_formula():
    mean, low, high = rates.mean_interval([1.0, 2.0, 3.0, 4.0])
    assert mean == pytest.approx(2.5) and high - mean == pytest.approx(mean - low)
    assert high - mean == pytest.approx(3.182446 * np.std([1, 2, 3, 4], ddof=1) / 2, rel=1e-6)


@pytest.mark.parametrize("n, confidence", [(2, 0.95), (4, 0.95), (20, 0.95), (20, 0.9), (400, 0.99)])
def test_mean_interval_uses_the_quantile_of_scipy_stats_t(n, confidence):
    from scipy.stats import t

    x = np.linspace(0.0, 1.0, n) ** 2
    mean, low, high = rates.mean_interval(x, confidence)
    half = float(t.ppf(0.5 + confidence / 2, n - 1) * x.std(ddof=1) / np.sqrt(n))
    assert (mean - low, high - mean) == pytest.approx((half, half), rel=1e-12)  # tol: the subtraction from the mean


@pytest.mark.parametrize("call, match", [
    (lambda: rates.wilson_interval(3, 2), "k"),
    (lambda: rates.wilson_interval(-1, 2), "k"),
    (lambda: rates.wilson_interval(0, 0), "n"),
    (lambda: rates.wilson_interval(1, 2, confidence=1.0), "confidence"),
    (lambda: rates.mean_interval([1.0]), "values"),
    (lambda: rates.mean_interval([1.0, float("nan")]), "finite"),
    (lambda: rates.rate(1, 2).text(0), "digits"),
])
def test_bad_inputs_name_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
