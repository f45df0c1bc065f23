"""Forward reasoning (Trees II): up to the root and back down to the goal, several heads.

Modules: :mod:`~onelayer.trees.forward.layout` (the R-F token layout), :mod:`~onelayer.trees.forward.architecture` (heads and parameters), :mod:`~onelayer.trees.forward.model`, :mod:`~onelayer.trees.forward.decoding`, :mod:`~onelayer.trees.forward.construction`
(Theorem 2), :mod:`~onelayer.trees.forward.dynamics` (head scalars and roles), :mod:`~onelayer.trees.forward.limits`
(the stored heads x depth sweep), :mod:`~onelayer.trees.forward.alternative_layouts` (the results under two
alternative readings of the layout) and :mod:`~onelayer.trees.forward.figures`, all importable from here (with
:mod:`~onelayer.trees.shared.data`, :mod:`~onelayer.trees.shared.embeddings` and :mod:`~onelayer.trees.shared.losses`). They import
:mod:`onelayer.trees.shared`, never :mod:`onelayer.trees.backward`.
"""

from ..shared import data, embeddings, losses
from . import alternative_layouts, architecture, construction, decoding, dynamics, figures, layout, limits, model

__all__ = ["alternative_layouts", "architecture", "construction", "data", "decoding", "dynamics", "embeddings", "figures", "layout",
           "limits", "losses", "model"]
