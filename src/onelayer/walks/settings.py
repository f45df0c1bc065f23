"""The settings of every walks chapter, defined once: the chapter and its figure recipes read them from here.

One block per chapter (``book/walks/<chapter>.ipynb``); the figure recipes of
:mod:`onelayer.walks.registry` (``python -m onelayer make``) use the same
numbers, so the reproduced figures are the chapter's. Quick variants (for
tests) shrink some of them inside the recipes.
"""

from __future__ import annotations

__all__ = [
    "FIG4", "FIG8", "DIRECTION_PS", "DIRECTION_STEPS", "LOG_ODDS_P", "LOG_ODDS_NS", "LOG_ODDS_WALKS",
    "STEPS_TABLE_P", "STEPS_TABLE_SIZES", "STEPS_TABLE_STEPS",
    "SYMMETRY_STEPS", "DETERMINISTIC_STEPS", "ESCAPE_STEPS", "PERTURBATIONS",
]

# -- chapter "theorem31" -------------------------------------------------------------------------------------------
#: Figure 4 of the paper: K=6, N=97, M=1000, p=0.5, 50 GD steps from zero.
FIG4 = {"p": 0.5, "K": 6, "N": 97, "steps": 50}
#: Figure 8 of the paper: the same with K=20, N=101.
FIG8 = {"p": 0.5, "K": 20, "N": 101, "steps": 50}
#: Walk parameters and GD steps of the direction-of-V runs.
DIRECTION_PS = (0.5, 0.7, 0.9)
DIRECTION_STEPS = 1000
#: Walk parameter, sequence lengths and walks of the parent log-odds experiment.
LOG_ODDS_P = 0.7
LOG_ODDS_NS = (13, 25, 37, 49, 61, 73, 97, 121, 145, 193)
LOG_ODDS_WALKS = 8000
#: Walk parameter, (K, N) pairs and GD steps of the steps-to-optimal table.
STEPS_TABLE_P = 0.7
STEPS_TABLE_SIZES = ((5, 49), (6, 49), (6, 97), (8, 97), (10, 101), (6, 145))
STEPS_TABLE_STEPS = 20

# -- chapter "theorem41" -------------------------------------------------------------------------------------------
#: GD steps of the symmetric-state table, of the Figure 5/9 runs and of the escape runs.
SYMMETRY_STEPS = 100
DETERMINISTIC_STEPS = 50
ESCAPE_STEPS = 40
#: Sizes of the deliberate perturbation of q in the escape experiment.
PERTURBATIONS = (1e-15, 1e-12, 1e-9, 1e-6, 1e-3)
