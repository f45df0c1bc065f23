"""Batched walk trainer: many zero-initialised ring-walk transformers trained in one set of tensor operations.

A *member* is one run of :meth:`onelayer.walks.model.WalkTransformer.train`:
its own training walks (data seed, walk parameter ``p``), its own step size
and, for the Gaussian initialisation, its own initialisation seed. Members
that share the model (``K``, ``N``, ``M`` and every option of
:class:`~onelayer.walks.model.ModelConfig`) and the number of training walks
``n`` are trained together by :func:`onelayer.training.train` (``members=True``) with a
leading member axis ``B``:

* :class:`BatchedData`: the training walks of every member, int64 tokens
  ``(B, n, N - 1)``, labels ``(B, n)`` and weights ``(B, n)``
  (:func:`walk_batched_data` samples them, :meth:`BatchedData.stack` stacks
  :class:`~onelayer.walks.data.TokenData` objects);
* :func:`init_params`: ``{"V": (B, K, K), "q": (B, K + M)}`` (zero, or Gaussian
  per initialisation seed, exactly as :meth:`~onelayer.walks.model.WalkTransformer.init`);
* :func:`loss_and_grads`: the closed-form gradients of
  :meth:`~onelayer.walks.model.WalkTransformer.loss_and_grads` with a member axis (in chunks of members). As there, the
  entry ``"q"`` is ``||x~_N||^2 dL/dq``, so that ``q -= eta * grads["q"]`` is
  the GD step on the merged matrix ``W``;
* :func:`train_batched`: the batched training itself, returning a
  :class:`~onelayer.training.BatchedHistory`;
* :func:`attention_records`: per-member record functions (attention on the
  parent, accuracy, conditional accuracy) on any batched walks.

There is one forward pass: :func:`forward_pass` and :func:`loss_and_grads` call
:meth:`~onelayer.walks.model.WalkTransformer.forward_raw` and
:meth:`~onelayer.walks.model.WalkTransformer.loss_and_grads_raw` of the
shared model with the member axis as a leading axis, so member ``b`` goes
through the same floating-point operations as a separate run except the two
products with the positional matrix ``P`` (one matrix product for all members
instead of one matrix-vector product each). In float64 a batched run reproduces
separate runs to about ``1e-13`` (``tests/test_walks_batched.py`` asks for ``1e-10``).

Defaults are the paper's Section 5.1 setting (those of :class:`ModelConfig` and
of :meth:`~onelayer.walks.model.WalkTransformer.train`): zero initialisation, log-loss with
``epsilon = 0.1`` averaged over the walks, step size ``eta = 1``, sinusoidal
positions, no normalisation. Only plain gradient descent is available (the
``q`` reduction is exact for GD only).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import BatchedHistory, train
from ...validation import check_float, check_instances, check_int, check_probability
from ...walks import prediction, ring
from ...walks.data import TokenData, walk_data
from ...walks.model import INITS, WalkTransformer

__all__ = [
    "BatchedData",
    "walk_batched_data",
    "member_values",
    "init_params",
    "forward_pass",
    "losses_per_member",
    "loss_and_grads",
    "CHUNK_ENTRIES",
    "train_batched",
    "attention_records",
]


@dataclass(frozen=True)
class BatchedData:
    """The training (or test) walks of ``B`` members, each with ``n`` sequences of length ``N``.

    Attributes
    ----------
    tokens:
        int64 ``(B, n, N - 1)``: token index of positions ``1..N-1`` (values in ``0..K-1``).
    labels:
        int64 ``(B, n)``: the targets ``y``.
    weights:
        float64 ``(B, n)``, non-negative, each row summing to 1.
    K:
        Vocabulary size (number of ring nodes).
    """

    tokens: torch.Tensor
    labels: torch.Tensor
    weights: torch.Tensor
    K: int

    def __post_init__(self):
        t, y, w = self.tokens, self.labels, self.weights
        if not isinstance(t, torch.Tensor) or t.ndim != 3 or min(t.shape) < 1:
            raise TypeError("tokens must be an int64 tensor of shape (B, n, N-1) with B, n >= 1 and N >= 2")
        for name, value, dtype in (("labels", y, torch.int64), ("weights", w, torch.float64)):
            if not isinstance(value, torch.Tensor) or value.dtype != dtype or value.shape != t.shape[:2]:
                raise TypeError(f"{name} must be a {dtype} tensor of shape {tuple(t.shape[:2])}")
        for b in range(t.shape[0]):  # dtypes, value ranges and weights, member by member
            TokenData(t[b], y[b], w[b], self.K)

    @property
    def B(self) -> int:
        """Number of members."""
        return self.tokens.shape[0]

    @property
    def n(self) -> int:
        """Number of sequences per member."""
        return self.tokens.shape[1]

    @property
    def N(self) -> int:
        """Sequence length including the query slot."""
        return self.tokens.shape[2] + 1

    @property
    def last(self) -> torch.Tensor:
        """The last observed token ``s_{N-1}`` of every sequence, ``(B, n)``."""
        return self.tokens[:, :, -1]

    @classmethod
    def stack(cls, datas: Sequence[TokenData]) -> BatchedData:
        """Stack ``B >= 1`` :class:`~onelayer.walks.data.TokenData` with equal ``K``, ``N`` and ``B`` (= ``n``)."""
        datas = check_instances("datas", datas, TokenData, "one per member")
        for i, d in enumerate(datas):
            if (d.K, d.N, d.B) != (datas[0].K, datas[0].N, datas[0].B):
                raise ValueError(f"datas[{i}] has K={d.K}, N={d.N}, {d.B} sequences; datas[0] has "
                                 f"K={datas[0].K}, N={datas[0].N}, {datas[0].B} sequences")
        return cls(torch.stack([d.tokens for d in datas]), torch.stack([d.labels for d in datas]),
                   torch.stack([d.weights for d in datas]), datas[0].K)

    def member(self, b: int) -> TokenData:
        """Member ``b``'s walks as an ordinary :class:`~onelayer.walks.data.TokenData`."""
        b = check_int("b", b, low=0, high=self.B - 1)
        return TokenData(self.tokens[b], self.labels[b], self.weights[b], self.K)


