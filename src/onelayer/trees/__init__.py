"""Path-finding in rooted trees with a chain of thought (Yang, Huang, Liang, Chi, NeurIPS 2025).

The paper's displayed equations were not available to us; the token layouts,
models and constructions here are a *reconstruction* consistent with the
published facts (see ``book/trees/index.md``). Every reconstructed choice is an
explicit, named option.

Shared by both trees parts:

* :mod:`onelayer.trees.data`: rooted trees (perfect binary training trees,
  random test trees), goals and goal-to-root paths.
* :mod:`onelayer.trees.embeddings`: node embeddings ``A`` (one-hot,
  orthonormal, linearly independent) and the Lemma 1 matrix ``B``.

Backward reasoning (Trees I):

* :mod:`onelayer.trees.backward_layout`: the R-B token layout, batched.
* :mod:`onelayer.trees.backward_model`: the single-head model, its loss,
  teacher-forced training and greedy decoding.
* :mod:`onelayer.trees.construction`: Theorem 1's scaled construction.
* :mod:`onelayer.trees.symmetry`: the reduction ``H = h1 I + h2 (11^T - I)``
  and exact population gradient descent on ``(h1, h2)``.
* :mod:`onelayer.trees.phases`: phase boundaries of the training dynamics.
* :mod:`onelayer.trees.backward_figures`: tree drawings, attention maps, widgets.
* :mod:`onelayer.trees.backward_generalization`: evaluation on random test trees (Theorem 4).
* :mod:`onelayer.trees.backward_sweep`: many seeds or step sizes of the backward trainer in one batched call.

Forward reasoning (Trees II):

* :mod:`onelayer.trees.layout_forward`: the R-F token layout (two nodes and a stage flag).
* :mod:`onelayer.trees.model_forward`: the multi-head model (structured or full heads), training, decoding.
* :mod:`onelayer.trees.construction_forward`: Theorem 2's construction and its margins.
* :mod:`onelayer.trees.heads`: the symmetry-reduced head scalars and the roles the heads take.
* :mod:`onelayer.trees.sweep_forward`: the heads x depth sweep of the limits chapter.
* :mod:`onelayer.trees.figures_forward`: figures of the forward chapters.

Both: :mod:`onelayer.trees.lab` (the interactive lab),
:mod:`onelayer.trees.scaling` (steps to converge and time per step against depth and number of labels) and
:mod:`onelayer.trees.registry` (figures reproducible with ``python -m onelayer``).
"""

from . import data, embeddings

__all__ = ["data", "embeddings"]
