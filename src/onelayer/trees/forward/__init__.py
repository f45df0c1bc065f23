"""Forward reasoning (Trees II): up to the root and back down to the goal, several heads.

Modules: :mod:`~onelayer.trees.forward.layout` (the R-F token layout),
:mod:`~onelayer.trees.forward.model` (heads and parameters, the forward pass, loss and training),
:mod:`~onelayer.trees.forward.decoding`, :mod:`~onelayer.trees.forward.construction` (Theorem 2) and
:mod:`~onelayer.trees.forward.dynamics` (head scalars and roles). They import :mod:`onelayer.trees.shared`, never
:mod:`onelayer.trees.backward`. Import them by their own names; this package re-exports nothing.
"""
