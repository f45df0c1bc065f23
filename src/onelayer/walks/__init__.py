"""Random walks on a ring (Shi & Cao, NeurIPS 2025): the paper's objects, and nothing else.

A one-layer transformer ``f(X) = V X softmax(X~^T W x~_N)`` is trained by
gradient descent from zero to predict the next node of a walk on a ring of
``K`` nodes. For ``0 < p < 1`` it learns the Bayes rule (Theorem 3.1); for a
deterministic walk it stays at chance level (Theorem 4.1).

* :mod:`onelayer.walks.ring`: transition matrix, spectrum, sampling and
  enumeration of walks, Bayes rule.
* :mod:`onelayer.walks.data`: :class:`~onelayer.walks.data.TokenData`, a batch of
  one-hot token sequences with labels and weights (sample or exact
  population); the generic entry point for any vocabulary.
* :mod:`onelayer.walks.positions`: positional vectors ``"sin"`` | ``"exact"`` | ``"none"``.
* :mod:`onelayer.walks.model`: eq. 2.1 written literally (:func:`~onelayer.walks.model.literal_forward`), the
  loss, :class:`~onelayer.walks.model.ModelConfig` (sizes and named options) and
  :class:`~onelayer.walks.model.WalkTransformer`, the fast exact form through ``q = W x~_N`` with closed-form
  gradients and the GD step.
* :mod:`onelayer.walks.prediction`: the smallest-index tie rule and accuracies.
* :mod:`onelayer.walks.theory`: closed forms from the proofs (Lemmas C.1, C.5, D.1, the reduced value
  dynamics) and the quantities the theorems are about.
* :mod:`onelayer.walks.qa`: the two question-answering tasks of Section 6 (vocabulary, sentences, data).

These modules import torch, numpy and the shared floor (``onelayer.validation``, ``onelayer.seeding``,
``onelayer.training``), never the studies or the book (``tests/test_floors.py``). The experiments are
:mod:`onelayer.studies.walks`.
"""
