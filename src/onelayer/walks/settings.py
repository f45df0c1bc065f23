"""The settings of every walks chapter, defined once: the chapter and its figure recipes read them from here.

One block per chapter (``book/walks/<chapter>.ipynb``); the figure recipes of
:mod:`onelayer.walks.registry` (``python -m onelayer make``) use the same
numbers, so the reproduced figures are the chapter's. Quick variants (for
tests) shrink some of them inside the recipes.
"""

from __future__ import annotations

__all__ = [
    "QA_STEPS", "RELU_HIDDEN", "RELU_SEEDS",
    "SCALING_PS", "SCALING_STEPS", "NO_POSITION_STEPS", "CHAIN_STEPS",
    "RANDOM_INIT_QUICK",
]

# -- chapter "qa" --------------------------------------------------------------------------------------------------
#: GD steps of every question-answering run; width and seeds of the hidden ReLU layer (Figure 10).
QA_STEPS = 100
RELU_HIDDEN = 19
RELU_SEEDS = (0, 1)

# -- chapter "variations" ------------------------------------------------------------------------------------------
#: Walk parameters and GD steps of the logit-scaling table; GD steps without positions and on the random chains.
SCALING_PS = (0.5, 0.7)
SCALING_STEPS = 60
NO_POSITION_STEPS = 200
CHAIN_STEPS = 300

# -- chapter "random_init" -----------------------------------------------------------------------------------------
#: Tiny sizes of the quick variants (those of ``python -m onelayer.walks.random_init --quick``).
RANDOM_INIT_QUICK = {"steps": 20, "record_every": 5, "N": 13, "M": 100, "n_train": 50, "n_test": 50,
                     "table_steps": (5, 10), "snapshot_steps": (10, 20)}

# == blocks added for issues 12/15 (chapters ring, random_init, qa, lab, selector) ====================================

# -- chapter "random_init": the live checks and the scrubber over the stored sweep --------------------------------
#: Steps of the live re-run compared with the stored sweep; steps of the sum/mean equivalence check (exercise).
RANDOM_INIT = {"live_steps": 100, "equivalence_steps": 30, "equivalence_record_every": 10, "top_ranked": 5}
#: Seed of the stored runs the scrubber shows (its knobs are the sweep's normalisations and readings).
RANDOM_INIT_SCRUB_SEED = 0

# -- chapter "qa": the snapshots and the scrubber ------------------------------------------------------------------
#: Steps printed in the curves table, steps of the long Task-2 run and its recording interval.
QA_TABLE_STEPS = (0, 1, 2, 3, 5, 10, 20, 50, 100)
QA_LONG_STEPS = 3000
QA_LONG_EVERY = 500
#: Scrubber over the explorer: initial scales by step sizes (the widget's two sliders).
QA_SCRUB_SIGMAS = (0.0, 0.01, 1.0)
QA_SCRUB_LRS = (0.1, 1.0, 10.0)
#: The bias experiment (issue 13, rebuttal): placements and the steps read off.
QA_BIAS_PLACEMENTS = ("none", "output", "attention", "both")
QA_BIAS_STEPS = (20, 100)

__all__ += ["RANDOM_INIT", "RANDOM_INIT_SCRUB_SEED",
            "QA_TABLE_STEPS", "QA_LONG_STEPS", "QA_LONG_EVERY", "QA_SCRUB_SIGMAS", "QA_SCRUB_LRS",
            "QA_BIAS_PLACEMENTS", "QA_BIAS_STEPS"]
