"""The shared number formatter (onelayer.formatting): round-off, tiny magnitudes, digits, and that a relative
perturbation of 1e-9 does not change the printed or glued value away from rounding boundaries."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest
import torch

from onelayer import formatting
from onelayer.formatting import MAX_DIGITS, ROUNDOFF, SMALLEST, number_text, rounded
from onelayer.tables import bounds_text, count_interval_text, text_table


def test_zero_round_off_and_tiny_magnitudes():
    assert number_text(0.0) == number_text(-0.0) == "0"
    assert number_text(3e-17) == number_text(-3e-17) == "< 1e-12"
    assert number_text(3e-17, tol=1e-15) == "< 1e-15"
    assert number_text(4e-7, tol=1e-6) == "< 1e-6"  # no zero-padded exponent
    assert number_text(1.5e-12, tol=1e-11) == "< 1e-11"
    # above tol but below SMALLEST: never printed with its digits
    assert number_text(7.55e-11) == number_text(1.5e-12) == number_text(9.9e-10) == "< 1e-9"
    assert number_text(7.55e-11, tol=0.0) == "< 1e-9"
    assert number_text(3e-17, tol=0.0) == "< 1e-9"
    assert number_text(1e-9) == "1e-09" and SMALLEST == 1e-9 and ROUNDOFF == 1e-12


def test_ordinary_values_and_scalar_types():
    assert number_text(0.123456) == "0.1235"
    assert number_text(0.123456, 2) == "0.12"
    assert number_text(-2.875) == "-2.875"
    assert number_text(1234567.0) == "1.235e+06"
    assert number_text(float("nan")) == "nan" and number_text(float("-inf")) == "-inf"
    assert number_text(np.float64(0.5)) == number_text(torch.tensor(0.5)) == number_text(np.float32(0.5)) == "0.5"
    assert number_text(3) == "3"


def test_validation():
    with pytest.raises(ValueError, match="digits"):
        number_text(1.0, 0)
    with pytest.raises(ValueError, match="digits"):
        number_text(1.0, MAX_DIGITS + 1)
    with pytest.raises(TypeError, match="digits"):
        number_text(1.0, 2.0)
    with pytest.raises(ValueError, match="tol"):
        number_text(1.0, tol=-1e-12)
    with pytest.raises(ValueError, match="digits"):
        rounded(1.0, 7)
    with pytest.raises(ValueError, match="digits"):
        text_table([{"a": 1.0}], ["a"], digits=12)


def test_rounded_gives_plain_short_floats_for_glue():
    r = rounded(np.float64(0.35599999999), 3)
    assert type(r) is float and repr(r) == "0.356"
    assert repr(rounded(1.4999999999999996)) == "1.5"
    assert repr(rounded(1.9999999999999734, 4)) == "2.0"
    assert repr(rounded(-0.17283, 4)) == "-0.1728"
    assert math.copysign(1.0, rounded(-0.0)) == 1.0  # exact: copysign returns +-1.0
    assert math.isnan(rounded(float("nan")))


def _boundary_distance(x: float, digits: int) -> float:
    """Relative distance from x to the nearest value where its ``digits``-digit rounding changes."""
    shown = Decimal(f"{x:.{digits - 1}e}")
    half_step = Decimal(1).scaleb(shown.adjusted() - digits + 1) / 2
    return float((half_step - abs(Decimal(x) - shown)) / abs(Decimal(x)))


@pytest.mark.parametrize("digits", [2, 3, 4, 6])
def test_a_relative_perturbation_of_1e9_does_not_change_the_text(digits):
    rng = np.random.default_rng(0)
    xs = rng.choice([-1.0, 1.0], 20000) * 10.0 ** rng.uniform(-8.9, 6, 20000)  # typical printed magnitudes
    away = np.array([_boundary_distance(float(x), digits) > 2e-9 for x in xs])
    # rounding boundaries are rare: only a tiny share of typical values sit within 2e-9 of one
    assert away.mean() > 1 - 1e-3 * 10 ** (digits - 4)
    for x in xs[away]:
        x = float(x)
        for eps in (1e-9, -1e-9):
            assert number_text(x * (1 + eps), digits) == number_text(x, digits), (x, eps)
            assert rounded(x * (1 + eps), digits) == rounded(x, digits), (x, eps)


def test_round_off_prints_the_same_whatever_its_digits():
    rng = np.random.default_rng(1)
    noise = rng.choice([-1.0, 1.0], 1000) * 10.0 ** rng.uniform(-18, -12.01, 1000)
    assert {number_text(e) for e in noise} == {"< 1e-12"}
    # the size of a machine's round-off of a 1e3-sized quantity is irrelevant too
    assert {number_text(e * 1e3) for e in noise} <= {"< 1e-12", "< 1e-9"}


def test_text_table_uses_the_formatter():
    text = text_table([{"x": 3e-17, "y": 5e-11, "z": 0.123456, "w": -0.0}], ["x", "y", "z", "w"])
    assert text.splitlines()[2].split() == ["<", "1e-12", "<", "1e-9", "0.1235", "0"]
    assert number_text(-3e-17, tol=1e-15) == "< 1e-15"
    assert number_text(-3e-13, tol=1e-15) != "< 1e-15"  # above the tolerance the number itself is printed


def test_near_zero_text_prints_zero_and_round_off_alike():
    from onelayer.formatting import near_zero_text

    assert near_zero_text(0.0) == near_zero_text(-0.0) == near_zero_text(5.6e-17) == "< 1e-12"
    assert near_zero_text(0.0, tol=1e-15) == "< 1e-15"
    assert near_zero_text(0.25) == number_text(0.25) == "0.25"
    assert near_zero_text(3e-11) == "< 1e-9"
    with pytest.raises(ValueError, match="tol"):
        near_zero_text(0.0, tol=0.0)


def test_mean_text_prints_an_interval_with_width():
    """Issue 32: a tight interval printed as "-0.505 [-0.505, -0.505]"; each digit is added until the numbers that
    differ print differently (up to MAX_DIGITS), and equal numbers still print alike."""
    assert formatting.mean_text((-0.504870, -0.504912, -0.504835), 3) == "-0.50487 [-0.50491, -0.50484]"
    assert formatting.mean_text((0.4019, 0.3981, 0.4066), 2) == "0.402 [0.398, 0.407]"  # mean and low collided at 2
    assert formatting.mean_text((0.356, 0.3, 0.41), 2) == "0.36 [0.3, 0.41]"  # already distinct: unchanged
    assert formatting.mean_text((1.0, 1.0, 1.0), 3) == "1 [1, 1]"  # no spread: nothing to tell apart
    assert formatting.mean_text((1.0, 1.0 - 1e-12, 1.0 + 1e-12), 3) == "1 [1, 1]"  # beyond MAX_DIGITS: stops there
    with pytest.raises(ValueError, match="digits"):
        formatting.mean_text((1.0, 0.0, 2.0), 0)


def test_count_interval_and_bounds_texts():
    from onelayer.rates import rate

    assert count_interval_text(rate(0, 20)) == "0/20 [0.00, 0.16]"
    assert count_interval_text(rate(20, 20)) == "20/20 [0.84, 1.00]"
    assert bounds_text(0.012345, 2.5, 2) == "[0.012, 2.5]"
