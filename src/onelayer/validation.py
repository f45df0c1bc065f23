"""Input validation helpers shared by every public function of :mod:`onelayer`.

Each helper returns the (possibly converted) value or raises :class:`TypeError`
(wrong kind of object) or :class:`ValueError` (right kind, outside the allowed
range). The message always names the parameter and the allowed range, so a
reader who mistypes a knob in a chapter sees at once what to change.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

__all__ = [
    "check_int",
    "check_float",
    "check_probability",
    "check_choice",
    "check_bool",
    "check_instances",
    "check_int_sequence",
]


def _range_text(low, high, low_open: bool, high_open: bool) -> str:
    left = "(" if low_open else "["
    right = ")" if high_open else "]"
    lo = "-inf" if low is None else repr(low)
    hi = "inf" if high is None else repr(high)
    return f"{left}{lo}, {hi}{right}"


def check_int(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer in ``[low, high]``.

    Booleans are rejected: ``True`` is not a meaningful tree depth.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(
            f"{name} must be an integer in {_range_text(low, high, False, False)}, got {value}"
        )
    return value


def check_float(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` inside the given interval.

    ``low_open``/``high_open`` make the corresponding end of the interval open.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    allowed = _range_text(low, high, low_open, high_open)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number in {allowed}, got {value}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        raise ValueError(f"{name} must be in {allowed}, got {value}")
    return value


def check_probability(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    """A number in ``[0, 1]`` (ends optionally open)."""
    return check_float(name, value, low=0.0, high=1.0, low_open=open_low, high_open=open_high)


def check_choice(name: str, value, choices: Iterable):
    """Return ``value`` if it is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is a ``bool``."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return value


def check_int_sequence(name: str, values, *, low: int | None = None, high: int | None = None) -> tuple[int, ...]:
    """Return a tuple of integers, each in ``[low, high]``."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of integers, got {type(values).__name__}")
    return tuple(check_int(f"{name}[{i}]", v, low=low, high=high) for i, v in enumerate(values))


def check_instances(name: str, values, cls: type, what: str) -> list:
    """Return ``values`` as a non-empty list whose entries are all instances of ``cls``.

    ``what`` names one entry in the messages (e.g. ``"one per member"``).
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of {cls.__name__} ({what}), got {type(values).__name__}")
    values = list(values)
    if not values:
        raise ValueError(f"{name} must contain at least one {cls.__name__} ({what})")
    for i, value in enumerate(values):
        if not isinstance(value, cls):
            raise TypeError(f"{name}[{i}] must be a {cls.__name__}, got {type(value).__name__}")
    return values
