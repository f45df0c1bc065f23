"""Figures: drawing code of the book's chapters (matplotlib through :mod:`onelayer.plots`), one module per part.

:mod:`~onelayer.figures.trees_backward`, :mod:`~onelayer.figures.trees_forward` and
:mod:`~onelayer.figures.trees_scaling` draw what :mod:`onelayer.trees` and :mod:`onelayer.studies.trees` compute;
the chapter modules (:mod:`onelayer.chapters`) call them.
"""
