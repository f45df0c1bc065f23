"""Batched backward training: many members (seeds, step sizes) in one :func:`onelayer.training.train` with ``members=True`` call.

A *member* is one training run of the single-head backward model
(:mod:`onelayer.trees.backward.model`): its own ``B`` (the trainable
key-query block, zero at the start), its own training data and its own step
size. :func:`train_backward_members` trains ``M`` members at once with ``B``
of shape ``(M, d, d)``; member ``b`` follows exactly the trajectory of

* ``protocol="sgd"`` (default, the paper's protocol):
  ``train_backward(A, m=m, steps=steps, lr=lr[b], batch_size=batch_size, seed=seeds[b])``,
  i.e. a fresh batch of perfect binary trees at every step, drawn from
  ``numpy.random.default_rng(seeds[b])``;
* ``protocol="fixed"``: the same call with
  ``fixed_batch=perfect_tree_batch(m, S, batch_size, default_rng(seeds[b]))``,
  i.e. full-batch gradient descent on a fixed training sample of
  ``batch_size`` trees.

How the batching works: the trees of all members are stacked member-major
into one :class:`~onelayer.trees.backward.layout.BackwardBatch`
(:class:`MemberBatch`); each tree row looks up its scores in its own member's
``H_b = E^T B_b E`` (``E = [A, 0]``), and the squared errors are reduced per
member with the normalisation of :class:`~onelayer.trees.shared.data.LossOptions`.
Everything else (causal mask, attention mass per symbol, error through the
Gram matrix) is the single-run code of :mod:`onelayer.trees.backward.model`,
so a member reproduces a separate run up to the order of floating-point
summation (tested to ``1e-10`` in float64).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import BatchedHistory, train
from ...validation import check_bool, check_choice, check_instances, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings
from ...trees.shared.data import LossOptions
from ...trees.backward.layout import BackwardBatch, perfect_tree_batch
from ...trees.backward.model import attention, loss, predict_mass, round_prediction, scores

__all__ = [
    "PROTOCOLS",
    "MemberBatch",
    "stack_members",
    "repeat_batch",
    "member_scores",
    "member_losses",
    "member_correct_weight",
    "member_accuracy",
    "member_margin",
    "member_records",
    "train_backward_members",
]

#: Training protocols of :func:`train_backward_members`.
PROTOCOLS = ("sgd", "fixed")


@dataclass(frozen=True)
class MemberBatch:
    """The trees of ``members`` runs stacked member-major into one padded batch.

    Rows ``b * per_member .. (b + 1) * per_member - 1`` of ``batch`` belong to
    member ``b``; ``member`` holds that index for every row.
    """

    batch: BackwardBatch
    members: int
    member: torch.Tensor

    @property
    def per_member(self) -> int:
        """Number of trees per member."""
        return self.batch.size // self.members


def _pad(batch: BackwardBatch, L: int, K: int) -> BackwardBatch:
    """Right-pad a batch to length ``L`` and ``K`` targets (padding: empty symbol, masked)."""
    dl, dk = L - batch.length, K - batch.steps
    if dl == 0 and dk == 0:
        return batch
    S = batch.S
    pad = torch.nn.functional.pad
    return BackwardBatch(
        S=S, first=pad(batch.first, (0, dl), value=S), second=pad(batch.second, (0, dl), value=S),
        valid=pad(batch.valid, (0, dl), value=False), query=pad(batch.query, (0, dk), value=0),
        target_first=pad(batch.target_first, (0, dk), value=S), target_second=pad(batch.target_second, (0, dk), value=S),
        target_mask=pad(batch.target_mask, (0, dk), value=False), prompt_len=batch.prompt_len, root=batch.root,
        goal=batch.goal, n_nodes=batch.n_nodes,
    )


def stack_members(batches: Sequence[BackwardBatch]) -> MemberBatch:
    """Stack one :class:`BackwardBatch` per member (same ``S``, same number of trees) into a :class:`MemberBatch`.

    Batches of different lengths are right-padded to the longest.
    """
    batches = check_instances("batches", batches, BackwardBatch, "one per member")
    for i, b in enumerate(batches):
        if b.S != batches[0].S:
            raise ValueError(f"batches[{i}] uses S={b.S}, batches[0] uses S={batches[0].S}: all members share S")
        if b.size != batches[0].size:
            raise ValueError(f"batches[{i}] has {b.size} trees, batches[0] has {batches[0].size}: "
                             "every member needs the same number of trees")
    L = max(b.length for b in batches)
    K = max(b.steps for b in batches)
    padded = [_pad(b, L, K) for b in batches]
    fields = {}
    for name in BackwardBatch.__dataclass_fields__:
        value = getattr(padded[0], name)
        fields[name] = torch.cat([getattr(p, name) for p in padded]) if isinstance(value, torch.Tensor) else value
    n = batches[0].size
    member = torch.arange(len(batches)).repeat_interleave(n)
    return MemberBatch(BackwardBatch(**fields), len(batches), member)


def repeat_batch(batch: BackwardBatch, members: int) -> MemberBatch:
    """The same batch for every one of ``members`` members (e.g. a shared evaluation batch)."""
    if not isinstance(batch, BackwardBatch):
        raise TypeError(f"batch must be a BackwardBatch, got {type(batch).__name__}")
    members = check_int("members", members, low=1)
    return stack_members([batch] * members)


def _check(B, A, mb: MemberBatch):
    if not isinstance(mb, MemberBatch):
        raise TypeError(f"mb must be a MemberBatch, got {type(mb).__name__}")
    if not isinstance(A, torch.Tensor) or A.dim() != 2 or A.shape[1] != mb.batch.S:
        raise ValueError(f"A must be a tensor of shape (d, S={mb.batch.S})")
    d = A.shape[0]
    if not isinstance(B, torch.Tensor) or tuple(B.shape) != (mb.members, d, d):
        raise ValueError(f"B must be a tensor of shape (members, d, d) = ({mb.members}, {d}, {d}), "
                         f"got {tuple(B.shape) if isinstance(B, torch.Tensor) else type(B).__name__}")


def member_scores(B: torch.Tensor, A: torch.Tensor, mb: MemberBatch) -> torch.Tensor:
    """Attention logits of every tree row under its member's ``B``: shape ``(rows, K, L)`` (``-inf`` where masked)."""
    _check(B, A, mb)
    return scores(B, A, mb.batch, member=mb.member)


