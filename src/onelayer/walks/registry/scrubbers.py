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
from ..settings import QA_SCRUB_LRS, QA_SCRUB_SIGMAS, RANDOM_INIT_SCRUB_SEED
from .random_init import random_init_sweep

@register("walks-qa-explorer-frames", "Question answering player (frames): test accuracy of Tasks 1 and 2 over 100 GD "
                                      "steps for each initial scale sigma and step size eta")
def _qa_explorer(quick: bool):
    from .. import qa

    sigmas, lrs = (QA_SCRUB_SIGMAS[:2], QA_SCRUB_LRS[:1]) if quick else (QA_SCRUB_SIGMAS, QA_SCRUB_LRS)
    return None, frame_numbers(lambda sigma, lr: qa.explorer(sigma=sigma, lr=lr, **({"steps": 5} if quick else {})),
                               sigmas, lrs, labels=("init sigma", "step size eta"), fmt=("{:g}", "{:g}"))


@register("walks-random-init-sweep-frames", "Random init player (frames): stored curves of p = 0.5 and 1 (seed 0) for "
                                            "every normalisation and reading of the sweep")
def _random_init_sweep(quick: bool):
    from .. import random_init as ri

    data = random_init_sweep(quick)
    meta = data["meta"]
    readings = [f"{red}, lr={lr:g}" for red, lr in meta["readings"]]
    return None, frame_numbers(lambda norm, reading: ri.sweep_explorer(data, normalize=norm, reading=reading,
                                                                       seed=RANDOM_INIT_SCRUB_SEED),
                               meta["normalizations"], readings, labels=("normalize", "loss, step"), fmt=("{}", "{}"))
