"""Closed forms from the proofs, and the quantities the theorems are about.

Theorem 3.1 (``0 < p < 1``)
    * :func:`lemma_c1_value`: the value matrix after one GD step from zero,
      ``V^(1) = eta / (epsilon N K) sum_{k=1}^{N-1} (Pi^T)^k`` (``W^(1) = 0``).
    * :func:`value_targets`: the directions ``V`` may converge to: the paper's
      ``Pi^T`` and the entrywise square root ``sqrt(Pi^T)`` that the log-loss
      dynamics predict when attention sits on the parent (they coincide at
      ``p = 1/2``).
    * :func:`direction_distance`: ``|| A/||A||_F - B/||B||_F ||_F``.
    * :func:`reduced_value_dynamics`: the scalar recursion
      ``v <- v + eta pi / (K (v + epsilon))`` followed by the entries of ``V``
      on the support of ``Pi^T`` once attention is one-hot on the parent.
    * :func:`output_direction_distance`: the normalised output against the
      normalised Bayes output ``Pi^T x_{N-1}`` (Theorem 3.1, item 2).
    * :func:`lemma_c5_check`: the second step (Lemmas C.4, C.5): ``W_11 = W_21 = 0``, ``W_12`` proportional to
      ``1_K p_N^T``, the attention on the parent, from two closed-form GD steps of the model.
    * :func:`parent_log_odds`: ``log(S_{N-1} / S_j)`` for every other position.

Theorem 4.1 (``p in {0, 1}``)
    * :func:`lemma_d1_entry`: the common value of every entry of ``V^(1)``,
      ``-eta l'(0) (N - 1) / (N K^2)``, for each loss.
    * :func:`symmetry_report`: how far a state is from the symmetric manifold
      (real-token logit spread, spread of ``V``'s entries, accuracy).
"""

from __future__ import annotations

import numpy as np
import torch

from ..validation import check_choice, check_float, check_int
from . import ring
from .model import LOSSES
from .data import TokenData

__all__ = [
    "lemma_c1_value",
    "lemma_c5_check",
    "lemma_d1_entry",
    "value_targets",
    "direction_distance",
    "reduced_value_dynamics",
    "output_direction_distance",
    "parent_log_odds",
    "symmetry_report",
]


def lemma_c1_value(K: int, p: float, N: int, eta: float = 1.0, epsilon: float = 0.1) -> np.ndarray:
    """Lemma C.1: ``V^(1) = eta / (epsilon N K) sum_{k=1}^{N-1} (Pi^T)^k`` (float64 ``K x K``)."""
    N = check_int("N", N, low=2)
    eta = check_float("eta", eta, low=0.0, low_open=True)
    epsilon = check_float("epsilon", epsilon, low=0.0, low_open=True)
    PiT = ring.transition_matrix(K, p).T
    total = np.zeros_like(PiT)
    power = np.eye(PiT.shape[0])
    for _ in range(N - 1):
        power = power @ PiT
        total += power
    return eta / (epsilon * N * K) * total


def lemma_c5_check(model, data: TokenData, *, lr: float = 1.0) -> dict:
    """Two GD steps from zero: the structure of ``W^(2)`` and the attention it produces (on ``data``).

    ``q_tok_rel_spread`` is ``(max - min) / |mean|`` of ``W_12 p_N`` (0 when
    ``W_12`` is proportional to ``1 p_N^T``); ``max_abs_W11_W21`` should be 0;
    ``parent_attention_mean/min`` and ``min_log_odds`` (the smallest
    ``log(S_{N-1}/S_j)`` over positions and sequences) describe the selection.
    """
    K = model.config.K
    hist = model.train(model.init(), data, steps=2, lr=lr)
    q = hist.params["q"]
    W = model.full_W(q)
    q_tok = q[:K]
    S = model.attention(hist.params, data)
    log_odds = parent_log_odds(model.logits(hist.params, data))
    return {
        "params": hist.params,
        "q_tok": q_tok.numpy(),
        "q_tok_rel_spread": float((q_tok.max() - q_tok.min()) / q_tok.mean().abs()),
        "max_abs_W11_W21": float(W[:, :K].abs().max()),
        "parent_attention_mean": float((S[:, -2] * data.weights).sum()),
        "parent_attention_min": float(S[:, -2].min()),
        "min_log_odds": float(log_odds.min()),
        "log_odds_by_position": (log_odds * data.weights.numpy()[:, None]).sum(0),
    }


def lemma_d1_entry(K: int, N: int, eta: float = 1.0, loss: str = "log", epsilon: float = 0.1) -> float:
    """Lemma D.1: every entry of ``V^(1)`` for a deterministic walk with ``N = rK + 1``.

    With uniform attention the weighted token is ``(N-1)/(N K) 1`` for every
    sequence, so ``V^(1) = -eta E[dl/df at f = 0] ((N-1)/(N K)) 1^T``; for a loss of
    the true score alone, ``E[dl/df] = l'(0) (1/K) 1``. Log-loss: ``l'(0) = -1/epsilon``;
    squared: ``-1`` (the target is ``e_y``); cross-entropy: the expectation of
    ``softmax(0) - e_y`` is zero, so ``V`` does not move at all.
    """
    K = check_int("K", K, low=1)
    N = check_int("N", N, low=2)
    eta = check_float("eta", eta, low=0.0, low_open=True)
    check_choice("loss", loss, LOSSES)
    slope = {"log": -1.0 / epsilon, "squared": -1.0, "cross_entropy": 0.0}[loss]
    return -eta * slope * (N - 1) / (N * K**2) + 0.0  # + 0.0 turns -0.0 into 0.0


