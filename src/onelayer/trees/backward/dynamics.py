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

Phase boundaries, measured from a recorded run. The paper's proof outline (as
described in the public review discussion) splits the training of ``H`` into:
phase I, the diagonal increases while the off-diagonal stays bounded; phase
II, the diagonal increases and the off-diagonal strictly decreases; then the
loss tends to zero. The exact definitions of ``T_1, T_2`` were not visible to
us, so :func:`detect_phases` measures several explicit, named events:

* ``T_offdiag_decreasing``: first recorded step from which ``h2`` never
  increases again (start of the paper's phase II by its sign definition);
* ``T_attention``: first step at which the mean attention on the correct edge
  exceeds 1/2 (end of the near-uniform-attention phase);
* ``T_loss``: first step at which the loss is below ``loss_fraction`` times
  its initial value (entry into the slow late regime).

It also reports whether ``h1`` increased at every recorded step, whether the
loss decreased at every recorded step, and the largest ``|h2|`` before
``T_attention``. :func:`loglog_slope` fits the late-time rate.
"""

from __future__ import annotations

import numpy as np
import torch

from ...training import History, train
from ...validation import check_float, check_int
from ..shared.embeddings import one_hot_embeddings
from ..shared.data import LossOptions
from ..shared.records import first_step
from .layout import BackwardBatch, perfect_tree_batch
from .model import correct_key_weight, loss, teacher_forced_accuracy

__all__ = [
    "symmetric_part",
    "symmetric_matrix",
    "symmetry_residual",
    "h_stats",
    "canonical_batch",
    "population_loss",
    "population_gd",
    "h_records",
    "detect_phases",
    "loglog_slope",
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


def h_stats(H) -> dict[str, float]:
    """Summary of ``H``: ``h1``, ``h2``, the spread (std) of diagonal and off-diagonal entries, the residual."""
    H = _square("H", H).to(torch.float64)
    S = H.shape[0]
    diag = torch.diagonal(H)
    off = H[~torch.eye(S, dtype=torch.bool)]
    h1, h2 = symmetric_part(H)
    return {
        "h1": h1,
        "h2": h2,
        "diag_std": float(diag.std()),
        "off_std": float(off.std()),
        "residual": symmetry_residual(H),
    }


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



def h_records(A: torch.Tensor, eval_batch: BackwardBatch | None = None) -> dict:
    """Record functions for :func:`onelayer.training.train`: the :func:`h_stats` of ``H = A^T B A``.

    With ``eval_batch``, also ``"correct_weight"``: the mean teacher-forced
    attention on the correct edge over that fixed batch.
    """
    keys = ("h1", "h2", "diag_std", "off_std", "residual")

    def stat(name):
        return lambda p: h_stats(A.T @ p["B"] @ A)[name]

    out = {k: stat(k) for k in keys}
    if eval_batch is not None:
        out["correct_weight"] = lambda p: float(correct_key_weight(p["B"], A, eval_batch)[eval_batch.target_mask].mean())
    return out


def detect_phases(steps, h1, h2, loss, correct_weight, *, loss_fraction: float = 1e-2) -> dict[str, float | bool]:
    """Measure the phase boundaries of one run (arrays indexed by recorded step).

    Parameters
    ----------
    steps, h1, h2, loss, correct_weight:
        Recorded steps and the matching values (same length, at least 2).
    loss_fraction:
        ``T_loss`` is the first step with ``loss <= loss_fraction * loss[0]`` (in ``(0, 1)``).
    """
    loss_fraction = check_float("loss_fraction", loss_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    arrays = [np.asarray(a, dtype=np.float64) for a in (steps, h1, h2, loss, correct_weight)]
    n = arrays[0].size
    if n < 2 or any(a.shape != (n,) for a in arrays):
        raise ValueError("steps, h1, h2, loss and correct_weight must be 1-D arrays of one common length >= 2")
    steps, h1, h2, loss, cw = arrays
    d2 = np.diff(h2)
    rising = np.flatnonzero(d2 > 0)
    t_off = float(steps[0]) if rising.size == 0 else (float(steps[rising[-1] + 1]) if rising[-1] + 1 < n - 1 else float("nan"))
    t_att = first_step(steps, cw > 0.5)
    t_loss = first_step(steps, loss <= loss_fraction * loss[0])
    before = steps <= (t_att if np.isfinite(t_att) else steps[-1])
    return {
        "T_offdiag_decreasing": t_off,
        "T_attention": t_att,
        "T_loss": t_loss,
        "h1_increasing": bool(np.all(np.diff(h1) > 0)),
        "loss_decreasing": bool(np.all(np.diff(loss) < 0)),
        "max_abs_h2_phase1": float(np.abs(h2[before]).max()),
    }


def loglog_slope(t, y, *, t_min: float | None = None, t_max: float | None = None) -> float:
    """Least-squares slope of ``log y`` against ``log t`` on ``t_min <= t <= t_max`` (``t, y > 0``)."""
    t = np.asarray(t, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if t.shape != y.shape:
        raise ValueError("t and y must have the same shape")
    keep = (t > 0) & (y > 0)
    if t_min is not None:
        keep &= t >= t_min
    if t_max is not None:
        keep &= t <= t_max
    if keep.sum() < 2:
        raise ValueError("need at least 2 positive points inside [t_min, t_max] to fit a slope")
    return float(np.polyfit(np.log(t[keep]), np.log(y[keep]), 1)[0])
