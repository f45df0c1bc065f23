"""Recipes of the walks chapters' scrubbers: the numbers behind every frame of each precomputed-frames player.

Each scrubber ``NAME`` of a walks chapter (:mod:`onelayer.scrubber`) is registered as ``NAME-frames``: the
figure is ``None`` (the frames are the chapter's player) and the numbers are
:func:`onelayer.scrubber.frame_numbers` of the same draw function over the same settings as the chapter's
cell: every frame's slider value(s) and what its figure plots. ``quick=True`` keeps fewer frames and shorter
runs; ``quick=False`` is the chapter's player. ``tests/test_hygiene.py`` checks that the slider texts of the
committed full-mode numbers are those of the player in the chapter's output.
"""

from __future__ import annotations

from ...registry import register
from ...scrubber import frame_numbers
from ..settings import DETERMINISTIC_STEPS, FIG4

#: The GD steps of the chapter theorem31's player (walks-t31-steps) and theorem41's (walks-t41-escape).
T31_STEPS = tuple(range(11))
T41_ESCAPE_STEPS = (0, 2, 4, 6, 8, 9, 10, 11, 12, 13, 14, 16, 20, 30, 50)


@register("walks-t31-steps-frames", "Theorem 3.1 player (frames): accuracy, V and attention at GD steps 0-10 of the "
                                    "paper's Figure 4 run (p=0.5, K=6, N=97)")
def _t31_steps(quick: bool):
    from .. import figures, experiment

    exp = experiment.setup_experiment(p=FIG4["p"], K=FIG4["K"], N=FIG4["N"])
    hist = experiment.run(exp, steps=5 if quick else FIG4["steps"])
    steps = [t for t in T31_STEPS if t <= 5] if quick else list(T31_STEPS)
    return None, frame_numbers(lambda step: figures.training_figure(hist, exp, step=step), steps, labels="GD step", fmt="{:d}")


@register("walks-t41-escape-frames", "Theorem 4.1 player (frames): accuracy, V and attention around the escape from "
                                     "the symmetric state (p=1, sin positions, seeded Gram error 1e-9)")
def _t41_escape(quick: bool):
    from .. import figures, experiment, theorem41

    exp = theorem41.deterministic_setup(6, 16, train="sample", positions="sin", gram_error=theorem41.GRAM_ERROR)
    steps = 20 if quick else DETERMINISTIC_STEPS
    hist = experiment.run(exp, steps=steps)
    shown = [t for t in T41_ESCAPE_STEPS if t <= steps]
    return None, frame_numbers(lambda step: figures.training_figure(hist, exp, step=step), shown, labels="GD step", fmt="{:d}")
