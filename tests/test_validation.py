import math

import pytest

from onelayer import validation as v


def test_check_int_accepts_and_converts():
    import numpy as np

    assert v.check_int("n", np.int64(3), low=1) == 3
    assert isinstance(v.check_int("n", np.int64(3)), int)


@pytest.mark.parametrize("bad", [1.0, "3", None, True])
def test_check_int_type(bad):
    with pytest.raises(TypeError, match="n must be an integer"):
        v.check_int("n", bad)


def test_check_int_range_message_names_parameter_and_range():
    with pytest.raises(ValueError, match=r"depth must be an integer in \[1, 10\], got 0"):
        v.check_int("depth", 0, low=1, high=10)


def test_check_float_open_interval():
    assert v.check_float("p", 0.5, low=0, high=1, low_open=True) == 0.5
    with pytest.raises(ValueError, match=r"p must be in \(0.0, 1.0\]"):
        v.check_float("p", 0.0, low=0.0, high=1.0, low_open=True)
    with pytest.raises(ValueError, match="finite"):
        v.check_float("x", math.nan)
    with pytest.raises(TypeError, match="real number"):
        v.check_float("x", "1.0")


def test_check_probability_and_choice_and_bool():
    assert v.check_probability("p", 1.0) == 1.0  # exact: the input, returned unchanged
    with pytest.raises(ValueError, match="p must be in"):
        v.check_probability("p", 1.5)
    assert v.check_choice("mode", "mean", ["mean", "sum"]) == "mean"
    with pytest.raises(ValueError, match="mode must be one of 'mean', 'sum'"):
        v.check_choice("mode", "max", ["mean", "sum"])
    with pytest.raises(TypeError, match="flag must be True or False"):
        v.check_bool("flag", 1)


def test_check_int_sequence():
    assert v.check_int_sequence("steps", [0, 5, 10], low=0) == (0, 5, 10)
    with pytest.raises(ValueError, match=r"steps\[1\]"):
        v.check_int_sequence("steps", [0, -1], low=0)
    with pytest.raises(TypeError):
        v.check_int_sequence("steps", "012")


def test_check_instances():
    assert v.check_instances("items", (1, 2), int, "one per member") == [1, 2]
    with pytest.raises(ValueError, match="items must contain at least one int"):
        v.check_instances("items", [], int, "one per member")
    with pytest.raises(TypeError, match=r"items\[1\] must be a int, got str"):
        v.check_instances("items", [1, "2"], int, "one per member")
    with pytest.raises(TypeError, match="items must be a sequence of int"):
        v.check_instances("items", "12", int, "one per member")
