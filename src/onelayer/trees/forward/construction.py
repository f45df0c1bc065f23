"""Theorem 2 (reconstruction): a two-head forward reasoner by construction, and its margins.

With ``B`` from Lemma 1 (``A^T B A = I_S``, :func:`~.embeddings.lemma1_matrix`)
and scales ``lam, mu, kappa > 0`` (spec section 5.3; stage matrices indexed
[key stage b, f] x [query stage b, f]):

    U_1 = lam B,    V_1 = mu [[-1, 1], [0, -1]],
    U_2 = 2 kappa B, V_2 = kappa [[1, 0], [2, 1]].

Head 1 (swap) then puts the largest logit on the token it must copy, with a
margin of ``min(lam, mu)`` over every other token, at every step; head 2
(stage copy) puts the largest logit on a token carrying the correct next
stage, with a margin of ``kappa`` over every token carrying another stage
flag (or none). As the scales grow the softmax becomes a hard selector
(:mod:`onelayer.attention`) and the model outputs the exact chain.
:func:`margin_table` measures those margins on actual sequences.

:func:`full_single_head_construction` is *our* observation about the
reconstruction, not a claim of the paper: one head with a learnable value
matrix can also represent the R-F chain, because a linear map can output
``s_b`` for a token without a stage flag and ``s_f`` for a token with one.
"""

from __future__ import annotations

import torch

from ...validation import check_float
from ..shared.embeddings import _lemma1, check_embeddings
from .layout import STEP_TYPES, ForwardBatch
from .model import ForwardArchitecture, head_logits, two_head

__all__ = [
    "constructed_params",
    "full_single_head_construction",
    "predicted_margins",
    "margin_table",
]

#: Query situations of the margin table.
SITUATIONS = ("backward, current != root", "backward, current = root (turning)", "forward")


def _scales(lam, mu, kappa):
    return (
        check_float("lam", lam, low=0.0, low_open=True),
        check_float("mu", mu, low=0.0, low_open=True),
        check_float("kappa", kappa, low=0.0, low_open=True),
    )


def constructed_params(A: torch.Tensor, lam: float, mu: float, kappa: float) -> dict[str, torch.Tensor]:
    """The Theorem 2 construction ``{U1, V1, U2, V2}`` for the two-head model (:func:`~onelayer.trees.forward.model.two_head`)."""
    return _two_heads(check_embeddings(A), *_scales(lam, mu, kappa))


def _two_heads(A: torch.Tensor, lam: float, mu: float, kappa: float) -> dict[str, torch.Tensor]:
    """:func:`constructed_params` with arguments its caller has checked."""
    B = _lemma1(A)
    dt = A.dtype
    return {
        "U1": lam * B,
        "V1": mu * torch.tensor([[-1.0, 1.0], [0.0, -1.0]], dtype=dt),
        "U2": 2 * kappa * B,
        "V2": kappa * torch.tensor([[1.0, 0.0], [2.0, 1.0]], dtype=dt),
    }


def full_single_head_construction(A: torch.Tensor, lam: float, mu: float) -> dict[str, torch.Tensor]:
    """One *full* head (:func:`~onelayer.trees.forward.model.full_heads` ``(1)``) that represents the R-F chain.

    Key-query: head 1's blocks of :func:`constructed_params` (``lam B`` on the
    node-2 blocks, ``V_1`` on the stage blocks). Value: swap the node blocks
    and write the stage ``e_1 (w^T x^(1)) + M x^(s)`` with
    ``w = A (A^T A)^{-1} 1`` (so ``w^T a_s = 1`` for every symbol) and
    ``M = [[-1, -1], [1, 1]]``: a token with a node in block 1 and no stage
    flag gives ``s_b``; one with a stage flag gives ``s_f``. That is exactly
    the stage the next token needs when head 1 attends to the right token
    (an edge in the backward stage, the root token at the turn, a
    backward-stage token in the forward stage). Our observation, not the paper's.
    """
    lam, mu, _ = _scales(lam, mu, 1.0)
    return _one_full_head(check_embeddings(A), lam, mu)


