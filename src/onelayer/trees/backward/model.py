"""The one-layer, single-head backward model (reconstruction R-B, spec section 4.2).

For a sequence ``x_1..x_N`` of tokens ``x = [x^(1); x^(2)]`` the model predicts

    s_i = x_i^(2)T B x_N^(1),    y_hat_N = sum_{i <= N} softmax(s)_i x_i,

i.e. ``W^KQ = [[0, 0], [B, 0]]`` with the trainable ``B`` (``d x d``) and the fixed value map ``W^V = I_{2d}``.
No ``1/sqrt(d)``, positional encoding, residual or MLP; the softmax is causal. Reconstructed from the published
description.

Fast form: tokens are symbol pairs (:mod:`~onelayer.trees.backward.layout`), so ``s_i = H[second_i, first_N]`` with
``H = E^T B E``, ``E = [A, 0]``, and ``y_hat`` is ``E`` applied to the attention mass per symbol (tested against the
formula).

Loss: the squared error ``c * ||y_hat - y||^2`` against the next token, normalised by
:class:`onelayer.trees.shared.data.LossOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import torch

from ...training import History, train
from ...validation import check_int
from ..shared.data import LossOptions, normalised
from ..shared.embeddings import check_embeddings, nearest, with_empty
from .layout import BackwardBatch, perfect_tree_batch

__all__ = ["literal_predict", "scores", "attention", "predict_mass", "query_mask", "squared_error", "round_prediction",
           "predict", "loss", "teacher_forced_accuracy", "correct_key_weight", "greedy_decode", "DecodeResult",
           "zero_init", "train_backward"]

def literal_predict(B: torch.Tensor, tokens: torch.Tensor, query: int) -> torch.Tensor:
    """The model's equation, literally: ``y_hat_N = sum_{i <= N} softmax(s)_i x_i``, ``s_i = x_i^(2)T B x_N^(1)``.

    ``tokens (L, 2d)``: one tree's tokens; ``query``: the position ``N - 1`` of ``x_N``. :func:`predict` is the fast
    form; ``tests/test_trees_backward_model.py`` checks the two against each other.
    """
    d = B.shape[0]
    X = tokens[: query + 1]  # x_1 .. x_N
    s = X[:, d:] @ B @ X[query, :d]  # s_i = x_i^(2)T B x_N^(1)
    return torch.softmax(s, 0) @ X


def _check(B, A, batch, *, members: bool = False):
    if not isinstance(batch, BackwardBatch):
        raise TypeError(f"batch must be a BackwardBatch, got {type(batch).__name__}")
    if not isinstance(A, torch.Tensor) or A.dim() != 2:
        raise TypeError("A must be a 2-D torch.Tensor of shape (d, S)")
    if A.shape[1] != batch.S:
        raise ValueError(f"A has {A.shape[1]} columns but the batch uses S={batch.S} symbols")
    d = A.shape[0]
    _check_B(B, d, members)


def _check_B(B, d, members=False):
    if not isinstance(B, torch.Tensor) or B.shape[-2:] != (d, d) or B.dim() != (3 if members else 2):
        shape = "(members, d, d)" if members else "(d, d)"
        raise ValueError(f"B must be a tensor of shape {shape} with d = {d}")


def query_mask(batch: BackwardBatch, query: torch.Tensor) -> torch.Tensor:
    """Keys each query may attend to: causal (up to and including the query) and not padding."""
    pos = torch.arange(batch.length)
    return (pos[None, None, :] <= query[:, :, None]) & batch.valid[:, None, :]


def scores(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch, *, first: torch.Tensor | None = None,
           second: torch.Tensor | None = None, member: torch.Tensor | None = None) -> torch.Tensor:
    """Attention logits ``s[b, k, i] = x_i^(2)T B x_q^(1)``: ``(batch, K, L)``, ``-inf`` after the query or on padding.

    ``first``, ``second`` replace the blocks' symbols (greedy decoding); with ``member`` (``(batch,)``) ``B`` is
    ``(members, d, d)`` and tree ``b`` uses ``B[member[b]]``.
    """
    _check(B, A, batch, members=member is not None)
    return _scores(B, A, batch, first, second, member)


def _scores(B, A, batch, first=None, second=None, member=None):
    """:func:`scores` with arguments its caller has checked."""
    E = with_empty(A).to(B.dtype)
    H = E.T @ B @ E  # (S+1, S+1) or (members, S+1, S+1): H[c, v] = a_c^T B a_v
    fst = batch.first if first is None else first
    snd = batch.second if second is None else second
    q_sym = torch.gather(fst, 1, batch.query)  # (batch, K)
    if member is None:
        s = H[snd[:, None, :], q_sym[:, :, None]]
    else:
        s = H[member[:, None, None], snd[:, None, :], q_sym[:, :, None]]
    return s.masked_fill(~query_mask(batch, batch.query), float("-inf"))


def attention(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch, *, member: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced ``softmax(s)``: ``(batch, K, L)``, zero on padded targets; ``member`` as in :func:`scores`."""
    _check(B, A, batch, members=member is not None)
    return _attention(B, A, batch, member)


