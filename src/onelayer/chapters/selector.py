"""Chapter "Softmax attention as a selector" (``book/selector.ipynb``).

The exact ``l1`` distance of ``softmax(lambda z)`` to its limit (uniform on the maximal logits) against the bound
``2 (n - k) / k * exp(-lambda * gap)`` of :mod:`onelayer.attention`, the scale a given accuracy needs, and the
explorable bar chart (a live slider in a kernel, a precomputed player in the HTML book).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import attention
from ..paths import data_path
from ..registry import register
from ..scrubber import frame_numbers, load_frames, scrub
from ..validation import check_bool
from ..verdicts import selector as verdicts
from ..widgets import selection_error_figure, selector_figure, selector_widget

__all__ = ["Settings", "SETTINGS", "PLAYER_FRAMES", "error_rows", "error_vs_lambda", "scale_for_accuracy", "tie_rows", "bound_check",
           "default_state", "explorer", "scale_player", "scale_frames", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows: six logits with one maximum (gap 0.6), the scales of the table, the figure's grid."""

    z: tuple[float, ...] = (1.5, 0.9, 0.4, 0.0, -0.6, -1.2)
    lams: tuple[float, ...] = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0)
    #: the figure's grid of scales: ``np.linspace(start, stop, points)``; quick mode uses ``quick_points``
    grid: tuple[float, float, int] = (0.0, 40.0, 81)
    quick_points: int = 21
    #: gaps of the table "scale needed for a given accuracy" (one logit above ``n_other`` tied ones: the bound is attained)
    gaps: tuple[float, ...] = (0.25, 1.0, 4.0)
    n_other: int = 3
    target: float = 1e-6
    #: the ties: two maximal logits, then all logits equal, each at the scales ``tie_lams``
    tied: tuple[float, ...] = (1.0, 1.0, 0.2, -0.5)
    all_equal: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0, 0.0)
    tie_lams: tuple[float, ...] = (1.0, 10.0, 100.0)
    #: the live slider and the default state of its figure
    widget_lam: float = 1.0
    widget_lam_max: float = 20.0
    #: the scales of the precomputed player (quick mode: every third)
    scrub_lams: tuple[float, ...] = (0.0, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0)


SETTINGS = Settings()
#: The player's rendered frames in the data directory (``python -m tools.player_frames selector-scale-frames``).
PLAYER_FRAMES = "frames/selector_scale.json"


def _z() -> np.ndarray:
    return np.array(SETTINGS.z, dtype=np.float64)


def error_rows() -> list[dict]:
    """The exact ``l1`` distance to the limit and the bound at each scale of ``SETTINGS.lams``."""
    z, lams = _z(), np.array(SETTINGS.lams, dtype=np.float64)
    err, bound = attention.selection_error(z, lams), attention.selection_bound(z, lams)
    return [{"lambda": float(lam), "l1_error": float(e), "bound": float(b)} for lam, e, b in zip(lams, err, bound)]


@register("selector-error-vs-lambda", "Softmax selector: exact L1 distance to the one-hot limit vs the bound, over lambda")
def error_vs_lambda(quick: bool = False):
    """The distance and the bound over the scale (log scale), with :func:`error_rows` as its table."""
    z = _z()
    start, stop, points = SETTINGS.grid
    grid = np.linspace(start, stop, SETTINGS.quick_points if quick else points)
    fig = selection_error_figure(z, grid)
    rows = error_rows()
    return fig, {
        "logits": z,
        "gap": attention.logit_gap(z),
        "maximal_set": attention.maximal_set(z),
        "bound_holds": bool(np.all(attention.selection_error(z, grid) <= attention.selection_bound(z, grid) + 1e-15)),
        "table": rows,
    }


@register("selector-scale-for-accuracy", "Softmax selector (table): scale needed for L1 error 1e-6 against the gap, when the bound is tight")
def scale_for_accuracy(quick: bool = False):
    """For each gap, the scale at which the bound equals ``SETTINGS.target`` and the exact error there.

    One logit ``gap`` above ``n_other`` equal ones: the bound is attained, so the exact error equals the target.
    """
    rows = []
    for delta in SETTINGS.gaps:
        logits = np.array([delta] + [0.0] * SETTINGS.n_other)
        lam = float(np.log(2 * SETTINGS.n_other / SETTINGS.target) / delta)
        rows.append({"gap": delta, "lambda": lam, "l1_error": float(attention.selection_error(logits, lam)),
                     "bound": float(attention.selection_bound(logits, lam))})
    return None, {"target_bound": SETTINGS.target, "table": rows}


