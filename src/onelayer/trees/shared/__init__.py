"""What both trees parts use: trees, embeddings, loss options and batched tree sampling.

* :mod:`onelayer.trees.shared.data`: rooted trees (perfect binary training trees,
  random test trees), goals and goal-to-root paths, the random draws behind a batch, padded batches and
  :class:`~onelayer.trees.shared.data.LossOptions`, the normalisation of the squared loss of both models.
* :mod:`onelayer.trees.shared.embeddings`: node embeddings ``A`` (one-hot,
  orthonormal, linearly independent) and the Lemma 1 matrix ``B``.
* :mod:`onelayer.trees.shared.records`: reading recorded runs (first step at which a condition holds).

Nothing here imports :mod:`onelayer.trees.backward` or :mod:`onelayer.trees.forward`.
"""
