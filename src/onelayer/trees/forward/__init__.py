"""Forward reasoning (Trees II): up to the root and back down to the goal, several heads.

Modules: :mod:`~.layout` (R-F tokens), :mod:`~.model`, :mod:`~.construction`
(Theorem 2), :mod:`~.dynamics` (head scalars and roles), :mod:`~.limits`
(the stored heads x depth sweep) and :mod:`~.figures`. They import
:mod:`onelayer.trees.shared`, never :mod:`onelayer.trees.backward`.
"""