def tie_rows() -> list[dict]:
    """The tied cases (two maximal logits; all logits equal) at each scale of ``tie_lams``: the weight of each maximal
    logit and the total weight of the others."""
    rows = []
    for case, z in (("two maximal logits", SETTINGS.tied), ("all logits equal", SETTINGS.all_equal)):
        logits = np.array(z, dtype=np.float64)
        top = attention.maximal_set(logits)
        rest = np.setdiff1d(np.arange(logits.size), top)
        for lam, w in zip(SETTINGS.tie_lams, attention.softmax(logits, np.array(SETTINGS.tie_lams))):
            rows.append({"case": case, "lambda": lam, "each_maximal": float(w[top].mean()), "others": float(w[rest].sum())})
    return rows


def bound_check() -> dict:
    """The chapter's verdict numbers: in how many of the cases of both tables the exact error is at most the bound
    (up to a relative ``1e-12``), and the largest relative gap between error and bound where the others tie.

    Deterministic (no seed, no sample): an exact check in float64. With ``k`` tied others the exact error is the bound
    divided by ``1 + k exp(-lambda gap)``: attained up to a relative error of the size of the target itself.
    """
    rows = error_rows()
    tight = scale_for_accuracy()[1]["table"]
    holds = sum(r["l1_error"] <= r["bound"] * (1 + 1e-12) for r in rows + tight)
    attained = max(abs(r["l1_error"] - r["bound"]) / r["bound"] for r in tight)
    return {"holds": int(holds), "cases": len(rows) + len(tight), "attained": float(attained),
            "lambda_small_gap": tight[0]["lambda"], "lambda_large_gap": tight[-1]["lambda"]}


@register("selector-default-state", "Softmax selector: attention weights at lambda = 1 beside their limit (the widget's default)")
def default_state(quick: bool = False):
    """The bar chart at the slider's default scale and the numbers it shows."""
    z, lam = _z(), SETTINGS.widget_lam
    return selector_figure(z, lam), {
        "logits": z,
        "lambda": lam,
        "weights": attention.softmax(z, lam),
        "limit": attention.selection_limit(z),
        "l1_error": attention.selection_error(z, lam),
        "bound": attention.selection_bound(z, lam),
    }


def explorer():
    """The live slider (in a kernel) over ``lambda`` in ``[0, widget_lam_max]``, redrawing the bar chart."""
    return selector_widget(_z(), lam=SETTINGS.widget_lam, lam_max=SETTINGS.widget_lam_max)


def _frame(lam: float):
    return selector_figure(_z(), lam)


def scale_player(live: bool = False):
    """The precomputed player of the HTML book, the bar chart at each scale of ``SETTINGS.scrub_lams``: its stored
    frames (:data:`PLAYER_FRAMES`, nothing drawn), or (``live``) drawn again."""
    if not check_bool("live", live):
        return load_frames(data_path(PLAYER_FRAMES))
    return scrub(_frame, [float(lam) for lam in SETTINGS.scrub_lams], label="lambda", name="selector-scale", fmt="{:g}",
                 alt="Bar chart of the attention weights softmax(lambda z) over the logits z, beside the one-hot limit "
                     "that puts all weight on the largest logit, at scale lambda = {value}.")


@register("selector-scale-frames", "Softmax selector player (frames): attention weights beside their one-hot limit at "
                                   "each scale lambda from 0 to 20")
def scale_frames(quick: bool = False):
    """The numbers behind every frame of :func:`scale_player`."""
    lams = [float(lam) for lam in (SETTINGS.scrub_lams[::3] if quick else SETTINGS.scrub_lams)]
    return None, frame_numbers(_frame, lams, labels="lambda", fmt="{:g}")


def verdict_rows() -> list[dict]:
    """The chapter's verdict row: :func:`onelayer.verdicts.selector.rows` of :func:`bound_check`."""
    return verdicts.rows(SETTINGS, check=bound_check())
