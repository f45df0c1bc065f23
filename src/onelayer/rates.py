"""Rates with intervals: the unit of a verdict that can vary with the seed, the sample or the test set.

A verdict such as "the Bayes rule is right on a fraction ``max(p, 1 - p)`` of walks" or "24 of 25 runs settle on
the parent" is a count ``k`` of successes out of ``n`` independent trials. :func:`rate` reports it as ``k/n`` with
a 95% Wilson score interval, which stays inside ``[0, 1]`` and keeps its coverage for ``k`` near ``0`` or ``n``
(where the plain ``p +- 1.96 sqrt(p(1-p)/n)`` interval collapses to a point). :func:`mean_interval` does the same for
a continuous quantity averaged over independent runs (Student's ``t`` interval).

The interval answers whether ``n`` is large enough for the claim: two rates are told apart only when their
intervals are narrower than the difference claimed (:meth:`Rate.excludes`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .validation import check_float, check_int

__all__ = ["Rate", "rate", "wilson_interval", "mean_interval"]


def _z(confidence: float) -> float:
    confidence = check_float("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion: ``k`` successes out of ``n`` trials (``0 <= k <= n``, ``n >= 1``)."""
    n = check_int("n", n, low=1)
    k = check_int("k", k, low=0, high=n)
    z = _z(confidence)
    phat = k / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
    # exact ends at k = 0 and k = n (the formula gives them up to round-off)
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


@dataclass(frozen=True)
class Rate:
    """``k`` successes out of ``n`` with the Wilson interval ``[low, high]`` at ``confidence``."""

    k: int
    n: int
    low: float
    high: float
    confidence: float = 0.95

    @property
    def value(self) -> float:
        """The observed proportion ``k / n``."""
        return self.k / self.n

    def contains(self, x: float) -> bool:
        """Whether ``x`` lies in the interval (a claimed rate the counts do not contradict)."""
        return self.low <= float(x) <= self.high

    def excludes(self, other: Rate) -> bool:
        """Whether the two intervals are disjoint (the counts tell the two rates apart)."""
        if not isinstance(other, Rate):
            raise TypeError(f"other must be a Rate, got {type(other).__name__}")
        return self.high < other.low or other.high < self.low

    def text(self, digits: int = 3) -> str:
        """``"k/n = 0.xyz [0.abc, 0.def]"``, rounded to ``digits`` decimals (never a round-off digit)."""
        digits = check_int("digits", digits, low=1, high=6)
        return f"{self.k}/{self.n} = {self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def rate(k: int, n: int, confidence: float = 0.95) -> Rate:
    """``k`` out of ``n`` as a :class:`Rate` with its Wilson interval."""
    low, high = wilson_interval(k, n, confidence)
    return Rate(int(k), int(n), low, high, confidence)


def mean_interval(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean, low, high)``: Student's ``t`` interval of the mean of independent values (at least two, finite)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2:
        raise ValueError(f"values must be a 1-d sequence of at least two numbers, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("values must be finite")
    _z(confidence)  # validates confidence
    # Student's t quantile: stdtrit(df, q) is what scipy.stats.t.ppf(q, df) computes (the same bits), without
    # scipy.stats' import of a few seconds
    from scipy.special import stdtrit

    mean = float(x.mean())
    half = float(stdtrit(x.size - 1, 0.5 + confidence / 2) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half
