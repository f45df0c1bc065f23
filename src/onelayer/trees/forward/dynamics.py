"""Head specialization in the forward model: symmetry-reduced scalars, role metrics, phases.

Symmetry reduction (reconstruction, spec section 6.2). Labels are uniformly
random and (in the GD analysis) the embeddings orthonormal, so from zero
initialisation the node blocks stay of the form
``A^T U_l A = u_{l,1} I + u_{l,2} (11^T - I)`` while each ``V_l`` is a free
``2 x 2`` matrix: twelve scalars (:data:`SCALAR_NAMES`) describe the whole
two-head model. Under mini-batch SGD the reduction holds only approximately;
:func:`symmetry_residual` measures how far.

Roles. Each head's *value* map is fixed in the structured model; what it
learns is *where to look*. :func:`role_metrics` measures, at every step
type, (i) the attention a head puts on its **traversal target** (the token
whose swapped node blocks are the next token's) and (ii) the attention it
puts on tokens carrying the **next stage flag**. A head "took" the traversal
role once (i) exceeds 1/2 at every backward and forward step on average,
and the stage role once (ii) exceeds 1/2 at every step type including the
turn (:func:`role_events`).

Phases. :func:`phase_times` reads, from a recorded run, the first step at
which the teacher-forced accuracy of each step type (backward, turning,
forward) reaches 1/2, and orders them.
"""

from __future__ import annotations

import numpy as np
import torch

from ...validation import check_float
from ..shared.embeddings import check_embeddings
from ..shared.records import first_step
from .construction import _two_heads
from .layout import STEP_TYPES, ForwardBatch
from .model import ForwardArchitecture, attention

__all__ = [
    "SCALAR_NAMES",
    "reduced_scalars",
    "symmetry_residual",
    "sign_table",
    "ROLE_METRICS",
    "role_metrics",
    "role_events",
    "phase_times",
    "specialization_statement",
]

_STAGES = ("b", "f")
#: Names of the twelve symmetry-reduced scalars of the two-head model, in order.
SCALAR_NAMES = tuple(
    [f"u{l},{k}" for l in (1, 2) for k in (1, 2)]
    + [f"V{l}[{a},{b}]" for l in (1, 2) for a in _STAGES for b in _STAGES]
)


