"""The walks part's figures and tables for ``python -m onelayer make NAME``.

Each recipe below is registered with :func:`onelayer.registry.register` and
makes one figure (or table) of a walks chapter with the same calls, seeds and
settings as the chapter: ``quick=True`` shrinks steps, grid sizes and sample
sizes so the whole set runs in seconds (for tests); ``quick=False``
reproduces the chapter. The recipes hold no experiment logic of their own:
they call :mod:`onelayer.walks.qa`, :mod:`onelayer.walks.random_init`, ...
and :mod:`onelayer.walks.figures`, and turn the results into the JSON/CSV
numbers of the figure.

Chapters (``ring``, ``lab``, ``theorem31`` and ``theorem41`` have moved to
:mod:`onelayer.chapters.walks`): ``qa`` (Figures 7 and 10),
``variations``, ``random_init`` and the walks half of the book's ``scaling`` chapter
(:mod:`onelayer.walks.scaling`), one module of this package per chapter, and ``scrubbers``: the numbers behind
the frames of the chapters' precomputed-frames players. The
recipes of the later chapters import their modules when they run, so listing
the figures never depends on them. Every setting a recipe shares with its
chapter comes from :mod:`onelayer.walks.settings`.
"""

from __future__ import annotations

from ..settings import RANDOM_INIT_QUICK
from . import qa, variations, random_init, scaling, scrubbers  # noqa: I001 (the chapters' order)
from .random_init import random_init_sweep

__all__ = ["RANDOM_INIT_QUICK", "random_init_sweep"]
