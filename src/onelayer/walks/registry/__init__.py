"""The walks part's figures and tables for ``python -m onelayer make NAME``.

Each recipe below is registered with :func:`onelayer.registry.register` and
makes one figure (or table) of a walks chapter with the same calls, seeds and
settings as the chapter: ``quick=True`` shrinks steps, grid sizes and sample
sizes so the whole set runs in seconds (for tests); ``quick=False``
reproduces the chapter. The recipes hold no experiment logic of their own:
they call :mod:`onelayer.walks.experiment`, :mod:`onelayer.walks.theorem41`,
:mod:`onelayer.walks.ring`, ... and :mod:`onelayer.walks.figures`, and turn
the results into the JSON/CSV numbers of the figure.

Chapters (``ring``, ``lab``, ``qa``, ``random_init``, ``variations`` and ``scaling`` have moved to :mod:`onelayer.chapters.walks`): ``theorem31``
(Lemma C.1, parent log-odds, Figures 4 and 8, the direction of ``V``),
``theorem41`` (Lemma D.1, the symmetric state, Figures 5 and 9, round-off
escape), one module of this package per chapter, and ``scrubbers``: the numbers behind
the frames of the chapters' precomputed-frames players. The
recipes of the later chapters import their modules when they run, so listing
the figures never depends on them. Every setting a recipe shares with its
chapter comes from :mod:`onelayer.walks.settings`.
"""

from __future__ import annotations

from ..settings import DIRECTION_PS, FIG4, FIG8, LOG_ODDS_NS, PERTURBATIONS, STEPS_TABLE_SIZES
from . import theorem31, theorem41, scrubbers  # noqa: I001 (the chapters' order)
from .theorem31 import training_numbers

__all__ = ["FIG4", "FIG8", "DIRECTION_PS", "LOG_ODDS_NS", "STEPS_TABLE_SIZES", "PERTURBATIONS",
           "training_numbers"]