def _attention(B, A, mb):
    _check(B, A, mb)
    return attention(B, A, mb.batch, member=mb.member)


def _per_member(x: torch.Tensor, mb: MemberBatch) -> torch.Tensor:
    """Sum a per-(row, target) tensor over each member's rows and targets: ``(M,)``."""
    return x.reshape(mb.members, -1).sum(1)


def member_losses(B: torch.Tensor, A: torch.Tensor, mb: MemberBatch, options: LossOptions = LossOptions()) -> torch.Tensor:
    """Each member's teacher-forced squared loss on its own trees: shape ``(M,)``, differentiable in ``B``.

    Member ``b``'s entry equals ``onelayer.trees.backward.model.loss(B[b], A, batch_b, options)``.
    """
    _check(B, A, mb)
    return loss(B, A, mb.batch, options, member=mb.member)


@torch.no_grad()
def member_correct_weight(B: torch.Tensor, A: torch.Tensor, mb: MemberBatch) -> torch.Tensor:
    """Each member's mean teacher-forced attention on the correct edge over its real targets: ``(M,)``."""
    batch = mb.batch
    w = _attention(B, A, mb)
    hit = (batch.first[:, None, :] == batch.target_first[:, :, None]) & (batch.second[:, None, :] == batch.target_second[:, :, None])
    mask = batch.target_mask.to(w.dtype)
    return _per_member((w * hit).sum(-1) * mask, mb) / _per_member(mask, mb)


@torch.no_grad()
def member_accuracy(B: torch.Tensor, A: torch.Tensor, mb: MemberBatch) -> torch.Tensor:
    """Each member's teacher-forced accuracy (both blocks of the rounded prediction right): ``(M,)``."""
    batch = mb.batch
    m1, m2 = predict_mass(_attention(B, A, mb), batch)
    ok = (round_prediction(m1, A) == batch.target_first) & (round_prediction(m2, A) == batch.target_second)
    mask = batch.target_mask.to(B.dtype)
    return _per_member(ok.to(B.dtype) * mask, mb) / _per_member(mask, mb)