def member_values(name: str, values, size: int | None = None) -> list:
    """One value per member: a scalar is repeated ``size`` times, a sequence must have length ``size``.

    With ``size=None`` a sequence sets the number of members and a scalar gives one member.
    """
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a number or a sequence of numbers, got str")
    scalar = isinstance(values, (np.ndarray, torch.Tensor)) and values.ndim == 0
    if scalar or isinstance(values, (numbers.Number, np.number)):
        return [values.item() if hasattr(values, "item") else values] * (1 if size is None else size)
    try:
        out = [v.item() if hasattr(v, "item") else v for v in values]
    except TypeError:
        raise TypeError(f"{name} must be a number or a sequence of numbers, got {type(values).__name__}") from None
    if not out:
        raise ValueError(f"{name} must contain at least one value")
    if size is not None and len(out) != size:
        raise ValueError(f"{name} must be a number or have one value per member ({size}), got {len(out)} values")
    return out


def walk_batched_data(K: int, N: int, n: int, *, ps=0.5, seeds=0) -> BatchedData:
    """``n`` sampled ring walks per member: member ``b`` is ``walk_data(K, ps[b], N, n, seed=seeds[b])``.

    ``ps`` and ``seeds`` are each a scalar (shared) or a sequence with one
    value per member; two sequences must have equal lengths.
    """
    K = check_int("K", K, low=3)
    N = check_int("N", N, low=2)
    n = check_int("n", n, low=1)
    lengths = {len(v) for v in (ps, seeds) if not isinstance(v, (numbers.Number, np.number, str, bytes))
               and hasattr(v, "__len__")}
    if len(lengths) > 1:
        raise ValueError(f"ps and seeds must have the same number of members, got lengths {sorted(lengths)}")
    size = lengths.pop() if lengths else 1
    ps = [check_probability(f"ps[{i}]", v) for i, v in enumerate(member_values("ps", ps, size))]
    seeds = [check_int(f"seeds[{i}]", v, low=0) for i, v in enumerate(member_values("seeds", seeds, size))]
    return BatchedData.stack([walk_data(K, p, N, n, seed=s) for p, s in zip(ps, seeds)])


def _check_model(model) -> WalkTransformer:
    if not isinstance(model, WalkTransformer):
        raise TypeError(f"model must be a onelayer.walks.model.WalkTransformer, got {type(model).__name__}")
    return model


def _check_data(model: WalkTransformer, data) -> BatchedData:
    if not isinstance(data, BatchedData):
        raise TypeError(f"data must be a onelayer.studies.walks.batched.BatchedData, got {type(data).__name__}")
    if data.K != model.config.K or data.N != model.config.N:
        raise ValueError(f"data has K={data.K}, N={data.N}; the model expects K={model.config.K}, N={model.config.N}")
    return data


def _check_params(model: WalkTransformer, params, size: int) -> None:
    c = model.config
    shapes = {"V": (size, model.value_rows, c.K), "q": (size, model.D)}
    if c.hidden is not None:
        shapes["A"] = (size, c.K, c.hidden)
    if not isinstance(params, Mapping) or set(params) != set(shapes):
        raise ValueError(f"params must contain exactly {sorted(shapes)} (use onelayer.studies.walks.batched.init_params)")
    for name, shape in shapes.items():
        t = params[name]
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != shape:
            got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
            raise ValueError(f"params[{name!r}] must have shape {shape}, got {got}")


