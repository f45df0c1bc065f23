"""Path-finding in rooted trees with a chain of thought (Yang, Huang, Liang, Chi, NeurIPS 2025).

The paper's displayed equations were not available to us; the token layouts,
models and constructions here are a *reconstruction* consistent with the
published facts (see ``book/trees/index.md``). Every reconstructed choice is an
explicit, named option.

The package has three parts; :mod:`~onelayer.trees.backward` and
:mod:`~onelayer.trees.forward` have the same module names and never import
each other, both import :mod:`~onelayer.trees.shared`.

Shared (:mod:`onelayer.trees.shared`):

* :mod:`~onelayer.trees.shared.data`: rooted trees (perfect binary training trees,
  random test trees), goals and goal-to-root paths, padded batches and the loss normalisation of both models.
* :mod:`~onelayer.trees.shared.embeddings`: node embeddings ``A`` (one-hot,
  orthonormal, linearly independent) and the Lemma 1 matrix ``B``.
* :mod:`~onelayer.trees.shared.records`: reading recorded runs.

Backward reasoning, Trees I (:mod:`onelayer.trees.backward`):

* :mod:`~onelayer.trees.backward.layout`: the R-B token layout, batched.
* :mod:`~onelayer.trees.backward.model`: the single-head model, its loss,
  teacher-forced training and greedy decoding.
* :mod:`~onelayer.trees.backward.construction`: Theorem 1's scaled construction.
* :mod:`~onelayer.trees.backward.dynamics`: the reduction ``H = h1 I + h2 (11^T - I)``,
  exact population gradient descent on ``(h1, h2)`` and the phase boundaries.

Forward reasoning, Trees II (:mod:`onelayer.trees.forward`):

* :mod:`~onelayer.trees.forward.layout`: the R-F token layout (two nodes and a stage flag).
* :mod:`~onelayer.trees.forward.model`: the multi-head model (structured or full heads), training, decoding.
* :mod:`~onelayer.trees.forward.construction`: Theorem 2's construction and its margins.
* :mod:`~onelayer.trees.forward.dynamics`: the symmetry-reduced head scalars and the roles the heads take.

Only the papers' objects live here (data, layouts, models, losses, GD, constructions, closed forms); they import
torch, numpy, scipy, :mod:`onelayer.training` and :mod:`onelayer.validation` only. The experiments that run them
over seeds, sizes and readings are :mod:`onelayer.studies.trees`; their drawings are :mod:`onelayer.figures`.
"""