@torch.no_grad()
def member_margin(B: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """``h1 - h2`` of each member's ``H = A^T B_b A`` (mean diagonal minus mean off-diagonal entry): ``(M,)``."""
    if not isinstance(B, torch.Tensor) or B.dim() != 3:
        raise ValueError("B must be a tensor of shape (members, d, d)")
    H = A.T.to(B.dtype) @ B @ A.to(B.dtype)
    S = H.shape[-1]
    tr = torch.diagonal(H, dim1=-2, dim2=-1).sum(-1)
    return tr / S - (H.sum((-2, -1)) - tr) / (S * (S - 1))


def member_records(A: torch.Tensor, eval_batch: BackwardBatch, members: int) -> dict[str, Callable]:
    """Record functions for :func:`onelayer.training.train` with ``members=True``, measured on one batch shared by all members.

    ``"correct_weight"`` (:func:`member_correct_weight`), ``"accuracy"``
    (:func:`member_accuracy`) and ``"margin"`` (:func:`member_margin`), each of shape ``(M,)``.
    """
    shared = repeat_batch(eval_batch, members)
    return {
        "correct_weight": lambda p: member_correct_weight(p["B"], A, shared),
        "accuracy": lambda p: member_accuracy(p["B"], A, shared),
        "margin": lambda p: member_margin(p["B"], A),
    }


def train_backward_members(
    A: torch.Tensor,
    *,
    m: int,
    steps: int,
    lr,
    seeds: Sequence[int],
    batch_size: int = 256,
    protocol: str = "sgd",
    options: LossOptions = LossOptions(),
    init: torch.Tensor | None = None,
    record: Mapping[str, Callable] | None = None,
    eval_batch: BackwardBatch | None = None,
    root_token: bool = True,
    eos: bool = False,
    progress: bool = False,
    **batched_kwargs,
) -> BatchedHistory:
    """Train ``M = len(seeds)`` backward models at once (module docstring: which single run each member equals).

    Parameters
    ----------
    A:
        Embeddings ``(d, S)`` shared by all members (one-hot in the paper's experiment).
    m:
        Depth of the perfect binary training trees.
    steps:
        Number of gradient steps.
    lr:
        Step size: a number (all members) or ``M`` numbers (one per member;
        e.g. the same seed repeated with different step sizes).
    seeds:
        One non-negative integer per member: the seed of its training data.
    batch_size:
        Trees per step (``"sgd"``) or in the fixed sample (``"fixed"``); 256 in the paper.
    protocol:
        ``"sgd"`` (fresh batches, default) or ``"fixed"`` (full-batch GD on a fixed sample).
    options:
        Loss normalisation (:class:`~onelayer.trees.shared.data.LossOptions`; default mean with 1/2).
    init:
        Optional initial ``B`` of shape ``(M, d, d)``; default zero (the paper's).
    record:
        Extra ``train`` record functions ``params -> (M, ...)``.
    eval_batch:
        With it, the records of :func:`member_records` are added, measured on this shared batch.
    root_token, eos:
        Layout options of :func:`~onelayer.trees.backward.layout.perfect_tree_batch`.
    progress:
        Show a progress bar.
    **batched_kwargs:
        Passed on to :func:`onelayer.training.train` with ``members=True`` (``record_every``, ``record_at``, ``snapshot_at``).

    Returns
    -------
    onelayer.training.BatchedHistory
        ``records["loss"]`` of shape ``(T, M)``; ``params["B"]`` of shape ``(M, d, d)``.
    """
    A = check_embeddings(A)
    m = check_int("m", m, low=1, high=12)
    seeds = check_int_sequence("seeds", seeds, low=0)
    if not seeds:
        raise ValueError("seeds must contain at least one seed (one per member)")
    batch_size = check_int("batch_size", batch_size, low=1)
    check_choice("protocol", protocol, PROTOCOLS)
    check_bool("root_token", root_token)
    check_bool("eos", eos)
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    S = A.shape[1]
    if S < 2 ** (m + 1) - 1:
        raise ValueError(f"A has S={S} columns, but a perfect tree of depth m={m} needs S >= {2 ** (m + 1) - 1} labels")
    M, d = len(seeds), A.shape[0]
    if isinstance(lr, (list, tuple, np.ndarray)):
        lr = torch.as_tensor(np.asarray(lr, dtype=float), dtype=A.dtype)
    rngs = [np.random.default_rng(s) for s in seeds]

    def draw() -> MemberBatch:
        return stack_members([perfect_tree_batch(m, S, batch_size, rng, root_token=root_token, eos=eos) for rng in rngs])

    if protocol == "fixed":
        fixed = draw()

        def loss_fn(params):
            return member_losses(params["B"], A, fixed, options)
    else:
        def loss_fn(params):
            return member_losses(params["B"], A, draw(), options)

    if init is None:
        B0 = torch.zeros(M, d, d, dtype=A.dtype)
    else:
        if not isinstance(init, torch.Tensor) or tuple(init.shape) != (M, d, d):
            raise ValueError(f"init must be a tensor of shape (M, d, d) = ({M}, {d}, {d})")
        B0 = init.to(A.dtype)
    rec = dict(record or {})
    if eval_batch is not None:
        if not isinstance(eval_batch, BackwardBatch) or eval_batch.S != S:
            raise ValueError(f"eval_batch must be a BackwardBatch with S={S}")
        rec = {**member_records(A, eval_batch, M), **rec}
    return train({"B": B0}, loss_fn, members=True, steps=steps, lr=lr, record=rec, progress=progress,
                      desc="backward members", **batched_kwargs)
