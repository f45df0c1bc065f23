"""The symmetry reduction of the backward dynamics: ``H = A^T B A = h1 I + h2 (11^T - I)``.

Why it holds (a reconstruction of what the paper tracks as ``H_{1,1}`` and
``H_{1,2}``). Under the training distribution the labels are a uniformly
random injective map, so the population loss satisfies
``L(H) = L(P^T H P)`` for every permutation matrix ``P``. At an ``H`` that
commutes with all permutations, i.e. ``H = h1 I + h2 (11^T - I)``, the
population gradient therefore also commutes with them: it is the projection

    Pi(G) = (tr G / S) I + (sum_{u != v} G_uv / (S (S - 1))) (11^T - I)

of the gradient ``G`` of *one* labelled tree. With orthonormal embeddings,
gradient descent on ``B`` moves ``H`` by ``-eta`` times the gradient in ``H``,
so from zero initialisation ``H`` stays in the two-dimensional span and the
whole trajectory is the pair ``(h1, h2)``:

    h1 <- h1 - eta / S * dl/dh1,    h2 <- h2 - eta / (S (S - 1)) * dl/dh2,

where ``l(h1, h2)`` is the loss of one (any) perfect tree with a leaf goal:
by the symmetry every labelled perfect tree with a leaf goal has the same
loss. :func:`population_gd` runs exactly this recursion (population gradient
descent, no sampling noise).

The phases measured on recorded runs are :mod:`onelayer.studies.trees.analysis`'s.
"""

from __future__ import annotations

import numpy as np
import torch

from ...training import History, train
from ...validation import check_int
from ..shared.embeddings import one_hot_embeddings
from ..shared.data import LossOptions
from .layout import BackwardBatch, perfect_tree_batch
from .model import correct_key_weight, loss, teacher_forced_accuracy

__all__ = [
    "symmetric_part",
    "symmetric_matrix",
    "symmetry_residual",
    "canonical_batch",
    "population_loss",
    "population_gd",
]


def _square(name: str, H) -> torch.Tensor:
    H = torch.as_tensor(H)
    if H.dim() != 2 or H.shape[0] != H.shape[1] or H.shape[0] < 2:
        raise ValueError(f"{name} must be a square matrix of size >= 2, got shape {tuple(H.shape)}")
    return H


def symmetric_part(H) -> tuple[float, float]:
    """``(h1, h2)``: the mean diagonal and mean off-diagonal entry of ``H`` (the projection coefficients)."""
    H = _square("H", H).to(torch.float64)
    S = H.shape[0]
    tr = torch.diagonal(H).sum()
    return float(tr / S), float((H.sum() - tr) / (S * (S - 1)))


def symmetric_matrix(h1: float, h2: float, S: int, dtype=torch.float64) -> torch.Tensor:
    """``h1 I + h2 (11^T - I)`` of size ``S``."""
    S = check_int("S", S, low=2)
    eye = torch.eye(S, dtype=dtype)
    return h1 * eye + h2 * (torch.ones(S, S, dtype=dtype) - eye)


def symmetry_residual(H) -> float:
    """``||H - Pi(H)||_F / ||H||_F``: how far ``H`` is from the span of ``I`` and ``11^T - I`` (0 for ``H = 0``)."""
    H = _square("H", H).to(torch.float64)
    h1, h2 = symmetric_part(H)
    norm = torch.linalg.norm(H)
    if norm == 0:
        return 0.0
    return float(torch.linalg.norm(H - symmetric_matrix(h1, h2, H.shape[0])) / norm)


def canonical_batch(m: int, S: int, *, root_token: bool = True, eos: bool = False) -> BackwardBatch:
    """One perfect tree of depth ``m`` with a leaf goal: by symmetry it carries the whole population loss."""
    return perfect_tree_batch(m, S, 1, np.random.default_rng(0), root_token=root_token, eos=eos, shuffle=False)


def population_loss(h1, h2, m: int, S: int, options: LossOptions = LossOptions(), *, root_token: bool = True, eos: bool = False):
    """Exact population loss at ``H = h1 I + h2 (11^T - I)`` (orthonormal embeddings), a tensor if ``h1`` is."""
    batch = canonical_batch(m, S, root_token=root_token, eos=eos)
    h1 = torch.as_tensor(h1, dtype=torch.float64)
    h2 = torch.as_tensor(h2, dtype=torch.float64)
    eye = torch.eye(S, dtype=torch.float64)
    H = h1 * eye + h2 * (1 - eye)
    return loss(H, one_hot_embeddings(S), batch, options)


def population_gd(
    m: int,
    S: int,
    *,
    steps: int,
    lr: float,
    options: LossOptions = LossOptions(),
    root_token: bool = True,
    eos: bool = False,
    record_every: int = 1,
    record_at=None,
    progress: bool = False,
) -> History:
    """Exact population gradient descent on ``B`` from zero, run in the reduced coordinates ``(h1, h2)``.

    Returns a :class:`onelayer.training.History` with parameters ``h1``,
    ``h2`` and the records ``"h1"``, ``"h2"``, ``"margin"`` (``h1 - h2``), ``"correct_weight"``
    (mean attention on the correct edge) and ``"accuracy"`` (teacher-forced).
    Valid for orthonormal embeddings (the reduction does not depend on which).
    """
    m = check_int("m", m, low=1, high=12)
    S = check_int("S", S, low=2 ** (m + 1) - 1)
    batch = canonical_batch(m, S, root_token=root_token, eos=eos)
    A = one_hot_embeddings(S)
    eye = torch.eye(S, dtype=torch.float64)
    off = 1 - eye

    def H_of(p):
        return p["h1"] * eye + p["h2"] * off

    def loss_fn(p):
        return loss(H_of(p), A, batch, options)

    record = {
        "h1": lambda p: float(p["h1"]),
        "h2": lambda p: float(p["h2"]),
        "margin": lambda p: float(p["h1"] - p["h2"]),
        "correct_weight": lambda p: float(correct_key_weight(H_of(p), A, batch).mean()),
        "accuracy": lambda p: teacher_forced_accuracy(H_of(p), A, batch),
    }
    params = {"h1": torch.zeros((), dtype=torch.float64), "h2": torch.zeros((), dtype=torch.float64)}
    lrs = {"h1": lr / S, "h2": lr / (S * (S - 1))}
    return train(params, loss_fn, steps=steps, lr=lrs, record=record, record_every=record_every,
                 record_at=record_at, progress=progress, desc="population GD")


