"""Backward reasoning (Trees I): from the goal up to the root, one single-head layer.

Modules: :mod:`~.layout` (R-B tokens), :mod:`~.model`, :mod:`~.construction`
(Theorem 1), :mod:`~.dynamics` (symmetry reduction and phases),
:mod:`~.generalization` (Theorem 4), :mod:`~.figures` and :mod:`~.batched`
(many runs in one call). They import :mod:`onelayer.trees.shared`, never
:mod:`onelayer.trees.forward`.
"""