def init_params(model: WalkTransformer, members: int, init: str = "zero", *, sigma: float = 0.01,
                seeds=0) -> dict[str, torch.Tensor]:
    """Initial parameters of ``members`` runs, ``name -> (B, ...)``.

    Member ``b`` gets exactly ``model.init(init, sigma=sigma, seed=seeds[b])``
    (``seeds`` a scalar or one value per member; unused for ``"zero"``).
    """
    model = _check_model(model)
    members = check_int("members", members, low=1)
    if init not in INITS:
        raise ValueError(f"init must be one of {', '.join(map(repr, INITS))}; got {init!r}")
    sigma = check_float("sigma", sigma, low=0.0)
    if init == "zero":
        one = model.init("zero")
        return {name: t.expand((members,) + t.shape).clone() for name, t in one.items()}
    seeds = [check_int(f"seeds[{i}]", s, low=0) for i, s in enumerate(member_values("seeds", seeds, members))]
    runs = [model.init("gaussian", sigma=sigma, seed=s) for s in seeds]
    return {name: torch.stack([r[name] for r in runs]) for name in runs[0]}


# -- the batched forward pass and its gradients: WalkTransformer's own, with a member axis ---------------------
#: Default work per chunk of members: about this many attention entries (members x walks x positions),
#: i.e. intermediate tensors of about 2 MB in float64.
CHUNK_ENTRIES = 2**18


