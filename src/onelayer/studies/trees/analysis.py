"""Readings of the trees models' runs and constructions: what the chapters and studies measure, above the papers.

Backward (Trees I). :func:`h_stats` summarises ``H = A^T B A`` against its symmetric form
(:func:`onelayer.trees.backward.dynamics.symmetric_part`), :func:`h_records` records it during training.
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

Forward (Trees II). :func:`tracked_training` trains the two-head model and records what the specialization analysis
of :mod:`onelayer.trees.forward.dynamics` reads; :func:`scale_grid` evaluates the Theorem 2 construction over a grid of scales;
:func:`stage_entry_search` changes one stage-block entry of a construction (:func:`with_stage_entry`) and counts the
chains it still gets right.
"""

from __future__ import annotations

import numpy as np
import torch

from ...training import History
from ...validation import check_choice, check_float, check_int
from ...trees.backward.dynamics import _square, symmetric_part, symmetry_residual
from ...trees.backward.layout import BackwardBatch
from ...trees.backward.model import correct_key_weight
from ...trees.forward.construction import _one_full_head, _scales, _two_heads
from ...trees.forward.decoding import accuracy_by_type, greedy_decode, teacher_forced_correct
from ...trees.forward.dynamics import SCALAR_NAMES, _reduced_scalars, _symmetry_residual, role_metrics
from ...trees.forward.layout import STEP_TYPES, ForwardBatch, perfect_forward_batch
from ...trees.forward.model import full_heads, loss, train_forward, two_head
from ...trees.shared.data import LossOptions
from ...trees.shared.embeddings import check_embeddings
from ...trees.shared.records import first_step

__all__ = ["h_stats", "h_records", "detect_phases", "loglog_slope", "scale_grid", "STAGE_ENTRIES", "with_stage_entry",
           "stage_entry_search", "tracked_training", "curve_rows"]


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


def scale_grid(
    A: torch.Tensor,
    batch: ForwardBatch,
    scales,
    *,
    lam: float = 2.0,
    mu: float = 1.0,
    kappa: float = 1.0,
) -> list[dict]:
    """Loss and accuracies of the construction ``c * (lam, mu, kappa)`` for each ``c`` in ``scales``.

    Each row holds the scale, the teacher-forced loss (mean with 1/2), the
    step, chain and whole-path accuracies of greedy decoding on ``batch``.
    """
    scales = [check_float("scales[i]", c, low=0.0, low_open=True) for c in np.atleast_1d(scales).tolist()]
    A = check_embeddings(A)
    _scales(lam, mu, kappa)
    rows = []
    arch = two_head()
    for c in scales:
        p = _two_heads(A, c * lam, c * mu, c * kappa)
        with torch.no_grad():
            value = float(loss(p, arch, A, batch))
        dec = greedy_decode(p, arch, A, batch)
        rows.append(
            {"scale": c, "loss": value, "step_accuracy": dec.step_accuracy,
             "chain_accuracy": dec.cot_accuracy, "path_accuracy": dec.path_accuracy}
        )
    return rows


#: The stage-block entries of the two constructions, ``(construction, matrix, key stage, query stage)``: the four
#: entries of ``V_1`` and of ``V_2`` (two heads) and the four of the key-query stage block of the full head
#: (:func:`~onelayer.trees.forward.construction.full_single_head_construction`, the same ``V_1``).
STAGE_ENTRIES = tuple(
    [("two heads", m, k, q) for m in ("V1", "V2") for k in "bf" for q in "bf"]
    + [("one full head", "WKQ1", k, q) for k in "bf" for q in "bf"]
)


def with_stage_entry(A: torch.Tensor, construction: str, matrix: str, key: str, query: str, value: float, *,
                     lam: float, mu: float, kappa: float) -> dict[str, torch.Tensor]:
    """The construction ``construction`` (``"two heads"`` or ``"one full head"``) at ``(lam, mu, kappa)`` with one
    stage-block entry, ``matrix[key, query]`` (stages ``"b"``/``"f"``, key row, query column), set to ``value``."""
    A = check_embeddings(A)
    check_choice("construction", construction, ("two heads", "one full head"))
    check_choice("matrix", matrix, ("V1", "V2") if construction == "two heads" else ("WKQ1",))
    check_choice("key", key, ("b", "f"))
    check_choice("query", query, ("b", "f"))
    return _with_stage_entry(A, construction, matrix, key, query, check_float("value", value), *_scales(lam, mu, kappa))


def _with_stage_entry(A, construction, matrix, key, query, value, lam, mu, kappa):
    """:func:`with_stage_entry` with arguments its caller has checked."""
    if construction == "two heads":
        params = _two_heads(A, lam, mu, kappa)  # fresh tensors: the entry is set in place
        params[matrix][(key == "f") * 1, (query == "f") * 1] = value
    else:
        params = _one_full_head(A, lam, mu)
        d = A.shape[0]
        params[matrix][2 * d + (key == "f"), 2 * d + (query == "f")] = value
    return params


