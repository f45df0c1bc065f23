"""Structured heads with *learned* value maps: does the division of labour between heads emerge?

In the two-head model of :mod:`~onelayer.trees.forward.model` the value maps
are fixed by role: head 1 (``"swap"``) can only write the two node blocks and
head 2 (``"stage"``) only the stage block. The split between the heads is
therefore imposed; training only chooses where each head attends. This module
is the named variant that lets the split be learned:

* every head ``l`` keeps the structured logits of the two-head model,
  ``s^(l)_i = x_i^(2)T U_l x_N^(2) + x_i^(s)T V_l x_N^(s)``;
* its value map is a trainable dense ``(2d+2) x (2d+2)`` matrix ``W^V_l``, so
  either head may write every block of the next token.

Initialisation is a named option: ``init_scale = 0`` starts every matrix at
zero (then all heads receive identical gradients and stay identical, so no
division of labour can appear; :func:`head_asymmetry` measures it), and
``init_scale > 0`` draws every entry i.i.d. ``N(0, init_scale^2)`` from a
seeded generator.

Division of labour is measured on a teacher-forced batch by
:func:`division_of_labour`: for each head ``l``, ``p_l`` is the share of the
target's node blocks it writes (projection of its node-block output on the
target's node blocks, divided by the target's squared norm) and ``q_l`` the
same for the stage block. ``index = (max_l (p_l - q_l) - min_l (p_l - q_l)) / 2``
is 1 for the construction (one head writes all node blocks, the other the
whole stage), 0 for identical heads. :func:`attention_match` compares each
head's attention with the two heads of the Theorem 2 construction
(:func:`~onelayer.trees.forward.construction.constructed_params`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from ...jitter import jitter
from ...training import History, train
from ...validation import check_float, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings
from ...trees.shared.data import LossOptions
from ...trees.forward.construction import constructed_params
from ...trees.forward.decoding import round_tokens
from ...trees.forward.layout import ForwardBatch, forward_target_vectors, perfect_forward_batch
from ...trees.forward.model import attention, ForwardArchitecture, head_outputs, loss, two_head

__all__ = [
    "learned_value_params",
    "lv_attention",
    "lv_head_outputs",
    "lv_loss",
    "lv_teacher_forced_correct",
    "train_learned_values",
    "head_asymmetry",
    "division_of_labour",
    "attention_match",
    "learned_values_runs",
]


def _arch(heads: int) -> ForwardArchitecture:
    return ForwardArchitecture("structured", ("learned",) * heads)


def _heads(params) -> int:
    if not isinstance(params, Mapping):
        raise TypeError("params must be a mapping name -> tensor")
    L = 0
    while f"WV{L + 1}" in params:
        L += 1
    if L == 0:
        raise ValueError("params must hold U1, V1, WV1, ... (learned_value_params)")
    return L


def learned_value_params(
    A: torch.Tensor, *, heads: int = 2, init_scale: float = 0.0, gen: torch.Generator | None = None
) -> dict[str, torch.Tensor]:
    """Initial parameters ``U_l (d x d), V_l (2 x 2), WV_l ((2d+2) x (2d+2))`` for ``l = 1..heads``.

    Parameters
    ----------
    A:
        Embeddings ``(d, S)``.
    heads:
        Number of heads (``1..8``).
    init_scale:
        0 (zero initialisation) or the standard deviation of i.i.d. Gaussian entries.
    gen:
        ``torch.Generator``; required when ``init_scale > 0``.
    """
    A = check_embeddings(A)
    heads = check_int("heads", heads, low=1, high=8)
    init_scale = check_float("init_scale", init_scale, low=0.0)
    if init_scale > 0 and not isinstance(gen, torch.Generator):
        raise TypeError("gen must be a torch.Generator when init_scale > 0")
    d = A.shape[0]
    D = 2 * d + 2
    out = {}
    for l in range(1, heads + 1):
        for name, shape in ((f"U{l}", (d, d)), (f"V{l}", (2, 2)), (f"WV{l}", (D, D))):
            if init_scale > 0:
                out[name] = jitter(init_scale * torch.randn(shape, generator=gen, dtype=torch.float64),
                                   f"trees.learned_values.init.{name}").to(A.dtype)
            else:
                out[name] = torch.zeros(shape, dtype=A.dtype)
    return out


def lv_attention(params, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced attention of every head: ``(heads, batch, K, L)`` (zeros on padded targets)."""
    return attention(params, _arch(_heads(params)), A, batch, X)