def _attention(B, A, batch, member=None):
    w = torch.softmax(_scores(B, A, batch, member=member), dim=-1)
    return w * batch.target_mask[:, :, None]


def predict_mass(weights: torch.Tensor, batch: BackwardBatch, *, first=None, second=None):
    """Attention mass per symbol in each block: two tensors of shape ``(batch, K, S + 1)``."""
    fst = batch.first if first is None else first
    snd = batch.second if second is None else second
    shape = (*weights.shape[:2], batch.S + 1)
    m1 = torch.zeros(shape, dtype=weights.dtype).scatter_add_(2, fst[:, None, :].expand_as(weights), weights)
    m2 = torch.zeros(shape, dtype=weights.dtype).scatter_add_(2, snd[:, None, :].expand_as(weights), weights)
    return m1, m2


def predict(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch) -> torch.Tensor:
    """Teacher-forced predictions ``y_hat = sum_i w_i x_i``: shape ``(batch, K, 2d)``."""
    w = attention(B, A, batch)
    m1, m2 = predict_mass(w, batch)
    E = with_empty(A).to(B.dtype)
    return torch.cat([m1 @ E.T, m2 @ E.T], dim=-1)


def squared_error(m1, m2, batch: BackwardBatch, A: torch.Tensor) -> torch.Tensor:
    """``||y_hat - y||^2`` per (tree, position) from the masses via the Gram matrix ``G`` of ``[A, 0]``; a diagonal
    ``G`` skips the dense product (``r @ G`` is then ``r g`` exactly: the same bits)."""
    E = with_empty(A).to(m1.dtype)
    G = E.T @ E
    S1 = batch.S + 1
    r1 = m1 - torch.nn.functional.one_hot(batch.target_first, S1).to(m1.dtype)
    r2 = m2 - torch.nn.functional.one_hot(batch.target_second, S1).to(m1.dtype)
    g = torch.diagonal(G)
    if bool(torch.equal(G, torch.diag(g))):  # exact: a structural test (off-diagonal entries are exact zeros)
        return ((r1 * g) * r1).sum(-1) + ((r2 * g) * r2).sum(-1)
    return ((r1 @ G) * r1).sum(-1) + ((r2 @ G) * r2).sum(-1)