def stage_entry_search(A: torch.Tensor, batch: ForwardBatch, *, lam: float, mu: float, kappa: float,
                       multiples=(-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)) -> list[dict]:
    """Change one stage-block entry of a construction and count the chains it gets right on ``batch``.

    For every entry of :data:`STAGE_ENTRIES` and every ``c`` in ``multiples``, the entry is set to ``c`` times its
    matrix's scale (``mu`` for ``V_1`` and the full head's key-query block, ``kappa`` for ``V_2``) and the
    teacher-forced chains of ``batch`` are checked step by step: a chain right at every step is also what greedy
    decoding writes. Returns one dict per (entry, multiple): ``construction, matrix, key, query, multiple, value,
    original`` (whether this is the construction's own value), ``chains_right`` (count), ``chains``, ``steps_right``,
    ``steps``.
    """
    A = check_embeddings(A)
    if not isinstance(batch, ForwardBatch):
        raise TypeError("batch must be a ForwardBatch")
    lam, mu, kappa = _scales(lam, mu, kappa)
    multiples = [check_float("multiples", c) for c in multiples]
    if not multiples:
        raise ValueError("multiples must not be empty")
    archs = {"two heads": two_head(), "one full head": full_heads(1)}
    base = {"two heads": _two_heads(A, lam, mu, kappa), "one full head": _one_full_head(A, lam, mu)}
    d = A.shape[0]
    rows = []
    for name, matrix, key, query in STAGE_ENTRIES:
        scale = kappa if matrix == "V2" else mu
        i, j = (key == "f") * 1, (query == "f") * 1
        original = float(base[name][matrix][i, j] if name == "two heads" else base[name][matrix][2 * d + i, 2 * d + j])
        for c in multiples:
            params = _with_stage_entry(A, name, matrix, key, query, c * scale, lam, mu, kappa)
            ok = teacher_forced_correct(params, archs[name], A, batch) | ~batch.target_mask
            rows.append({"construction": name, "matrix": matrix, "key": key, "query": query, "multiple": c,
                         "value": c * scale, "original": abs(c * scale - original) < 1e-12 * max(1.0, scale),  # tol: c * scale vs the constructed float
                         "chains_right": int(ok.all(1).sum()), "chains": batch.size,
                         "steps_right": int((ok & batch.target_mask).sum()), "steps": int(batch.target_mask.sum())})
    return rows


def tracked_training(
    A: torch.Tensor,
    *,
    m: int = 3,
    steps: int = 1000,
    lr: float = 2.0,
    batch_size: int = 256,
    seed: int = 0,
    options: LossOptions = LossOptions(),
    record_every: int = 20,
    eval_size: int = 256,
    eval_seed: int = 123,
    snapshot_at=None,
) -> History:
    """Train the two-head model from zero and record what the specialization analysis needs.

    Records, every ``record_every`` steps, on a fixed batch of ``eval_size``
    training trees (seed ``eval_seed``): ``"scalars"`` (:func:`~onelayer.trees.forward.dynamics.reduced_scalars`),
    ``"accuracy"`` (teacher-forced accuracy of the backward, turning and
    forward steps), ``"roles"`` (:func:`~onelayer.trees.forward.dynamics.role_metrics`) and ``"residual"``
    (:func:`~onelayer.trees.forward.dynamics.symmetry_residual`). ``snapshot_at`` (steps) keeps the parameters
    at those steps in ``History.snapshots``. Training as in
    :func:`~onelayer.trees.forward.model.train_forward` (fresh batches of ``batch_size``
    perfect trees of depth ``m`` at every step).
    """
    A = check_embeddings(A)
    m = check_int("m", m, low=1, high=8)
    eval_size = check_int("eval_size", eval_size, low=1)
    arch = two_head()
    ev = perfect_forward_batch(m, A.shape[1], eval_size, np.random.default_rng(eval_seed))

    def accuracy(p):
        acc = accuracy_by_type(teacher_forced_correct(p, arch, A, ev), ev)
        return np.array([acc[name] for name in STEP_TYPES[:3]])

    record = {
        "scalars": lambda p: _reduced_scalars(p, A),
        "accuracy": accuracy,
        "roles": lambda p: role_metrics(p, arch, A, ev),
        "residual": lambda p: _symmetry_residual(p, A),
    }
    return train_forward(arch, A, m=m, steps=steps, lr=lr, batch_size=batch_size, seed=seed, options=options,
                         record=record, record_every=record_every,
                         **({} if snapshot_at is None else {"snapshot_at": list(snapshot_at)}))


def curve_rows(hist) -> list[dict]:
    """One row per recorded step of a :func:`tracked_training` run: loss, accuracy by step type, the reduced scalars and
    the symmetry residual."""
    return [{"step": int(t), "loss": float(hist["loss"][i]),
             **{f"accuracy_{name}": float(hist["accuracy"][i, j]) for j, name in enumerate(STEP_TYPES[:3])},
             **{name: float(hist["scalars"][i, j]) for j, name in enumerate(SCALAR_NAMES)},
             "residual": float(hist["residual"][i])}
            for i, t in enumerate(hist.steps)]