def lv_head_outputs(params, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Each head's teacher-forced output ``W^V_l X w^(l)``: ``(heads, batch, K, 2d+2)``."""
    return head_outputs(params, _arch(_heads(params)), A, batch, X)


def lv_loss(params, A: torch.Tensor, batch: ForwardBatch, options: LossOptions = LossOptions(),
            X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced squared loss (same normalisations as :func:`onelayer.trees.forward.model.loss`)."""
    return loss(params, _arch(_heads(params)), A, batch, options, X)


def lv_teacher_forced_correct(params, A: torch.Tensor, batch: ForwardBatch) -> torch.Tensor:
    """Whether each rounded teacher-forced prediction equals its target: ``(batch, K)`` booleans."""
    with torch.no_grad():
        f, s, st = round_tokens(lv_head_outputs(params, A, batch).sum(0), A)
    return (f == batch.target_first) & (s == batch.target_second) & (st == batch.target_stage) & batch.target_mask


def train_learned_values(
    A: torch.Tensor,
    *,
    m: int,
    steps: int,
    lr: float,
    heads: int = 2,
    init_scale: float = 0.0,
    seed: int = 0,
    batch_size: int = 256,
    options: LossOptions = LossOptions(),
    record: Mapping | None = None,
    **train_kwargs,
) -> History:
    """Mini-batch SGD on perfect binary trees of depth ``m`` (fresh batches from seed ``seed``).

    The initial parameters come from :func:`learned_value_params` with
    generator seed ``10_000 + seed``. Extra keyword arguments go to
    :func:`onelayer.training.train` (``record_every``, ``record_at``, ...).
    """
    A = check_embeddings(A)
    m = check_int("m", m, low=1, high=8)
    seed = check_int("seed", seed, low=0)
    batch_size = check_int("batch_size", batch_size, low=1)
    gen = torch.Generator().manual_seed(10_000 + seed)
    params = learned_value_params(A, heads=heads, init_scale=init_scale, gen=gen)
    rng = np.random.default_rng(seed)
    S = A.shape[1]

    def loss_fn(p):
        return lv_loss(p, A, perfect_forward_batch(m, S, batch_size, rng), options)

    return train(params, loss_fn, steps=steps, lr=lr, record=record, progress=False, desc="learned values",
                 **train_kwargs)


def head_asymmetry(params) -> float:
    """Largest absolute difference between any parameter of head 1 and the same parameter of another head."""
    L = _heads(params)
    worst = 0.0
    for l in range(2, L + 1):
        for p in ("U", "V", "WV"):
            worst = max(worst, float((params[f"{p}{l}"] - params[f"{p}1"]).abs().max()))
    return worst


def division_of_labour(outputs: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> dict:
    """Who writes what: per-head shares of the node blocks and of the stage block of the targets.

    Parameters
    ----------
    outputs:
        ``(heads, batch, K, 2d+2)`` head outputs (e.g. :func:`lv_head_outputs`).
    targets:
        ``(batch, K, 2d+2)`` target tokens.
    mask:
        ``(batch, K)`` booleans: the real targets.

    Returns
    -------
    dict
        ``node_share`` and ``stage_share`` (lists, one per head: projection of
        the head's block output on the target block over the target's squared
        norm; they sum to about 1 over heads when the model is right),
        ``node_norm_share`` and ``stage_norm_share`` (share of the squared
        output norms), and ``index`` in ``[0, 1]`` (module docstring).
    """
    if not isinstance(outputs, torch.Tensor) or outputs.dim() != 4:
        raise ValueError("outputs must be a tensor of shape (heads, batch, K, 2d + 2)")
    if not isinstance(targets, torch.Tensor) or tuple(targets.shape) != tuple(outputs.shape[1:]):
        raise ValueError(f"targets must be a tensor of shape {tuple(outputs.shape[1:])}")
    if not isinstance(mask, torch.Tensor) or tuple(mask.shape) != tuple(outputs.shape[1:3]):
        raise ValueError(f"mask must be a boolean tensor of shape {tuple(outputs.shape[1:3])}")
    d2 = outputs.shape[-1] - 2
    m = mask.to(outputs.dtype)[None, :, :, None]
    o, y = outputs * m, targets * m[0]
    res = {}
    for name, sl in (("node", slice(0, d2)), ("stage", slice(d2, None))):
        proj = (o[..., sl] * y[..., sl]).sum((1, 2, 3)) / (y[..., sl] ** 2).sum()
        norms = (o[..., sl] ** 2).sum((1, 2, 3))
        res[f"{name}_share"] = [float(v) for v in proj]
        res[f"{name}_norm_share"] = [float(v) for v in norms / norms.sum().clamp_min(1e-300)]
    diff = np.asarray(res["node_share"]) - np.asarray(res["stage_share"])
    res["index"] = float(np.clip((diff.max() - diff.min()) / 2, 0.0, 1.0))
    res["node_head"] = int(np.argmax(res["node_share"])) + 1
    return res


def attention_match(weights: torch.Tensor, reference: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
    """Overlap ``sum_i min(w_i, w*_i)`` averaged over real queries, for every pair (head, reference head).

    ``weights`` ``(heads, batch, K, L)``, ``reference`` ``(R, batch, K, L)``,
    ``mask`` ``(batch, K)``. Returns an array ``(heads, R)`` with entries in
    ``[0, 1]`` (1: identical attention).
    """
    for name, t in (("weights", weights), ("reference", reference)):
        if not isinstance(t, torch.Tensor) or t.dim() != 4:
            raise ValueError(f"{name} must be a tensor of shape (heads, batch, K, L)")
    if weights.shape[1:] != reference.shape[1:]:
        raise ValueError("weights and reference must agree in (batch, K, L)")
    if not isinstance(mask, torch.Tensor) or tuple(mask.shape) != tuple(weights.shape[1:3]):
        raise ValueError(f"mask must be a tensor of shape {tuple(weights.shape[1:3])}")
    out = np.zeros((weights.shape[0], reference.shape[0]))
    for l in range(weights.shape[0]):
        for r in range(reference.shape[0]):
            ov = torch.minimum(weights[l], reference[r]).sum(-1)
            out[l, r] = float(ov[mask].mean())
    return out


def _measure(params, A, batch, ref_w) -> dict:
    with torch.no_grad():
        outs = lv_head_outputs(params, A, batch)
        dol = division_of_labour(outs, forward_target_vectors(batch, A), batch.target_mask)
        match = attention_match(lv_attention(params, A, batch), ref_w, batch.target_mask)
        ok = lv_teacher_forced_correct(params, A, batch) | ~batch.target_mask
    L = outs.shape[0]
    # best assignment of trained heads to the construction's heads (1 = traversal, 2 = stage)
    best = max(match[a, 0] + match[b, 1] for a in range(L) for b in range(L) if a != b) / 2 if L > 1 else float("nan")
    return {**dol, "attention_match": match.tolist(), "best_match": float(best),
            "chain": float(ok.all(1).double().mean()), "asymmetry": head_asymmetry(params)}


def learned_values_runs(
    *,
    m: int = 2,
    S: int = 17,
    steps: int = 600,
    lr: float = 2.0,
    seeds: Sequence[int] = (0, 1, 2),
    init_scales: Sequence[float] = (0.0, 0.01, 0.1),
    heads: int = 2,
    record_every: int = 50,
    batch_size: int = 128,
) -> list[dict]:
    """Train the learned-value model from each initialisation and seed; measure the division of labour over time.

    One-hot embeddings; every ``record_every`` steps the measures of
    :func:`division_of_labour` and :func:`attention_match` (against the
    construction with ``lam = 20, mu = kappa = 10``) are taken on a fixed batch
    of 128 training trees (seed ``50_000``), and the teacher-forced chain rate.
    Zero initialisation is run once (it is deterministic up to the batches).
    About 1 s per 100 steps for ``m = 2`` on one core.

    Returns
    -------
    list of dict
        One per run: ``init_scale, seed, steps`` and, per record, ``index, node_share, stage_share,
        best_match, chain, asymmetry``, plus ``loss`` and the final ``attention_match``.
    """
    from ...trees.shared.embeddings import one_hot_embeddings

    seeds = check_int_sequence("seeds", seeds, low=0)
    record_every = check_int("record_every", record_every, low=1)
    A = one_hot_embeddings(check_int("S", S, low=2 ** (check_int("m", m, low=1, high=6) + 1) - 1))
    ev = perfect_forward_batch(m, S, 128, np.random.default_rng(50_000))
    with torch.no_grad():
        ref_w = attention(constructed_params(A, 20.0, 10.0, 10.0), two_head(), A, ev)
    runs = []
    for scale in init_scales:
        scale = check_float("init_scales", scale, low=0.0)
        for seed in (seeds[:1] if scale == 0 else seeds):
            grid = list(range(0, steps + 1, record_every)) + [steps]
            hist = train_learned_values(A, m=m, steps=steps, lr=lr, heads=heads, init_scale=scale, seed=seed,
                                        batch_size=batch_size, record_every=record_every, snapshot_at=grid)
            snap_steps = sorted(hist.snapshots)
            recs = [_measure(hist.snapshots[t], A, ev, ref_w) for t in snap_steps]
            row = {"init_scale": scale, "seed": seed, "steps": snap_steps,
                   "loss": [float(v) for v in hist["loss"]]}
            for key in ("index", "node_share", "stage_share", "best_match", "chain", "asymmetry"):
                row[key] = [r[key] for r in recs]
            row["attention_match"] = recs[-1]["attention_match"]
            runs.append(row)
    return runs