def loss(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch, options: LossOptions = LossOptions(), *,
         member: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced squared loss, normalised by ``options``; with ``member`` (trees stacked member-major, as many
    per member) one loss per member, ``(members,)``."""
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    _check(B, A, batch, members=member is not None)
    return _loss(B, A, batch, options, member)


def _loss(B, A, batch, options, member=None):
    """:func:`loss` with arguments its caller has checked: the body the trainer runs."""
    m1, m2 = predict_mass(_attention(B, A, batch, member), batch)
    err = squared_error(m1, m2, batch, A) * batch.target_mask
    if member is None:
        return normalised(err.sum(), positions=batch.target_mask.sum(), trees=batch.size, options=options)
    M = B.shape[0]
    return normalised(err.reshape(M, -1).sum(1), positions=batch.target_mask.to(err.dtype).reshape(M, -1).sum(1),
                      trees=batch.size // M, options=options)


def round_prediction(m: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """Nearest node symbol to ``E m``: ``argmin_{s < S} ||E m - a_s||^2``, ties to the lower symbol."""
    E = with_empty(A).to(m.dtype)
    G = E.T @ E
    norms = torch.diagonal(G)[:-1]
    cost = norms - 2 * (m @ G)[..., :-1]
    return nearest(cost, float(norms.abs().max()))


def teacher_forced_accuracy(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch) -> float:
    """Fraction of targets whose rounded teacher-forced prediction equals the target token (both blocks)."""
    m1, m2 = predict_mass(attention(B, A, batch), batch)
    ok = (round_prediction(m1, A) == batch.target_first) & (round_prediction(m2, A) == batch.target_second)
    return float(ok[batch.target_mask].double().mean())


def correct_key_weight(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch) -> torch.Tensor:
    """Teacher-forced attention weight on the correct key, the token equal to the target: ``(batch, K)``."""
    w = attention(B, A, batch)
    hit = (batch.first[:, None, :] == batch.target_first[:, :, None]) & (batch.second[:, None, :] == batch.target_second[:, :, None])
    return (w * hit).sum(-1)


@dataclass
class DecodeResult:
    """Greedy decoding of a batch: predicted ``first``, ``second`` and ``step_correct`` ``(batch, K)`` (``False`` on
    padding), ``weights (batch, K, L)``, ``path_correct (batch,)``."""

    first: torch.Tensor
    second: torch.Tensor
    weights: torch.Tensor
    step_correct: torch.Tensor
    path_correct: torch.Tensor
    target_mask: torch.Tensor

    @property
    def step_accuracy(self) -> float:
        """Fraction of correct steps over all real steps."""
        return float(self.step_correct[self.target_mask].double().mean())

    @property
    def path_accuracy(self) -> float:
        """Fraction of trees whose whole path is correct."""
        return float(self.path_correct.double().mean())

    def accuracy_by_step(self) -> np.ndarray:
        """Accuracy at step ``k`` over the trees that have a step ``k``: shape ``(K,)``."""
        num = (self.step_correct & self.target_mask).sum(0).double()
        return (num / self.target_mask.sum(0).clamp(min=1)).numpy()


@torch.no_grad()
def greedy_decode(B: torch.Tensor, A: torch.Tensor, batch: BackwardBatch) -> DecodeResult:
    """Run the model from each goal token on its own rounded outputs, as many steps as the tree has targets (its
    path, plus EOS: a reconstructed stopping rule); all trees at once."""
    _check(B, A, batch)
    first = batch.first.clone()
    second = batch.second.clone()
    rows = torch.arange(batch.size)
    out1 = torch.full(batch.query.shape, batch.S, dtype=torch.int64)
    out2 = out1.clone()
    weights = torch.zeros(batch.size, batch.steps, batch.length, dtype=B.dtype)
    for k in range(batch.steps):
        q = batch.query[:, k]
        w = torch.softmax(_scores(B, A, batch, first, second)[:, k], -1)  # the model at query k
        weights[:, k] = w * batch.target_mask[:, k, None]
        m1, m2 = predict_mass(w[:, None, :], batch, first=first, second=second)
        p1, p2 = round_prediction(m1[:, 0], A), round_prediction(m2[:, 0], A)
        out1[:, k], out2[:, k] = p1, p2
        if k + 1 < batch.steps:
            more = batch.target_mask[:, k + 1]
            first[rows[more], q[more] + 1] = p1[more]
            second[rows[more], q[more] + 1] = p2[more]
    out1 = out1.masked_fill(~batch.target_mask, batch.S)
    out2 = out2.masked_fill(~batch.target_mask, batch.S)
    step_ok = (out1 == batch.target_first) & (out2 == batch.target_second) & batch.target_mask
    path_ok = (step_ok | ~batch.target_mask).all(1)
    return DecodeResult(out1, out2, weights, step_ok, path_ok, batch.target_mask)


def zero_init(A: torch.Tensor) -> dict[str, torch.Tensor]:
    """The papers' initialisation: ``{"B": 0}`` of shape ``(d, d)``."""
    return _zero(check_embeddings(A))


def _zero(A: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"B": torch.zeros(A.shape[0], A.shape[0], dtype=A.dtype)}


def train_backward(A: torch.Tensor, *, m: int, steps: int, lr, batch_size: int = 256, seed: int = 0,
        fixed_batch: BackwardBatch | None = None, options: LossOptions = LossOptions(),
        init: Mapping[str, torch.Tensor] | None = None,
        record: Mapping[str, Callable[[dict[str, torch.Tensor]], object]] | None = None, root_token: bool = True,
        eos: bool = False, progress: bool = False, **train_kwargs) -> History:
    """Train ``B`` from zero: mini-batch SGD on fresh batches of ``batch_size`` perfect trees of depth ``m`` with leaf
    goals (the paper's protocol, batch 256), or full-batch GD on ``fixed_batch``. A recorded loss is that of the
    batch behind the next update; other keywords go to :func:`onelayer.training.train`."""
    A = check_embeddings(A)
    m = check_int("m", m, low=1, high=12)
    batch_size = check_int("batch_size", batch_size, low=1)
    seed = check_int("seed", seed, low=0)
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    if fixed_batch is not None and not isinstance(fixed_batch, BackwardBatch):
        raise TypeError("fixed_batch must be a BackwardBatch or None")
    S = A.shape[1]
    rng = np.random.default_rng(seed)
    params = dict(init) if init is not None else _zero(A)
    _check_B(params.get("B"), A.shape[0])

    if fixed_batch is not None:
        _check(params["B"], A, fixed_batch)

        def loss_fn(params):
            return _loss(params["B"], A, fixed_batch, options)
    else:
        def loss_fn(params):
            batch = perfect_tree_batch(m, S, batch_size, rng, root_token=root_token, eos=eos)
            return _loss(params["B"], A, batch, options)

    return train(params, loss_fn, steps=steps, lr=lr, record=record, progress=progress, desc="backward", **train_kwargs)
