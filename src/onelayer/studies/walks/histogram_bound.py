"""The exact best accuracy of any predictor that sees only a ring walk's visit histogram, at any length.

Without positional vectors every logit is 0 and the model sees only the token average, i.e. the counts ``c`` of
each ring node among the ``N - 1`` tokens ``s_1..s_{N-1}``. The best any such predictor can do is

    ``A(K, p, N) = sum_c max_y P(c, s_N = y)``,

the histogram-Bayes accuracy. :func:`onelayer.studies.walks.chains.histogram_bayes_accuracy` computes it by listing all
``K 2^(N-2)`` walks, which stops at ``N`` of about 20. :func:`histogram_bayes_bound` computes the same number by
dynamic programming over visit histograms, at the paper's ``N = 97`` in seconds.

The formulation. The start is uniform and every step is ``+1`` with probability ``p``, so the law of a walk is
invariant under rotating the ring. We therefore track the histogram *relative to the current node*,
``r_j = c_{s_i + j}``, with no node in the state: a step ``+1`` turns ``r`` into ``(r_1, ..., r_{K-1}, r_0)`` and adds
one visit at the new position 0; a step ``-1`` turns it into ``(r_{K-1}, r_0, ..., r_{K-2})`` plus one visit. After
``N - 2`` steps, ``Q(r)`` is the probability that the histogram seen from ``s_{N-1}`` is ``r``, and the joint law of
the absolute histogram and the last token is ``P(c, s_{N-1} = t) = Q(rot_t c) / K`` with ``(rot_t c)_j = c_{t+j}``.
The label is one more step, so seen from a candidate label ``y`` the score of ``y`` is
``H(r) = p Q(rot_{-1} r) + (1 - p) Q(rot_1 r)`` with ``r = rot_y c``, and ``A = sum_c max_y H(rot_y c) / K``,
summed over rotation orbits. A histogram is packed into one integer (``bits`` per node), and the states of each
step are merged by sorting: about ``1.5`` million states at ``K = 6``, ``N = 97``.
"""

from __future__ import annotations

import math

import numpy as np

from ...validation import check_int, check_probability

__all__ = ["histogram_distribution", "histogram_bayes_bound", "histogram_bound_table"]


def _bits(K: int, N: int) -> int:
    bits = max(1, math.ceil(math.log2(N)))
    if K * bits > 62:
        raise ValueError(f"K * ceil(log2(N)) must be at most 62 (a histogram is packed into one int64); got K={K}, N={N}")
    return bits


def _merge(keys: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(keys, return_inverse=True)
    return uniq, np.bincount(inverse.ravel(), weights=probs, minlength=uniq.size)


def _rotations(keys: np.ndarray, K: int, bits: int) -> list[np.ndarray]:
    """``rot_k r`` for ``k = 0..K-1`` of packed histograms (``(rot_k r)_j = r_{j+k}``)."""
    mask = (1 << (K * bits)) - 1
    out = [keys]
    for k in range(1, K):
        shift = k * bits
        out.append((keys >> shift) | ((keys << ((K - k) * bits)) & mask))
    return out


def histogram_distribution(K: int, p: float, N: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(keys, Q, bits)``: the law ``Q`` of the visit histogram of ``s_1..s_{N-1}`` seen from ``s_{N-1}``.

    A key packs ``r_0..r_{K-1}`` (``r_j`` = visits of node ``s_{N-1} + j``) as ``sum_j r_j 2^(j bits)``; keys are
    sorted and ``Q`` sums to 1.
    """
    K = check_int("K", K, low=3)
    p = check_probability("p", p)
    N = check_int("N", N, low=2)
    bits = _bits(K, N)
    top, low_mask = (K - 1) * bits, (1 << bits) - 1
    keys, probs = np.array([1], dtype=np.int64), np.array([1.0])
    for _ in range(N - 2):
        r0, rlast = keys & low_mask, keys >> top
        up = (keys >> bits) | (r0 << top)                                # (r_1, ..., r_{K-1}, r_0)
        down = ((keys << bits) & ((1 << (K * bits)) - 1)) | rlast        # (r_{K-1}, r_0, ..., r_{K-2})
        cand = np.concatenate([up + 1, down + 1])
        weight = np.concatenate([p * probs, (1.0 - p) * probs])
        keep = weight > 0
        keys, probs = _merge(cand[keep], weight[keep])
    return keys, probs, bits


def histogram_bayes_bound(K: int, p: float, N: int) -> float:
    """The best accuracy of any function of the visit counts of ``s_1..s_{N-1}`` at predicting ``s_N`` (exact,
    by the dynamic programme of this module; equal to :func:`onelayer.studies.walks.chains.histogram_bayes_accuracy`)."""
    keys, Q, bits = histogram_distribution(K, p, N)
    rot = _rotations(keys, K, bits)
    # H(r) = p Q(rot_{-1} r) + (1 - p) Q(rot_1 r): Q at s contributes p to r = rot_1 s and 1 - p to r = rot_{-1} s
    hk, H = _merge(np.concatenate([rot[1], rot[K - 1]]), np.concatenate([p * Q, (1.0 - p) * Q]))
    hrot = _rotations(hk, K, bits)
    canon = np.minimum.reduce(hrot)
    # the orbit of r has as many members as its smallest period (a divisor of K)
    period = np.full(hk.size, K, dtype=np.int64)
    for k in range(K - 1, 0, -1):
        if K % k == 0:
            period[hrot[k] == hk] = k
    order = np.argsort(canon, kind="stable")
    c_sorted, h_sorted = canon[order], H[order]
    starts = np.flatnonzero(np.r_[True, c_sorted[1:] != c_sorted[:-1]])
    best = np.maximum.reduceat(h_sorted, starts)
    size = period[order][starts]
    return float(np.sum(size * best) / K)


def histogram_bound_table(ps=(0.5, 0.7), Ns=(13, 25, 49, 97), *, K: int = 6) -> list[dict]:
    """:func:`histogram_bayes_bound` for each ``p`` and ``N``, with ``1/K`` and the Bayes accuracy ``max(p, 1-p)``."""
    rows = []
    for p in ps:
        for N in Ns:
            rows.append({"p": float(p), "N": int(N), "bound": histogram_bayes_bound(K, p, N), "chance": 1.0 / K,
                         "bayes": max(float(p), 1.0 - float(p))})
    return rows
