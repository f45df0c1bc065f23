"""Random walks on a ring (Shi & Cao, NeurIPS 2025): data, model, training, theory.

A one-layer transformer ``f(X) = V X softmax(X~^T W x~_N)`` is trained by
gradient descent from zero to predict the next node of a walk on a ring of
``K`` nodes. For ``0 < p < 1`` it learns the Bayes rule (Theorem 3.1); for a
deterministic walk it stays at chance level (Theorem 4.1).

Core (shared by every walks chapter):

* :mod:`onelayer.walks.ring`: transition matrix, spectrum, sampling and
  enumeration of walks, Bayes rule.
* :mod:`onelayer.walks.data`: :class:`~onelayer.walks.data.TokenData`, a batch of
  one-hot token sequences with labels and weights (sample or exact
  population); the generic entry point for any vocabulary.
* :mod:`onelayer.walks.positions`: positional vectors ``"sin"`` | ``"exact"`` | ``"none"``.
* :mod:`onelayer.walks.losses`: ``"log"`` (the paper's) | ``"squared"`` | ``"cross_entropy"``.
* :mod:`onelayer.walks.prediction`: the smallest-index tie rule and accuracies.
* :mod:`onelayer.walks.options`: :class:`~onelayer.walks.options.ModelConfig`, the sizes and named options.
* :mod:`onelayer.walks.contractions`: contractions with one operation order for every entry.
* :mod:`onelayer.walks.model`: :class:`~onelayer.walks.model.WalkTransformer`,
  the fast exact simulation through ``q = W x~_N`` with closed-form gradients,
  and every named option (initialisation, normalisation, logit scale,
  residual, ReLU head, loss, reduction, dtype).
* :mod:`onelayer.walks.reference`: the literal full-``W`` autograd model.
* :mod:`onelayer.walks.theory`: closed forms from the proofs and the measured
  quantities of the theorems.
* :mod:`onelayer.walks.batched`: many members (data seeds, ``p``, step sizes)
  of one size trained in one batched call, through the model's own forward pass.

Chapters:

* :mod:`onelayer.walks.experiment`: the experiment set-up the chapters share (model, data, GD) and the Theorem 3.1
  experiments.
* :mod:`onelayer.walks.theorem41`: the Theorem 4.1 experiments and the escape
  from the symmetric state.
* :mod:`onelayer.walks.figures`: figures and the ring widget.
* :mod:`onelayer.walks.random_init`: Section 5.2, small Gaussian initialisation and its sweep.
* :mod:`onelayer.walks.kl`: the KL metric of Figures 6, 7 and 10 (our convention).
* :mod:`onelayer.walks.qa`: the two question-answering tasks of Section 6.
* :mod:`onelayer.walks.variations`: residual, scaling, no positions, lag 2, non-circulant chains.
* :mod:`onelayer.walks.scaling`: steps to converge and time per step against ``N`` and ``M``.
"""

from . import data, figures, losses, model, positions, prediction, reference, ring, experiment, theorem41, theory
from .data import TokenData, walk_data, walk_population
from .model import ModelConfig, WalkTransformer

__all__ = [
    "data",
    "figures",
    "losses",
    "model",
    "positions",
    "prediction",
    "reference",
    "ring",
    "experiment",
    "theorem41",
    "theory",
    "TokenData",
    "walk_data",
    "walk_population",
    "ModelConfig",
    "WalkTransformer",
]