def _node_scores(U: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    return A.T @ U.to(A.dtype) @ A


def reduced_scalars(params, A: torch.Tensor) -> np.ndarray:
    """The twelve scalars of :data:`SCALAR_NAMES`: mean diagonal / off-diagonal of ``A^T U_l A`` and the entries of ``V_l``."""
    return _reduced_scalars(params, check_embeddings(A))


def _reduced_scalars(params, A: torch.Tensor) -> np.ndarray:
    """:func:`reduced_scalars` of an ``A`` its caller has checked."""
    out = []
    for l in (1, 2):
        H = _node_scores(params[f"U{l}"], A)
        S = H.shape[0]
        tr = torch.diagonal(H).sum()
        out += [float(tr / S), float((H.sum() - tr) / (S * (S - 1)))]
    for l in (1, 2):
        out += [float(v) for v in params[f"V{l}"].reshape(-1)]
    return np.asarray(out)


def symmetry_residual(params, A: torch.Tensor) -> float:
    """Largest relative distance of ``A^T U_l A`` (``l = 1, 2``) from ``u_{l,1} I + u_{l,2}(11^T - I)`` (Frobenius)."""
    return _symmetry_residual(params, check_embeddings(A))


def _symmetry_residual(params, A: torch.Tensor) -> float:
    """:func:`symmetry_residual` of an ``A`` its caller has checked."""
    worst = 0.0
    for l in (1, 2):
        H = _node_scores(params[f"U{l}"], A)
        S = H.shape[0]
        eye = torch.eye(S, dtype=H.dtype)
        d1 = torch.diagonal(H).mean()
        d2 = (H.sum() - torch.diagonal(H).sum()) / (S * (S - 1))
        sym = d1 * eye + d2 * (1 - eye)
        norm = float(torch.linalg.norm(H))
        if norm > 0:
            worst = max(worst, float(torch.linalg.norm(H - sym)) / norm)
    return worst


def sign_table(params, A: torch.Tensor, *, tol: float = 0.05) -> list[dict]:
    """Learned scalars beside the Theorem 2 construction (unit scales): value, sign, construction sign, agreement.

    A learned value with ``|value| <= tol * max|scalars|`` counts as sign ``0``.
    Where the construction has a ``0`` the entry is reported as ``"free"``:
    the construction's margins do not depend on its sign.
    """
    tol = check_float("tol", tol, low=0.0, high=1.0)
    A = check_embeddings(A)
    learned = _reduced_scalars(params, A)
    ref = _reduced_scalars(_two_heads(A, 1.0, 1.0, 1.0), A)
    scale = np.abs(learned).max() or 1.0
    rows = []
    for name, v, r in zip(SCALAR_NAMES, learned, ref):
        s = 0 if abs(v) <= tol * scale else int(np.sign(v))
        rs = int(np.sign(round(r, 12)))
        rows.append({"scalar": name, "learned": float(v), "sign": s, "construction": float(r),
                     "construction_sign": rs, "agree": "free" if rs == 0 else ("yes" if s == rs else "no")})
    return rows


#: Names of the columns returned by :func:`role_metrics` (head l, metric, step type).
ROLE_METRICS = tuple(
    f"head{l} {metric} {t}" for l in (1, 2) for metric in ("traversal", "stage") for t in STEP_TYPES[:3]
)


def role_metrics(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch) -> np.ndarray:
    """Mean teacher-forced attention of heads 1, 2 on their traversal target and on next-stage tokens, per step type.

    Returns an array in the order of :data:`ROLE_METRICS` (``nan`` for a step
    type absent from ``batch``). Needs a model with (at least) two heads.
    """
    if arch.heads < 2:
        raise ValueError("role_metrics needs at least two heads")
    with torch.no_grad():
        w = attention(params, arch, A, batch)[:2]  # (2, batch, K, L)
    swap_target = (batch.first[:, None, :] == batch.target_second[:, :, None]) & (
        batch.second[:, None, :] == batch.target_first[:, :, None]
    )
    stage_target = batch.stage[:, None, :] == batch.target_stage[:, :, None]
    out = []
    for l in range(2):
        for mask in (swap_target, stage_target):
            mass = (w[l] * mask).sum(-1)  # (batch, K)
            for code in range(3):
                sel = (batch.step_type == code) & batch.target_mask
                out.append(float(mass[sel].mean()) if sel.any() else float("nan"))
    return np.asarray(out)


def _column(metrics: np.ndarray, head: int, metric: str) -> np.ndarray:
    idx = [ROLE_METRICS.index(f"head{head} {metric} {t}") for t in STEP_TYPES[:3]]
    return np.asarray(metrics)[:, idx]


def role_events(steps, metrics, *, level: float = 0.5) -> dict[str, float]:
    """When each head took each role, from recorded :func:`role_metrics` (rows indexed by ``steps``).

    ``"head{l} traversal"``: first step at which head ``l``'s mass on its
    traversal target exceeds ``level`` at both the backward and the forward
    steps. ``"head{l} stage"``: first step at which its mass on next-stage
    tokens exceeds ``level`` at every step type (backward, turning, forward).
    ``nan`` if never.
    """
    level = check_float("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    steps = np.asarray(steps)
    metrics = np.asarray(metrics, dtype=np.float64)
    if metrics.ndim != 2 or metrics.shape != (steps.size, len(ROLE_METRICS)):
        raise ValueError(f"metrics must have shape (len(steps), {len(ROLE_METRICS)}), got {metrics.shape}")
    out = {}
    for l in (1, 2):
        trav = _column(metrics, l, "traversal")
        stage = _column(metrics, l, "stage")
        out[f"head{l} traversal"] = first_step(steps, (trav[:, 0] > level) & (trav[:, 2] > level))
        out[f"head{l} stage"] = first_step(steps, np.all(stage > level, axis=1))
    return out


def phase_times(steps, accuracy, *, level: float = 0.5) -> dict[str, float]:
    """First recorded step at which each step type's accuracy reaches ``level``.

    ``accuracy`` has shape ``(len(steps), 3)``: columns backward, turning,
    forward (teacher-forced). Returns ``{"backward": t, "turning": t,
    "forward": t, "order": "forward < backward < turning"}`` (``nan`` if
    never; the order lists the types by time, ties in column order).
    """
    level = check_float("level", level, low=0.0, high=1.0, low_open=True)
    steps = np.asarray(steps)
    acc = np.asarray(accuracy, dtype=np.float64)
    if acc.shape != (steps.size, 3):
        raise ValueError(f"accuracy must have shape (len(steps), 3), got {acc.shape}")
    out: dict = {name: first_step(steps, acc[:, i] >= level) for i, name in enumerate(STEP_TYPES[:3])}
    reached = sorted((out[n], i, n) for i, n in enumerate(STEP_TYPES[:3]) if np.isfinite(out[n]))
    out["order"] = " < ".join(n for _, _, n in reached)
    return out


def specialization_statement(events: dict[str, float], phases: dict[str, float], final_metrics) -> str:
    """One or two sentences, built from measured quantities, saying which head took which role and when."""
    final = np.asarray(final_metrics, dtype=np.float64)
    if final.shape != (len(ROLE_METRICS),):
        raise ValueError(f"final_metrics must have shape ({len(ROLE_METRICS)},)")

    def when(t):
        return f"from step {int(t)}" if np.isfinite(t) else "never within the run"

    def mean(head, metric):
        return float(np.nanmean(_column(final[None], head, metric)))

    roles = {}
    for l in (1, 2):
        roles[l] = "traversal" if mean(l, "traversal") >= mean(l, "stage") else "stage control"
    parts = [
        f"Head 1 took the {roles[1]} role (final mean attention on its traversal target "
        f"{mean(1, 'traversal'):.3f}, on next-stage tokens {mean(1, 'stage'):.3f}); it passed the traversal "
        f"threshold {when(events['head1 traversal'])}.",
        f"Head 2 took the {roles[2]} role (final mean attention on next-stage tokens {mean(2, 'stage'):.3f}, "
        f"on the traversal target {mean(2, 'traversal'):.3f}); it passed the stage threshold "
        f"{when(events['head2 stage'])}.",
        f"Step types reached accuracy 1/2 in the order {phases['order'] or 'none'}.",
    ]
    return " ".join(parts)
