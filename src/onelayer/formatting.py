"""The one way the chapters turn computed numbers into printed or glued text.

Chapters are committed with their outputs, and ``pytest --nbval`` re-runs them
and compares the text. A printed number must therefore not depend on the last
bits of a machine's floating-point arithmetic (vectorised kernels, BLAS
blocking, thread count, another CPU):

* A quantity that is zero in exact arithmetic and round-off in practice (an
  error against a closed form, a spread that should vanish) prints as
  ``"< 1e-12"`` (the threshold ``tol``), never with its digits. An exact zero
  prints as ``"0"`` through :func:`number_text`; where a zero on one machine can
  be ``5e-17`` on another (the same sum taken in another order), print it with
  :func:`near_zero_text`, which says ``"< 1e-12"`` for both.
* No magnitude below :data:`SMALLEST` (``1e-9``) is printed with its digits at
  all; such values print as ``"< 1e-9"``. At that size a value computed with
  cancellation, or one that is large only relative to round-off, may carry
  machine-dependent digits. ``tests/test_hygiene.py`` checks the stored outputs
  for any number written with an exponent of ``-10`` or less that is not
  preceded by ``<``.
* Everything else prints with ``digits`` significant digits (at most 6), so a
  relative change of ``1e-9`` in the computation moves the text only when the
  value sits within ``1e-9`` of a rounding boundary.

:func:`number_text` does this for printed text; :func:`rounded` gives the same
rounding as a ``float`` for ``myst_nb.glue``. Glue a round-off quantity as
its :func:`number_text` string instead.
"""

from __future__ import annotations

import math

from .validation import check_float, check_int

__all__ = ["ROUNDOFF", "SMALLEST", "MAX_DIGITS", "number_text", "near_zero_text", "rounded", "mean_text"]

#: Default threshold below which a quantity that is zero in exact arithmetic counts as round-off.
ROUNDOFF = 1e-12
#: Smallest magnitude ever printed with its digits; anything smaller prints as ``"< 1e-9"``.
SMALLEST = 1e-9
#: Most significant digits :func:`number_text` and :func:`rounded` give.
MAX_DIGITS = 6


def _power_text(x: float) -> str:
    """``1e-12`` rather than Python's ``1e-12``/``1e-06``: one digit of mantissa, no zero-padded exponent."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def number_text(x, digits: int = 4, *, tol: float = ROUNDOFF) -> str:
    """``x`` as text that a machine's last bits cannot change.

    Parameters
    ----------
    x:
        A real number (Python, NumPy or 0-dimensional torch scalar).
    digits:
        Significant digits of an ordinary value, 1 to :data:`MAX_DIGITS`.
    tol:
        ``>= 0``. ``|x| < tol`` prints as ``"< tol"`` (``"< 1e-12"`` by default):
        use it for quantities that are zero in exact arithmetic. ``0`` turns it off.

    Returns
    -------
    str
        ``"0"`` for an exact zero; ``"nan"``, ``"inf"``, ``"-inf"``; ``"< tol"``
        below ``tol``; ``"< 1e-9"`` (:data:`SMALLEST`) for any other magnitude below
        that; otherwise ``f"{x:.{digits}g}"``.
    """
    digits = check_int("digits", digits, low=1, high=MAX_DIGITS)
    tol = check_float("tol", tol, low=0.0)
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) < tol:
        return f"< {_power_text(tol)}"
    if abs(x) < SMALLEST:
        return f"< {_power_text(SMALLEST)}"
    return f"{x:.{digits}g}"


def near_zero_text(x, digits: int = 4, *, tol: float = ROUNDOFF) -> str:
    """Like :func:`number_text` for a quantity that vanishes in exact arithmetic: ``"< tol"`` below ``tol``, 0 included.

    Use it where floating point may give an exact zero on one machine and round-off on
    another (two sums of the same numbers in different orders), so that both print alike.
    ``tol`` must be positive.
    """
    tol = check_float("tol", tol, low=0.0)
    if tol == 0:
        raise ValueError("tol must be > 0 for near_zero_text (use number_text to print exact zeros)")
    if abs(float(x)) < tol:
        return f"< {_power_text(tol)}"
    return number_text(x, digits, tol=tol)


def rounded(x, digits: int = 4) -> float:
    """``x`` rounded to ``digits`` significant digits (1 to :data:`MAX_DIGITS`), as a plain ``float`` for glue.

    The glued text is then the short ``repr`` of the rounded value (``0.356``, not
    ``np.float64(0.356)`` or ``0.35599999999999998``). Round-off-level values should be
    glued as :func:`number_text` strings instead: rounding keeps their noisy digits.
    """
    digits = check_int("digits", digits, low=1, high=MAX_DIGITS)
    x = float(x)
    if not math.isfinite(x) or x == 0:
        return x + 0.0  # + 0.0 turns -0.0 into 0.0
    return float(f"{x:.{digits - 1}e}")


def mean_text(interval, digits: int = 4) -> str:
    """``"mean [low, high]"`` of a :func:`onelayer.rates.mean_interval` result, each through :func:`number_text`.

    ``digits`` significant digits, or more where they would print an interval of width zero: two of the three
    numbers that differ must not print alike ("-0.505 [-0.505, -0.505]" for a tight interval), so each digit is
    added until they differ, up to :data:`MAX_DIGITS`. Numbers that are equal print alike (a sample with no spread).
    """
    if len(interval) != 3:
        raise ValueError("interval must be (mean, low, high)")
    digits = check_int("digits", digits, low=1, high=MAX_DIGITS)
    values = tuple(float(x) for x in interval)
    for d in range(digits, MAX_DIGITS + 1):
        mean, low, high = texts = tuple(number_text(x, d) for x in values)
        if all(texts[i] != texts[j] for i in range(3) for j in range(i) if values[i] != values[j]):
            break
    return f"{mean} [{low}, {high}]"
