"""Two variations of the forward layout R-F that the paper does not use, made from the paper's batches.

* ``edge_stage="s_b"``: every prompt edge carries the backward flag, ``(p, c, b)`` instead of ``(p, c, 0)``
  (:mod:`onelayer.studies.trees.forward_edge_flag`).
* ``turning=False``: no turning token (``2D`` steps); the stage switches once the root is emitted, so block 1 of
  the first forward step, the root, leads the answer (:mod:`onelayer.studies.trees.forward_alternative_layouts`).

Neither draws anything: a variant holds the same trees, goals and edge orders as the paper's batch it is made from,
and equals the batch the layout would build token by token (``tests/test_trees_forward_layout.py``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from ...trees.forward.layout import STAGE_B, STEP_TYPES, ForwardBatch, perfect_forward_batch, random_forward_batch
from ...validation import check_bool, check_choice

__all__ = ["EDGE_STAGES", "variant", "perfect_batch", "random_batch"]

#: Readings of the prompt edges' stage block: ``"empty"`` (``x^(s) = 0``, the paper's) or ``"s_b"`` (the backward flag).
EDGE_STAGES = ("empty", "s_b")


def variant(batch: ForwardBatch, *, turning: bool = True, edge_stage: str = "empty") -> ForwardBatch:
    """``batch`` (the paper's R-F layout) under the variations ``turning`` and ``edge_stage``."""
    check_bool("turning", turning)
    check_choice("edge_stage", edge_stage, EDGE_STAGES)
    if edge_stage == "s_b":  # the prompt edges are the first prompt_len - 2 tokens
        edges = torch.arange(batch.length)[None, :] < (batch.prompt_len - 2)[:, None]
        batch = dataclasses.replace(batch, stage=torch.where(edges, STAGE_B, batch.stage))
    return batch if turning else _without_turning(batch)


def _skip(t: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    """``t (batch, n, ...)`` without the entry ``at[b]`` of each row: ``(batch, n - 1, ...)``."""
    j = torch.arange(t.shape[1] - 1)[None, :]
    idx = j + (j >= at[:, None]).long()
    return torch.gather(t, 1, idx.reshape(idx.shape + (1,) * (t.dim() - 2)).expand((-1, -1) + t.shape[2:]))


def _without_turning(batch: ForwardBatch) -> ForwardBatch:
    """Drop the turning target and its teacher-forced input token (at ``prompt_len + k``) from every row."""
    k = (batch.step_type == STEP_TYPES.index("turning")).long().argmax(1)
    at = batch.prompt_len + k
    target_mask = _skip(batch.target_mask, k)
    query = torch.where(target_mask, batch.prompt_len[:, None] - 1 + torch.arange(target_mask.shape[1]), 0)
    out = {name: _skip(getattr(batch, name), at) for name in ("first", "second", "stage", "valid")}
    out |= {name: _skip(getattr(batch, name), k) for name in ("target_first", "target_second", "target_stage", "step_type")}
    return dataclasses.replace(batch, target_mask=target_mask, query=query, **out)


def perfect_batch(m: int, S: int, batch_size: int, rng: np.random.Generator, *, turning: bool = True,
                  edge_stage: str = "empty", **kwargs) -> ForwardBatch:
    """:func:`onelayer.trees.forward.layout.perfect_forward_batch` (``kwargs``) under the two variations."""
    return variant(perfect_forward_batch(m, S, batch_size, rng, **kwargs), turning=turning, edge_stage=edge_stage)


def random_batch(S: int, count: int, rng: np.random.Generator, *, turning: bool = True, edge_stage: str = "empty",
                 **kwargs) -> tuple[ForwardBatch, list]:
    """:func:`onelayer.trees.forward.layout.random_forward_batch` (``kwargs``) under the two variations."""
    batch, trees = random_forward_batch(S, count, rng, **kwargs)
    return variant(batch, turning=turning, edge_stage=edge_stage), trees