def value_targets(K: int, p: float) -> dict[str, np.ndarray]:
    """``{"Pi^T": Pi^T, "sqrt(Pi^T)": entrywise square root}``, both ``K x K`` float64."""
    PiT = ring.transition_matrix(K, p).T
    return {"Pi^T": PiT, "sqrt(Pi^T)": np.sqrt(PiT)}


def _as_np(A) -> np.ndarray:
    if isinstance(A, torch.Tensor):
        return A.detach().cpu().to(torch.float64).numpy()
    return np.asarray(A, dtype=np.float64)


def direction_distance(A, B) -> float:
    """``|| A/||A||_F - B/||B||_F ||_F`` (``nan`` if either is zero)."""
    A, B = _as_np(A), _as_np(B)
    if A.shape != B.shape:
        raise ValueError(f"A and B must have the same shape, got {A.shape} and {B.shape}")
    na, nb = np.linalg.norm(A), np.linalg.norm(B)
    if na == 0 or nb == 0:
        return float("nan")
    return float(np.linalg.norm(A / na - B / nb))


def reduced_value_dynamics(pi: float, K: int, steps: int, *, eta: float = 1.0, epsilon: float = 0.1, v0: float = 0.0) -> np.ndarray:
    """Iterate ``v_{t+1} = v_t + eta pi / (K (v_t + epsilon))`` from ``v0``; returns ``v_0..v_steps``.

    This is the population GD step of an entry ``V_{ys}`` with ``pi = Pi[s, y]``
    when the attention is exactly one-hot on the parent. For large ``t``,
    ``v_t ~ sqrt(2 eta pi t / K)``: entries grow like the square root of ``pi``.
    """
    pi = check_float("pi", pi, low=0.0, high=1.0)
    K = check_int("K", K, low=1)
    steps = check_int("steps", steps, low=0)
    v = np.empty(steps + 1)
    v[0] = v0
    for t in range(steps):
        v[t + 1] = v[t] + eta * pi / (K * (v[t] + epsilon))
    return v


def output_direction_distance(f: torch.Tensor, data: TokenData, target: np.ndarray) -> float:
    """Mean over ``data`` of ``|| f/||f|| - g/||g|| ||_2`` with ``g = target @ x_{N-1}`` (a column of ``target``).

    With ``target = Pi^T`` this is Theorem 3.1 item 2 (``g = Pi^T x_{N-1}``, the Bayes output).
    Returns ``nan`` if some output is the zero vector (e.g. at zero initialisation).
    """
    f = _as_np(f)
    g = _as_np(target)[:, data.last.numpy()].T
    nf = np.linalg.norm(f, axis=1, keepdims=True)
    if np.any(nf == 0):
        return float("nan")
    fn = f / nf
    gn = g / np.linalg.norm(g, axis=1, keepdims=True)
    w = data.weights.numpy()
    return float((w * np.linalg.norm(fn - gn, axis=1)).sum())


def parent_log_odds(z: torch.Tensor) -> np.ndarray:
    """``log(S_{N-1} / S_j) = z_{N-1} - z_j`` for every position ``j != N-1``, row-wise, from the logits ``z``.

    Index ``N-2`` (0-based) is the parent. Returns ``(B, N - 1)``: columns are
    positions ``1..N-2`` and the query slot ``N``. Computed from logits, so it
    stays finite where the softmax weights underflow.
    """
    z = z.detach().cpu().to(torch.float64).numpy()
    parent = z[:, -2:-1]
    others = np.concatenate([z[:, :-2], z[:, -1:]], axis=1)
    return parent - others


def symmetry_report(model, params, data: TokenData) -> dict[str, float]:
    """Distance from the Theorem 4.1 symmetric state.

    Returns ``logit_spread``, the largest ``max_j z_j - min_j z_j`` over the
    real-token logits of every sequence; ``V_dev = max(V) - min(V)`` (0 exactly
    when all entries are equal; no mean is formed, whose rounding would blur the
    test); ``V_mean``; ``V_rel_dev = V_dev / |V_mean|``; the largest attention
    on the query slot; and the accuracy on ``data``.
    """
    z = model.logits(params, data)[:, :-1]
    V = params["V"]
    mean = float(V.mean())
    dev = float(V.max() - V.min())
    S = model.attention(params, data)
    return {
        "logit_spread": float((z.max(dim=1).values - z.min(dim=1).values).max()),
        "V_mean": mean,
        "V_dev": dev,
        "V_rel_dev": dev / abs(mean) if mean != 0 else float("nan"),
        "query_attention": float(S[:, -1].max()),
        "accuracy": model.accuracy(params, data),
    }