def _chunks(model: WalkTransformer, data: BatchedData, chunk: int | None) -> list[slice]:
    """Slices of the member axis; each chunk is computed separately (results do not depend on it)."""
    if chunk is None:
        chunk = max(1, CHUNK_ENTRIES // (data.n * data.N))
    else:
        chunk = check_int("chunk", chunk, low=1)
    return [slice(lo, min(lo + chunk, data.B)) for lo in range(0, data.B, chunk)]


def forward_pass(model: WalkTransformer, params: Mapping[str, torch.Tensor],
                 data: BatchedData) -> dict[str, torch.Tensor]:
    """Logits ``z`` and attention ``S`` (``(B, n, N)``), weighted token ``u`` and output ``f`` (``(B, n, K)``).

    With a hidden ReLU layer also the pre-activation ``h``. Member ``b`` sees
    only ``params[.][b]`` and ``data``'s member ``b``.
    """
    model, data = _check_model(model), _check_data(model, data)
    _check_params(model, params, data.B)
    return model.forward_raw(params, data.tokens)


def losses_per_member(model: WalkTransformer, params: Mapping[str, torch.Tensor], data: BatchedData) -> torch.Tensor:
    """Training loss of every member, ``(B,)`` (differentiable if the parameters require grad)."""
    return model.loss_of_scores(forward_pass(model, params, data)["f"], data.labels, data.weights)


def loss_and_grads(model: WalkTransformer, params: Mapping[str, torch.Tensor], data: BatchedData, *,
                   chunk: int | None = None) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Per-member losses ``(B,)`` and closed-form gradients ``name -> (B, ...)``.

    Member ``b`` of every entry equals :meth:`~onelayer.walks.model.WalkTransformer.loss_and_grads` on
    member ``b``'s parameters and walks; ``grads["q"]`` is ``||x~_N||^2 dL/dq``.

    ``chunk`` members are computed at a time (default: about
    :data:`CHUNK_ENTRIES` attention entries per chunk). Small problems gain
    from many members per chunk (fewer Python-level operations); large ones
    lose: intermediate tensors of several MB leave the cache and are allocated
    and freed with fresh pages at every operation (measured at the paper's
    size: 16 members in one chunk take twice as long per step as chunks of
    two). The result does not depend on ``chunk`` beyond round-off of the
    products with ``P``.
    """
    model, data = _check_model(model), _check_data(model, data)
    _check_params(model, params, data.B)
    parts = [model.loss_and_grads_raw({k: v[s] for k, v in params.items()}, data.tokens[s], data.labels[s],
                                         data.weights[s]) for s in _chunks(model, data, chunk)]
    if len(parts) == 1:
        return parts[0]
    loss = torch.cat([p[0] for p in parts])
    return loss, {k: torch.cat([p[1][k] for p in parts]) for k in parts[0][1]}


# -- records and training ------------------------------------------------------------------------
def attention_records(model: WalkTransformer, data: BatchedData, ps=None, *,
                      chunk: int | None = None) -> dict[str, Callable]:
    """Record functions ``params -> (B,)`` on the walks ``data`` (e.g. held-out test walks of every member).

    ``"parent_attention"``: mean attention on the direct parent ``x_{N-1}``
    (weighted by ``data.weights``); ``"accuracy"``: weighted accuracy of the
    smallest-index prediction rule. With ``ps`` (the walk parameter of every
    member, scalar or ``(B,)``) also ``"conditional_accuracy"``, the weighted mean
    of ``Pi_b[s_{N-1}, y_hat]`` (equal to ``max(p, 1 - p)`` exactly when every
    prediction is Bayes-optimal). ``chunk`` as in :func:`loss_and_grads`.
    """
    model, data = _check_model(model), _check_data(model, data)
    slices = _chunks(model, data, chunk)
    w = data.weights.to(model.dtype)
    Pis = None
    if ps is not None:
        ps = [check_probability(f"ps[{i}]", p) for i, p in enumerate(member_values("ps", ps, data.B))]
        Pis = torch.stack([torch.as_tensor(ring.transition_matrix(data.K, p)) for p in ps])  # (B, K, K)
    rows = torch.arange(data.B)[:, None]
    cache = {}

    def evaluate(prm) -> dict[str, torch.Tensor]:
        # The three records of one recorded step share one forward pass.
        key = tuple((name, t.data_ptr(), t._version) for name, t in sorted(prm.items()))
        if cache.get("key") != key:
            _check_params(model, prm, data.B)
            parent, pred = [], []
            for s in slices:
                out = model.forward_raw({k: v[s] for k, v in prm.items()}, data.tokens[s])
                parent.append(out["S"][:, :, -2])
                pred.append(prediction.predict(out["f"].reshape(-1, data.K)).reshape(-1, data.n))
            cache.update(key=key, parent=torch.cat(parent), pred=torch.cat(pred))
        return cache

    records = {
        "parent_attention": lambda prm: (evaluate(prm)["parent"] * w).sum(dim=1),
        "accuracy": lambda prm: ((evaluate(prm)["pred"] == data.labels).to(model.dtype) * w).sum(dim=1),
    }
    if Pis is not None:
        records["conditional_accuracy"] = lambda prm: (Pis[rows, data.last, evaluate(prm)["pred"]] * w).sum(dim=1)
    return records


def train_batched(model: WalkTransformer, data: BatchedData, *, steps: int, lr=1.0, init: str = "zero",
                sigma: float = 0.01, init_seeds=0, params: Mapping[str, torch.Tensor] | None = None,
                record: Mapping[str, Callable] | None = None, record_every: int = 1, record_at=None,
                snapshot_at=(), chunk: int | None = None, progress: bool = False,
                desc: str = "walks members") -> BatchedHistory:
    """Full-batch GD of every member at once (:func:`onelayer.training.train` with ``members=True`` and :func:`loss_and_grads`).

    Parameters
    ----------
    model:
        The shared :class:`~onelayer.walks.model.WalkTransformer` (sizes and options).
    data:
        The members' training walks (:func:`walk_batched_data`).
    steps:
        Number of GD steps (``>= 0``).
    lr:
        Step size: a positive number, one per member (``(B,)``), a schedule
        ``t -> number or (B,)`` or a mapping ``{"V": ..., "q": ...}``
        (as :func:`onelayer.training.train` with ``members=True``). Default 1, the paper's.
    init, sigma, init_seeds:
        Initialisation when ``params`` is not given (see :func:`init_params`;
        default zero, the paper's).
    params:
        Explicit initial parameters ``name -> (B, ...)`` instead of ``init``.
    record:
        ``name -> fn(params) -> (B, ...)`` (e.g. :func:`attention_records`).
    record_every, record_at, snapshot_at, progress, desc:
        As in :func:`onelayer.training.train` with ``members=True``.
    chunk:
        Members per chunk of :func:`loss_and_grads` (default: automatic).

    Returns
    -------
    onelayer.training.BatchedHistory
        Records ``(T, B, ...)``; ``history.member(b)`` is member ``b`` as an
        ordinary :class:`~onelayer.training.History`.
    """
    model, data = _check_model(model), _check_data(model, data)
    steps = check_int("steps", steps, low=0)
    _chunks(model, data, chunk)  # validates chunk
    if params is None:
        params = init_params(model, data.B, init, sigma=sigma, seeds=init_seeds)
    _check_params(model, params, data.B)
    params = {name: t.to(model.dtype) for name, t in params.items()}
    return train(params, lambda prm: losses_per_member(model, prm, data), members=True, steps=steps, lr=lr, record=record,
                      record_every=record_every, record_at=record_at, snapshot_at=snapshot_at,
                      grad_fn=lambda prm: loss_and_grads(model, prm, data, chunk=chunk), progress=progress,
                      desc=desc)
