"""Power laws on log axes: first-crossing steps of many runs, fitted slopes, log-log panels.

The scaling chapter asks how a cost (steps to converge, seconds per step) grows
with a size (sequence length ``N``, embedding length ``M``, tree depth ``m``,
number of nodes ``S``). Every such measurement in this package goes through
the three functions here:

* :func:`crossing_steps`: for recorded curves of ``B`` runs (shape ``(T, B)``),
  the first recorded step at which each run's value passes a threshold (``nan``
  for a run that never does).
* :func:`fit_power_law`: least squares of ``log y`` on ``log x``, i.e.
  ``y ~ c x^slope``, with the coefficient of determination on the log scale.
* :func:`loglog_panel`: the points, the fitted line and the slope in the legend.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .validation import check_bool

__all__ = ["PowerLawFit", "crossing_steps", "fit_power_law", "loglog_panel"]


def crossing_steps(steps, values, threshold: float, *, above: bool = True) -> np.ndarray:
    """First recorded step at which each run's value reaches ``threshold``.

    Parameters
    ----------
    steps:
        The recorded steps, shape ``(T,)``, strictly increasing.
    values:
        The recorded values, shape ``(T,)`` (one run) or ``(T, B)`` (``B`` runs).
    threshold:
        A finite number.
    above:
        ``True``: the first step with ``value >= threshold``; ``False``: the
        first step with ``value <= threshold``.

    Returns
    -------
    numpy.ndarray
        Shape ``()`` or ``(B,)``, float; ``nan`` where a run never reaches the
        threshold (or its value is ``nan`` there).
    """
    steps = np.asarray(steps, dtype=float)
    values = np.asarray(values, dtype=float)
    if steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"steps must be a non-empty 1-D array, got shape {steps.shape}")
    if np.any(np.diff(steps) <= 0):
        raise ValueError("steps must be strictly increasing")
    if values.ndim not in (1, 2) or values.shape[0] != steps.size:
        raise ValueError(f"values must have shape (T,) or (T, B) with T = {steps.size}, got {values.shape}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating, np.integer)):
        raise TypeError(f"threshold must be a number, got {type(threshold).__name__}")
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold}")
    above = check_bool("above", above)
    with np.errstate(invalid="ignore"):
        hit = values >= threshold if above else values <= threshold
    first = np.argmax(hit, axis=0)
    reached = np.take_along_axis(hit, np.expand_dims(first, 0), axis=0)[0] if values.ndim == 2 else hit[first]
    return np.where(reached, steps[first], np.nan)


@dataclass(frozen=True)
class PowerLawFit:
    """``y ~ prefactor * x ** slope``, fitted on ``n`` points (``r2``: on the log scale)."""

    slope: float
    prefactor: float
    r2: float
    n: int

    def __call__(self, x):
        """The fitted curve at ``x``."""
        return self.prefactor * np.asarray(x, dtype=float) ** self.slope

    def label(self, name: str = "slope") -> str:
        """A legend text such as ``"slope 1.50"``."""
        return f"{name} {round(self.slope, 2) + 0.0:.2f}"  # + 0.0: no "-0.00"


def fit_power_law(x, y) -> PowerLawFit:
    """Least-squares line through ``(log x, log y)``.

    Points where ``y`` is ``nan`` (a run that never converged) are left out.
    At least two points with distinct ``x`` must remain; every used ``x`` and
    ``y`` must be positive and finite.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same number of entries, got {x.size} and {y.size}")
    keep = ~np.isnan(y)
    x, y = x[keep], y[keep]
    if x.size < 2 or np.unique(x).size < 2:
        raise ValueError("fit_power_law needs at least two points with distinct x (after dropping nan values of y)")
    if not (np.all(np.isfinite(x)) and np.all(x > 0) and np.all(np.isfinite(y)) and np.all(y > 0)):
        raise ValueError("fit_power_law needs positive finite x and y (log axes)")
    lx, ly = np.log(x), np.log(y)
    slope, intercept = np.polyfit(lx, ly, 1)
    resid = ly - (slope * lx + intercept)
    total = float(((ly - ly.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / total if total > 0 else 1.0
    return PowerLawFit(slope=float(slope), prefactor=float(math.exp(intercept)), r2=r2, n=int(x.size))


def loglog_panel(ax, x, y, *, label: str = "", spread=None, fit: bool = True, color=None, marker: str = "o"):
    """Plot ``y`` against ``x`` on log axes, with the fitted power law.

    Parameters
    ----------
    ax:
        A Matplotlib axes.
    x, y:
        Sizes and costs (``nan`` costs are not drawn and not fitted).
    label:
        Series name; the fitted slope is appended to it.
    spread:
        Optional ``(low, high)`` arrays drawn as error bars (e.g. the
        smallest and largest value over seeds).
    fit:
        Draw (and return) the fitted line.

    Returns
    -------
    PowerLawFit or None
        The fit (``None`` if ``fit`` is false).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    result = fit_power_law(x, y) if fit else None
    text = label if result is None else (f"{label}: {result.label()}" if label else result.label())
    if spread is not None:
        low, high = (np.asarray(s, dtype=float) for s in spread)
        if low.shape != y.shape or high.shape != y.shape:
            raise ValueError("spread must be two arrays shaped like y")
        yerr = np.vstack([y - low, high - y])
        line = ax.errorbar(x, y, yerr=yerr, fmt=marker, color=color, label=text, capsize=3)[0]
    else:
        (line,) = ax.plot(x, y, marker, color=color, label=text)
    if result is not None:
        keep = ~np.isnan(y)
        xs = np.geomspace(x[keep].min(), x[keep].max(), 50)
        ax.plot(xs, result(xs), "-", color=line.get_color(), alpha=0.7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    return result
