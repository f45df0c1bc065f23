"""Phase boundaries of the backward training dynamics, measured from a recorded run.

The paper's proof outline (as described in the public review discussion)
splits the training of ``H = h1 I + h2 (11^T - I)`` into: phase I, the
diagonal increases while the off-diagonal stays bounded; phase II, the
diagonal increases and the off-diagonal strictly decreases; then the loss
tends to zero. The exact definitions of ``T_1, T_2`` were not visible to us,
so :func:`detect_phases` measures several explicit, named events:

* ``T_offdiag_decreasing``: first recorded step from which ``h2`` never
  increases again (start of the paper's phase II by its sign definition);
* ``T_attention``: first step at which the mean attention on the correct edge
  exceeds 1/2 (end of the near-uniform-attention phase);
* ``T_loss``: first step at which the loss is below ``loss_fraction`` times
  its initial value (entry into the slow late regime).

It also reports whether ``h1`` increased at every recorded step, whether the
loss decreased at every recorded step, and the largest ``|h2|`` before
``T_attention``. :func:`loglog_slope` fits the late-time rate.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_float

__all__ = ["detect_phases", "loglog_slope", "first_step"]


def first_step(steps, condition) -> float:
    """First entry of ``steps`` where the boolean array ``condition`` holds (``nan`` if never)."""
    steps = np.asarray(steps)
    condition = np.asarray(condition, dtype=bool)
    if steps.shape != condition.shape:
        raise ValueError(f"steps and condition must have the same shape, got {steps.shape} and {condition.shape}")
    idx = np.flatnonzero(condition)
    return float(steps[idx[0]]) if idx.size else float("nan")


def detect_phases(steps, h1, h2, loss, correct_weight, *, loss_fraction: float = 1e-2) -> dict[str, float | bool]:
    """Measure the phase boundaries of one run (arrays indexed by recorded step).

    Parameters
    ----------
    steps, h1, h2, loss, correct_weight:
        Recorded steps and the matching values (same length, at least 2).
    loss_fraction:
        ``T_loss`` is the first step with ``loss <= loss_fraction * loss[0]`` (in ``(0, 1)``).
    """
    loss_fraction = check_float("loss_fraction", loss_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    arrays = [np.asarray(a, dtype=np.float64) for a in (steps, h1, h2, loss, correct_weight)]
    n = arrays[0].size
    if n < 2 or any(a.shape != (n,) for a in arrays):
        raise ValueError("steps, h1, h2, loss and correct_weight must be 1-D arrays of one common length >= 2")
    steps, h1, h2, loss, cw = arrays
    d2 = np.diff(h2)
    rising = np.flatnonzero(d2 > 0)
    t_off = float(steps[0]) if rising.size == 0 else (float(steps[rising[-1] + 1]) if rising[-1] + 1 < n - 1 else float("nan"))
    t_att = first_step(steps, cw > 0.5)
    t_loss = first_step(steps, loss <= loss_fraction * loss[0])
    before = steps <= (t_att if np.isfinite(t_att) else steps[-1])
    return {
        "T_offdiag_decreasing": t_off,
        "T_attention": t_att,
        "T_loss": t_loss,
        "h1_increasing": bool(np.all(np.diff(h1) > 0)),
        "loss_decreasing": bool(np.all(np.diff(loss) < 0)),
        "max_abs_h2_phase1": float(np.abs(h2[before]).max()),
    }


def loglog_slope(t, y, *, t_min: float | None = None, t_max: float | None = None) -> float:
    """Least-squares slope of ``log y`` against ``log t`` on ``t_min <= t <= t_max`` (``t, y > 0``)."""
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if t.shape != y.shape:
        raise ValueError("t and y must have the same shape")
    keep = (t > 0) & (y > 0)
    if t_min is not None:
        keep &= t >= t_min
    if t_max is not None:
        keep &= t <= t_max
    if keep.sum() < 2:
        raise ValueError("need at least 2 positive points inside [t_min, t_max] to fit a slope")
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])
