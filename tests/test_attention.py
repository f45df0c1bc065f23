"""Theorem test for the selector chapter: softmax(lam z) -> uniform on argmax, with the stated bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from onelayer import attention

logits = st.lists(st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 2)), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(logits, st.floats(0, 60))
def test_error_never_exceeds_bound(z, lam):
    err = attention.selection_error(z, lam)
    bound = attention.selection_bound(z, lam)
    assert err <= bound + 1e-12


@settings(max_examples=100, deadline=None)
@given(logits)
def test_weights_are_a_distribution_and_limit_is_uniform_on_argmax(z):
    w = attention.softmax(z, 3.0)
    assert np.isclose(w.sum(), 1.0) and np.all(w >= 0)
    limit = attention.selection_limit(z)
    top = attention.maximal_set(z)
    assert np.allclose(limit[top], 1 / top.size) and np.isclose(limit.sum(), 1.0)


def test_exponential_rate_equals_gap():
    z = np.array([1.0, 0.3, -0.2, -1.0])
    lams = np.array([20.0, 30.0])
    err = attention.selection_error(z, lams)
    slope = np.log(err[1] / err[0]) / 10.0
    assert slope == pytest.approx(-0.7, abs=1e-3)


def test_one_hot_for_unique_max_and_uniform_for_full_tie():
    z = np.array([0.0, 2.0, 1.0])
    w = attention.softmax(z, 50.0)
    assert w[0] + w[2] < 1e-20 and w[1] == pytest.approx(1.0)
    assert np.allclose(attention.softmax(np.full(7, 0.3), 1e8), 1 / 7)
    assert attention.selection_error(np.full(7, 0.3), 1e3) == pytest.approx(0.0, abs=1e-15)
    assert attention.logit_gap(np.full(3, 1.0)) == float("inf")


def test_bound_is_tight_when_the_rest_tie():
    z = np.array([1.0, 0.0, 0.0, 0.0])
    lam = 7.0
    exact = attention.selection_error(z, lam)
    m = 3 * np.exp(-lam) / (1 + 3 * np.exp(-lam))
    assert exact == pytest.approx(2 * m, rel=1e-12)


@pytest.mark.parametrize(
    "call, exc",
    [
        (lambda: attention.softmax([], 1.0), ValueError),
        (lambda: attention.softmax([[1.0]], 1.0), ValueError),
        (lambda: attention.softmax([1.0, np.inf], 1.0), ValueError),
        (lambda: attention.softmax([1.0], -1.0), ValueError),
        (lambda: attention.maximal_set([1.0], tol=-1.0), ValueError),
    ],
)
def test_validation(call, exc):
    with pytest.raises(exc):
        call()
