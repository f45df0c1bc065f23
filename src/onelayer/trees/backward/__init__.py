"""Backward reasoning (Trees I): from the goal up to the root, one single-head layer.

Modules: :mod:`~onelayer.trees.backward.layout` (R-B tokens), :mod:`~onelayer.trees.backward.model`, :mod:`~onelayer.trees.backward.construction`
(Theorem 1), :mod:`~onelayer.trees.backward.dynamics` (symmetry reduction and phases),
:mod:`~onelayer.trees.backward.generalization` (Theorem 4), :mod:`~onelayer.trees.backward.figures`, :mod:`~onelayer.trees.backward.batched`
(many runs in one call) and :mod:`~onelayer.trees.backward.seeds` (the verdicts as rates over seeds, a stored sweep), all importable from here (with :mod:`~onelayer.trees.shared.data`,
:mod:`~onelayer.trees.shared.embeddings` and :mod:`~onelayer.trees.shared.losses`). They import :mod:`onelayer.trees.shared`, never
:mod:`onelayer.trees.forward`.
"""

from ..shared import data, embeddings, losses
from . import batched, construction, dynamics, figures, generalization, layout, model, seeds

__all__ = ["batched", "construction", "data", "dynamics", "embeddings", "figures", "generalization", "layout", "losses",
           "model", "seeds"]
