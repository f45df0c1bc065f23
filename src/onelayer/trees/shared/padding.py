"""Stacking the token sequences of several trees into one right-padded batch (both layouts).

A layout (R-B in :mod:`onelayer.trees.backward.layout`, R-F in
:mod:`onelayer.trees.forward.layout`) turns one tree into a prompt ``(P, w)``
and targets ``(K, w)`` of integer token columns (the two node blocks, then
layout-specific columns). The teacher-forced input is the prompt followed by
every target but the last. Node blocks are padded with the empty symbol ``S``,
the other columns with 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from .data import Tree

__all__ = ["check_trees", "pad_sequences", "unpadded_fields"]


def check_trees(trees: Sequence[Tree], goals: Sequence[int]) -> tuple[list[Tree], list[int], int]:
    """``trees`` and ``goals`` as lists after checking them: non-empty, one goal per tree, one vocabulary size ``S``."""
    trees = list(trees)
    goals = list(goals)
    if not trees:
        raise ValueError("trees must contain at least one tree")
    if len(goals) != len(trees):
        raise ValueError(f"goals must have one entry per tree: {len(trees)} trees, {len(goals)} goals")
    S = trees[0].S
    if any(t.S != S for t in trees):
        raise ValueError("all trees must share the same vocabulary size S")
    return trees, goals, S


def pad_sequences(S: int, prompts: Sequence[np.ndarray], targets: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Right-pad the teacher-forced sequences of several trees.

    ``prompts[b]`` has shape ``(P_b, w)`` and ``targets[b]`` ``(K_b, w)``.
    Returns ``seq`` ``(batch, L, w)`` (prompt then targets but the last),
    ``valid`` ``(batch, L)``, ``query`` ``(batch, K)`` (position whose output
    predicts each target), ``targets`` ``(batch, K, w)``, ``target_mask``
    ``(batch, K)`` and ``prompt_len`` ``(batch,)``.
    """
    P = np.array([len(p) for p in prompts])
    K = np.array([len(t) for t in targets])
    L = int((P + K - 1).max())
    Kmax = int(K.max())
    nb = len(prompts)
    width = np.asarray(targets[0]).shape[1]
    seq = np.zeros((nb, L, width), dtype=np.int64)
    seq[..., :2] = S
    valid = np.zeros((nb, L), dtype=bool)
    query = np.zeros((nb, Kmax), dtype=np.int64)
    tgt = np.zeros((nb, Kmax, width), dtype=np.int64)
    tgt[..., :2] = S
    tmask = np.zeros((nb, Kmax), dtype=bool)
    for b, (p, t) in enumerate(zip(prompts, targets)):
        s = np.concatenate([p, t[:-1]])
        seq[b, : len(s)] = s
        valid[b, : len(s)] = True
        query[b, : len(t)] = len(p) - 1 + np.arange(len(t))
        tgt[b, : len(t)] = t
        tmask[b, : len(t)] = True
    return {"seq": seq, "valid": valid, "query": query, "targets": tgt, "target_mask": tmask, "prompt_len": P}


def unpadded_fields(batch_size: int, P: int, K: int, root: np.ndarray, goal: np.ndarray, n: int) -> dict[str, torch.Tensor]:
    """The batch fields shared by both layouts when every tree has ``P`` prompt tokens and ``K`` targets (no padding).

    ``valid``, ``query``, ``target_mask``, ``prompt_len``, ``root``, ``goal``
    (label arrays ``(batch,)``) and ``n_nodes`` as tensors.
    """
    as_t = torch.as_tensor
    return {
        "valid": torch.ones((batch_size, P + K - 1), dtype=torch.bool),
        "query": as_t(np.broadcast_to(P - 1 + np.arange(K), (batch_size, K)).copy()),
        "target_mask": torch.ones((batch_size, K), dtype=torch.bool),
        "prompt_len": torch.full((batch_size,), P, dtype=torch.int64),
        "root": as_t(np.asarray(root).copy()),
        "goal": as_t(np.asarray(goal).copy()),
        "n_nodes": torch.full((batch_size,), n, dtype=torch.int64),
    }
