"""Backward reasoning (Trees I): from the goal up to the root, one single-head layer.

Modules: :mod:`~onelayer.trees.backward.layout` (R-B tokens), :mod:`~onelayer.trees.backward.model` (the model, its
loss, teacher-forced training and greedy decoding), :mod:`~onelayer.trees.backward.construction` (Theorem 1 and the
margin of Theorem 4) and :mod:`~onelayer.trees.backward.dynamics` (symmetry reduction, population recursion and
phases). They import :mod:`onelayer.trees.shared`, never :mod:`onelayer.trees.forward`. Import them by their own
names; this package re-exports nothing.
"""
