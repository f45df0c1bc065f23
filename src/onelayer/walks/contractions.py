"""Contractions that reduce every output entry by the same floating-point operations.

The walks model's contractions over the ``K`` classes and over the batch go
through these (and sequential ``scatter_add``), so that with exactly orthogonal
positions and the exact population of a deterministic walk the computed state
stays *exactly* symmetric (see :mod:`onelayer.walks.model`, "Bit-level symmetry").
Both take leading member axes (:mod:`onelayer.walks.batched`).
"""

from __future__ import annotations

import torch

__all__ = ["rowwise_matmul", "batch_sum"]


def rowwise_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """``A @ B`` computed as elementwise products followed by a sum over the contiguous last axis.

    Every output entry is then reduced by the same sequence of floating-point
    operations, so equal inputs give bit-identical outputs. BLAS kernels do not
    promise this (blocked edge cases round differently), and a one-ulp difference
    between output coordinates is enough to seed the instability of the
    symmetric state of Theorem 4.1.

    With leading member axes (``A``: ``(..., n, j)``, ``B``: ``(..., j, k)``) it is
    ``A[b] @ B[b]`` for every member ``b``, by the same operations.
    """
    return (A[..., :, None, :] * B.transpose(-1, -2)[..., None, :, :]).sum(dim=-1)


def batch_sum(X: torch.Tensor, members: int = 0) -> torch.Tensor:
    """Sum over the batch axis (after ``members`` leading member axes) with the same operation order for every entry.

    The batch axis is moved to the end and reduced as a contiguous row, so every
    output entry is summed identically (see :func:`rowwise_matmul`).
    """
    lead = X.shape[:members]
    flat = X.reshape(lead + (X.shape[members], -1)).transpose(-1, -2).contiguous()
    return flat.sum(dim=-1).reshape(lead + X.shape[members + 1:])
