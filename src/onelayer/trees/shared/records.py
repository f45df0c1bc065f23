"""Reading a recorded run: the first recorded step at which a condition holds.

Used by the phase boundaries of the backward dynamics and by the head roles
and phase times of the forward dynamics.
"""

from __future__ import annotations

import numpy as np

__all__ = ["first_step"]


def first_step(steps, condition) -> float:
    """First entry of ``steps`` where the boolean array ``condition`` holds (``nan`` if never)."""
    steps = np.asarray(steps)
    condition = np.asarray(condition, dtype=bool)
    if steps.shape != condition.shape:
        raise ValueError(f"steps and condition must have the same shape, got {steps.shape} and {condition.shape}")
    idx = np.flatnonzero(condition)
    return float(steps[idx[0]]) if idx.size else float("nan")