def _one_full_head(A: torch.Tensor, lam: float, mu: float) -> dict[str, torch.Tensor]:
    """:func:`full_single_head_construction` with arguments its caller has checked."""
    d = A.shape[0]
    D = 2 * d + 2
    dt = A.dtype
    WKQ = torch.zeros(D, D, dtype=dt)
    WKQ[d : 2 * d, d : 2 * d] = lam * _lemma1(A)
    WKQ[2 * d :, 2 * d :] = mu * torch.tensor([[-1.0, 1.0], [0.0, -1.0]], dtype=dt)
    WV = torch.zeros(D, D, dtype=dt)
    WV[:d, d : 2 * d] = torch.eye(d, dtype=dt)
    WV[d : 2 * d, :d] = torch.eye(d, dtype=dt)
    w = A @ torch.linalg.solve(A.T @ A, torch.ones(A.shape[1], dtype=dt))
    WV[2 * d, :d] = w
    WV[2 * d :, 2 * d :] = torch.tensor([[-1.0, -1.0], [1.0, 1.0]], dtype=dt)
    return {"WKQ1": WKQ, "WV1": WV}


def predicted_margins(lam: float, mu: float, kappa: float) -> dict[tuple[str, str], float]:
    """The margins the construction guarantees: ``min(lam, mu)`` for head 1, ``kappa`` for head 2, in every situation."""
    lam, mu, kappa = _scales(lam, mu, kappa)
    out = {}
    for sit in SITUATIONS:
        out[("head 1", sit)] = min(lam, mu)
        out[("head 2", sit)] = kappa
    return out


def _situations(batch: ForwardBatch) -> torch.Tensor:
    """Situation code of every target: 0 backward (current != root), 1 turning, 2 forward; -1 otherwise."""
    code = torch.full(batch.step_type.shape, -1, dtype=torch.int64)
    code[batch.step_type == STEP_TYPES.index("backward")] = 0
    code[batch.step_type == STEP_TYPES.index("turning")] = 1
    code[batch.step_type == STEP_TYPES.index("forward")] = 2
    return code.masked_fill(~batch.target_mask, -1)


def margin_table(params, A: torch.Tensor, batch: ForwardBatch, arch: ForwardArchitecture | None = None, *,
                 predicted: dict[tuple[str, str], float] | None = None) -> list[dict]:
    """Measured logit margins of both heads, by situation, over every step of every tree of ``batch``.

    Head 1's *target* is the token it must copy: the unique token whose
    swapped node blocks equal the target's, i.e. ``first = target second``
    and ``second = target first``. Its margin is the target's logit minus the
    largest other logit. Head 2's margin is the largest logit among tokens
    carrying the target's stage flag minus the largest logit among the
    others. Returns one row per (head, situation) with the minimum and
    maximum margin observed, the mean target logit, and the number of steps.
    With ``predicted`` (e.g. :func:`predicted_margins`), each row also counts the steps whose margin reaches
    the predicted one (``"reaching"``, to ``1e-9`` relative: the margins are differences of logits; for head 1 only
    steps with a unique target count).
    """
    arch = two_head() if arch is None else arch
    if arch.kind != "structured" or arch.roles != ("swap", "stage"):
        raise ValueError("margin_table expects the two-head structured architecture (two_head())")
    with torch.no_grad():
        logits = head_logits(params, arch, A, batch)  # (2, batch, K, L)
    valid_key = torch.isfinite(logits[0])
    target = (batch.first[:, None, :] == batch.target_second[:, :, None]) & (
        batch.second[:, None, :] == batch.target_first[:, :, None]
    )
    target &= valid_key
    sit = _situations(batch)
    rows = []
    neg = torch.tensor(float("-inf"), dtype=logits.dtype)
    # head 1: the target token against every other key
    h1 = logits[0]
    t_logit = torch.where(target, h1, neg).max(-1).values
    other = torch.where(target | ~valid_key, neg, h1).max(-1).values
    m1 = t_logit - other
    # head 2: best key with the target's stage against best key without it
    h2 = logits[1]
    same = batch.stage[:, None, :] == batch.target_stage[:, :, None]
    best_same = torch.where(same & valid_key, h2, neg).max(-1).values
    best_other = torch.where(~same & valid_key, h2, neg).max(-1).values
    m2 = best_same - best_other
    unique = target.sum(-1) == 1
    for head, marg, tl in (("head 1", m1, t_logit), ("head 2", m2, best_same)):
        for c, name in enumerate(SITUATIONS):
            sel = sit == c
            if not sel.any():
                continue
            ok = sel & unique if head == "head 1" else sel
            rows.append(
                {
                    "head": head,
                    "situation": name,
                    "steps": int(sel.sum()),
                    "min_margin": float(marg[ok].min()),
                    "max_margin": float(marg[ok].max()),
                    "mean_target_logit": float(tl[ok].mean()),
                    "target_unique": bool(unique[sel].all()) if head == "head 1" else True,
                }
            )
            if predicted is not None:
                want = float(predicted[(head, name)])
                rows[-1]["reaching"] = int((marg[ok] >= want - 1e-9 * max(1.0, abs(want))).sum())  # tol: logit round-off
    return rows
