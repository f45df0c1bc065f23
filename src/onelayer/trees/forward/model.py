"""One-layer multi-head models for the forward task (reconstruction R-F, spec sections 4.3-4.4).

Tokens ``x = [x^(1); x^(2); x^(s)] in R^(2d+2)`` (:mod:`~onelayer.trees.forward.layout`); every head ``l`` attends
causally from the query ``x_N`` and the heads' outputs are added and regressed onto the next token:

    y_hat_N = sum_l W^V_l X softmax(s^(l)),      X = [x_1, ..., x_N].

No ``1/sqrt(d)``, positional encoding, residual or MLP. Heads (:class:`ForwardArchitecture`):

* **structured** (section 4.3): ``s^(l)_i = x_i^(2)T U_l x_N^(2) + x_i^(s)T V_l x_N^(s)``, trainable ``U_l``
  (``d x d``) and ``V_l`` (``2 x 2``, [key stage, query stage]) from 0; the value map is fixed by the role:
  ``"swap"`` maps ``[x^(1); x^(2); x^(s)] -> [x^(2); x^(1); 0]``, ``"stage"`` to ``[0; 0; x^(s)]``, ``"swap+stage"``
  does both (section 4.4). :func:`two_head` is ``("swap", "stage")``, :func:`single_head` ``("swap+stage",)``.
* **full** (the authors' single-head ablation of the review discussion, any number of heads): learnable
  ``W^KQ_l``, ``W^V_l``, both ``(2d+2) x (2d+2)``; ``s^(l)_i = x_i^T W^KQ_l x_N``. Heads of one kind and role get
  equal gradients from zero, so several full heads need ``init_scale > 0``.

Every parameterisation is a reconstruction. Loss: ``c * ||y_hat - y||^2`` normalised by
:class:`onelayer.trees.shared.data.LossOptions`; decoding: :mod:`~onelayer.trees.forward.decoding`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import History, train
from ...validation import check_choice, check_float, check_int
from ..shared.embeddings import check_embeddings
from ..shared.data import LossOptions, normalised
from .layout import ForwardBatch, forward_target_vectors, forward_token_vectors, perfect_forward_batch

__all__ = ["ROLES", "KINDS", "ForwardArchitecture", "two_head", "single_head", "full_heads", "init_params",
           "dense_matrices", "literal_predict", "head_logits", "attention", "head_outputs", "role_value", "predict",
           "loss", "member_inputs", "member_loss", "train_forward"]


def literal_predict(params, arch: ForwardArchitecture, tokens: torch.Tensor, query: Sequence[int]) -> torch.Tensor:
    """The model's equation, literally: ``y_hat_N = sum_l W^V_l X softmax(X^T W^KQ_l x_N)``, ``X = [x_1..x_N]``.

    ``tokens (L, 2d+2)``: one tree's real tokens; one output per position in ``query``: ``(len(query), 2d+2)``.
    :func:`predict` is the fast form; ``tests/test_trees_forward_model.py`` checks the two against each other.
    """
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2:
        raise TypeError("tokens must be a 2-D tensor (L, 2d + 2)")
    d = (tokens.shape[1] - 2) // 2
    mats = dense_matrices(params, arch, d)
    rows = []
    for q in query:
        X = tokens[: int(q) + 1].T  # (D, N)
        x_N = X[:, -1]
        y = sum(WV @ X @ torch.softmax(X.T @ WKQ @ x_N, dim=0) for WKQ, WV in mats)
        rows.append(y)
    return torch.stack(rows)


def _logits(params, arch, X, query, keymask):
    """Logits of every head at the queries: ``(heads, [R,] batch, K, L)``; members (:func:`member_loss`) lead with
    ``R``; one-hot members come as symbols (``X`` a dict) and ``x_i^T M x_q`` is gathered as ``M[key, query]``."""
    onehot, members = isinstance(X, dict), query.dim() == 3
    if onehot:
        d = X["S"]
        q_second, q_stage = torch.gather(X["second"], 2, query), torch.gather(X["stage"], 2, query)
    elif members:
        D = X.shape[-1]
        d = (D - 2) // 2
        Xq = torch.gather(X, 2, query[..., None].expand(-1, -1, -1, D))
        q2, q_s, keys2, keys_s = Xq[..., d:2 * d], Xq[..., 2 * d:], X[..., d:2 * d], X[..., 2 * d:]
    else:
        d = (X.shape[-1] - 2) // 2
        Xq = torch.gather(X, 1, query[..., None].expand(-1, -1, X.shape[-1]))  # (batch, K, D)
        if arch.kind == "structured":
            keys2, keys_s = X[..., d : 2 * d].transpose(1, 2).contiguous(), X[..., 2 * d :].transpose(1, 2).contiguous()
            q2, q_s = Xq[..., d : 2 * d].contiguous(), Xq[..., 2 * d :].contiguous()
        else:
            keys = X.transpose(1, 2)
    out = []
    for l in range(1, arch.heads + 1):
        if arch.kind == "full":
            s = (Xq @ params[f"WKQ{l}"].T) @ keys
        elif onehot:
            # the empty node symbol d is the zero row d; stage codes 1, 2 are rows 0, 1 and code 0 the zero row 2
            s = (_gathered(params[f"U{l}"], X["second"], q_second, d + 1, 0)
                 + _gathered(params[f"V{l}"], X["stage"], q_stage, 3, -1))
        elif members:
            s = (torch.einsum("rbke,rfe->rbkf", q2, params[f"U{l}"]) @ keys2.transpose(-1, -2)
                 + torch.einsum("rbke,rfe->rbkf", q_s, params[f"V{l}"]) @ keys_s.transpose(-1, -2))
        else:
            # s_i = x_i^(2)T U x_q^(2) + x_i^(s)T V x_q^(s): project the queries first (K << L).
            s = (q2 @ params[f"U{l}"].T) @ keys2 + (q_s @ params[f"V{l}"].T) @ keys_s
        out.append(s.masked_fill(~keymask, float("-inf")))
    return torch.stack(out)


def _gathered(M: torch.Tensor, keys: torch.Tensor, queries: torch.Tensor, bins: int, offset: int) -> torch.Tensor:
    """``x_i^T M_r x_q`` of one-hot blocks given as symbols ``keys (R, B, L)``, ``queries (R, B, K)``: the entry
    ``M_r[key, query]`` (``offset`` maps a symbol to its row), zero for an empty block (padded to ``bins``)."""
    R, n = M.shape[0], M.shape[1]
    Mp = torch.cat([torch.cat([M, torch.zeros((R, n, bins - n), dtype=M.dtype)], -1),
                    torch.zeros((R, bins - n, bins), dtype=M.dtype)], 1)
    k, q = (keys + offset) % bins, (queries + offset) % bins
    flat = (k[:, :, None, :] * bins + q[:, :, :, None]).reshape(R, -1)
    return torch.gather(Mp.reshape(R, -1), 1, flat).reshape(q.shape + (k.shape[-1],))


def _scattered(w: torch.Tensor, X: dict) -> torch.Tensor:
    """``w @ X`` for one-hot tokens given as symbols: the weights scattered into the symbols' bins (the empty
    symbol ``S`` and the empty stage ``0`` fall into a dropped bin)."""
    S = X["S"]
    parts = []
    for name, bins, keep in (("first", S + 1, slice(0, S)), ("second", S + 1, slice(0, S)), ("stage", 3, slice(1, 3))):
        idx = X[name][:, :, None, :].expand_as(w)
        parts.append(torch.zeros(w.shape[:-1] + (bins,), dtype=w.dtype).scatter_add(-1, idx, w)[..., keep])
    return torch.cat(parts, dim=-1)


def _keymask(batch: ForwardBatch, query: torch.Tensor) -> torch.Tensor:
    pos = torch.arange(batch.length)
    return (pos[None, None, :] <= query[:, :, None]) & batch.valid[:, None, :]


def _values(params, arch, weights, X):
    """Per-head outputs ``W^V_l X w^(l)``: ``(heads, [R,] batch, K, D)`` (members as in ``_logits``)."""
    onehot, members = isinstance(X, dict), weights.dim() == 5
    d = X["S"] if onehot else (X.shape[-1] - 2) // 2
    out = []
    for l in range(1, arch.heads + 1):
        ctx = _scattered(weights[l - 1], X) if onehot else weights[l - 1] @ X  # the attention-weighted token
        if arch.kind == "full" or arch.roles[l - 1] == "learned":
            WV = params[f"WV{l}"]
            out.append(torch.einsum("rbkd,red->rbke", ctx, WV) if members else ctx @ WV.T)
            continue
        out.append(role_value(ctx, arch.roles[l - 1], d))
    return torch.stack(out)


def role_value(ctx: torch.Tensor, role: str, d: int) -> torch.Tensor:
    """The fixed value map ``W^V_l`` of a structured head applied to attended tokens ``ctx`` (``(..., 2d+2)``): the
    two node blocks swapped (``"swap"``) and/or the stage copied (``"stage"``), zero elsewhere."""
    zeros = torch.zeros_like(ctx[..., :d])
    nodes = [ctx[..., d : 2 * d], ctx[..., :d]] if "swap" in role else [zeros, zeros]
    stage = ctx[..., 2 * d :] if "stage" in role else torch.zeros_like(ctx[..., 2 * d :])
    return torch.cat(nodes + [stage], dim=-1)


def head_logits(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced logits of every head: ``(heads, batch, K, L)``, ``-inf`` on masked keys; ``X``: the tokens."""
    _check_all(params, arch, A, batch)
    X = forward_token_vectors(batch, A) if X is None else X
    return _logits(params, arch, X, batch.query, _keymask(batch, batch.query))


def _attention(params, arch, batch, X):
    w = torch.softmax(_logits(params, arch, X, batch.query, _keymask(batch, batch.query)), dim=-1)
    return w * batch.target_mask[None, :, :, None].to(w.dtype)


def attention(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced attention weights of every head: ``(heads, batch, K, L)``; padded targets get zeros."""
    _check_all(params, arch, A, batch)
    return _attention(params, arch, batch, forward_token_vectors(batch, A) if X is None else X)


def head_outputs(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Each head's teacher-forced output ``W^V_l X w^(l)``: ``(heads, batch, K, 2d + 2)``."""
    _check_all(params, arch, A, batch)
    X = forward_token_vectors(batch, A) if X is None else X
    return _values(params, arch, _attention(params, arch, batch, X), X)


def predict(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced predictions ``y_hat`` (sum over heads): ``(batch, K, 2d + 2)``."""
    return head_outputs(params, arch, A, batch, X).sum(0)


def _loss(params, arch, A, batch, options, X=None):
    """The teacher-forced squared loss ``c * sum ||y_hat - y||^2``, normalised (:func:`loss` checks its arguments)."""
    X = forward_token_vectors(batch, A) if X is None else X
    y_hat = _values(params, arch, _attention(params, arch, batch, X), X).sum(0)
    err = ((y_hat - forward_target_vectors(batch, A)) ** 2).sum(-1)
    return normalised((err * batch.target_mask).sum(), positions=batch.target_mask.sum(), trees=batch.size, options=options)


def loss(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch,
        options: LossOptions = LossOptions(), X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced squared loss of the batch (differentiable in ``params``); normalisation from ``options``."""
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    _check_all(params, arch, A, batch)
    return _loss(params, arch, A, batch, options, X)


def member_inputs(batches: Sequence[ForwardBatch], A) -> dict:
    """One batch per member (equal shapes) stacked on a leading axis: ``Y (R, B, K, 2d+2)``, ``query``, ``keymask``,
    ``target_mask`` and the tokens ``X (R, B, L, 2d+2)`` (one-hot ``A``: their symbols). ``A``: one, or one per member."""
    As = list(A) if isinstance(A, (list, tuple)) else [A] * len(batches)
    S = As[0].shape[1]
    onehot = all(a.shape[0] == S and bool(torch.equal(a, torch.eye(S, dtype=a.dtype))) for a in {id(a): a for a in As}.values())  # exact: 0/1
    parts = {"X": [], "Y": [], "query": [], "keymask": [], "target_mask": []}
    if onehot:
        parts.update({"first": [], "second": [], "stage": []})
    for b, A in zip(batches, As):
        if onehot:
            for name in ("first", "second", "stage"):
                parts[name].append(getattr(b, name))
        else:
            parts["X"].append(forward_token_vectors(b, A))
        parts["Y"].append(forward_target_vectors(b, A))
        parts["query"].append(b.query)
        parts["keymask"].append(_keymask(b, b.query))
        parts["target_mask"].append(b.target_mask)
    out = {k: torch.stack(v) for k, v in parts.items() if v}
    if onehot:
        out["S"] = S
    return out


def member_loss(params, arch: ForwardArchitecture, data: dict, options: LossOptions = LossOptions()) -> torch.Tensor:
    """:func:`loss` of ``R`` members at once, ``(R,)``, on :func:`member_inputs` (parameters ``(R, ...)``)."""
    tokens = {k: data[k] for k in ("first", "second", "stage", "S")} if "S" in data else data["X"]
    mask = data["target_mask"]
    w = torch.softmax(_logits(params, arch, tokens, data["query"], data["keymask"]), dim=-1)
    w = w * mask[None, ..., None].to(data["Y"].dtype)
    err = ((_values(params, arch, w, tokens).sum(0) - data["Y"]) ** 2).sum(-1) * mask
    return normalised(err.sum((1, 2)), positions=mask.sum((1, 2)), trees=mask.shape[1], options=options)


def train_forward(arch: ForwardArchitecture, A: torch.Tensor, *, m: int, steps: int, lr, batch_size: int = 256,
        seed: int = 0, options: LossOptions = LossOptions(), cot: bool = True, eos: bool = False,
        transform: Callable[[ForwardBatch], ForwardBatch] | None = None,
        init: Mapping[str, torch.Tensor] | None = None, fixed_batch: ForwardBatch | None = None,
        record: Mapping[str, Callable[[dict[str, torch.Tensor]], object]] | None = None, progress: bool = False,
        **train_kwargs) -> History:
    """Mini-batch SGD from zero (or ``init``) on fresh batches of ``batch_size`` perfect trees of depth ``m`` with
    leaf goals, seeded by ``seed`` (the paper's protocol, batch 256), or full-batch GD on ``fixed_batch``.
    ``transform`` maps each drawn batch to a studies' layout; other keywords go to :func:`onelayer.training.train`.
    """
    _check_arch(arch)
    A = check_embeddings(A)
    sizes = {"m": (m, 1, 12), "batch_size": (batch_size, 1, None), "seed": (seed, 0, None)}
    m, batch_size, seed = (check_int(name, v, low=lo, high=hi) for name, (v, lo, hi) in sizes.items())
    for name, value, kind in (("options", options, LossOptions), ("fixed_batch", fixed_batch, (ForwardBatch, type(None)))):
        if not isinstance(value, kind):
            raise TypeError(f"{name} must be a {'LossOptions' if name == 'options' else 'ForwardBatch or None'}")
    S = A.shape[1]
    rng = np.random.default_rng(seed)
    params = _init(arch, A) if init is None else _check_params(dict(init), arch, A.shape[0])

    if fixed_batch is not None:
        if fixed_batch.S != S:
            raise ValueError(f"fixed_batch uses S={fixed_batch.S} symbols but A has {S} columns")
        X_fixed = forward_token_vectors(fixed_batch, A)

        def loss_fn(p):
            return _loss(p, arch, A, fixed_batch, options, X_fixed)
    else:
        def loss_fn(p):
            batch = perfect_forward_batch(m, S, batch_size, rng, cot=cot, eos=eos)
            return _loss(p, arch, A, batch if transform is None else transform(batch), options)

    return train(params, loss_fn, steps=steps, lr=lr, record=record, progress=progress, desc="forward", **train_kwargs)


# -- architectures and their parameters ---------------------------------------------------------------------------

#: Value maps of structured heads: fixed (``"swap"``, ``"stage"``, ``"swap+stage"``) or a trainable dense
#: ``W^V_l`` (``"learned"``, a named variation).
ROLES = ("swap", "stage", "swap+stage", "learned")
#: Kinds of architecture.
KINDS = ("structured", "full")


@dataclass(frozen=True)
class ForwardArchitecture:
    """Which heads the model has: ``kind="structured"`` (trainable ``U_l, V_l``, value maps fixed by ``roles``,
    one of :data:`ROLES` per head) or ``"full"`` (``heads >= 1`` heads with trainable ``W^KQ_l, W^V_l``)."""

    kind: str = "structured"
    roles: tuple[str, ...] = ("swap", "stage")
    heads: int = 0

    def __post_init__(self):
        check_choice("kind", self.kind, KINDS)
        if self.kind == "structured":
            if not isinstance(self.roles, tuple) or not self.roles:
                raise ValueError("roles must be a non-empty tuple of head roles")
            for i, r in enumerate(self.roles):
                check_choice(f"roles[{i}]", r, ROLES)
            object.__setattr__(self, "heads", len(self.roles))
        else:
            check_int("heads", self.heads, low=1, high=64)
            object.__setattr__(self, "roles", ())

    @property
    def n_heads(self) -> int:
        """Number of heads."""
        return self.heads

    def param_names(self) -> list[str]:
        """Names of the trainable matrices, head by head (``U1, V1, U2, V2`` or ``WKQ1, WV1, ...``)."""
        if self.kind == "structured":
            return [f"{p}{l}" for l, role in enumerate(self.roles, 1)
                    for p in (("U", "V", "WV") if role == "learned" else ("U", "V"))]
        return [f"{p}{l}" for l in range(1, self.heads + 1) for p in ("WKQ", "WV")]

    def label(self) -> str:
        """A short human-readable description."""
        if self.kind == "structured":
            return f"{self.heads} structured head{'s' * (self.heads > 1)} ({', '.join(self.roles)})"
        return f"{self.heads} full head{'s' * (self.heads > 1)}"


def two_head() -> ForwardArchitecture:
    """The spec's two-head model: head 1 swaps the node blocks, head 2 copies the stage."""
    return ForwardArchitecture("structured", ("swap", "stage"))


def single_head() -> ForwardArchitecture:
    """The spec's structured single head (section 4.4): one ``U_1, V_1``; value swaps *and* copies the stage."""
    return ForwardArchitecture("structured", ("swap+stage",))


def full_heads(heads: int = 1) -> ForwardArchitecture:
    """``heads`` heads with fully learnable ``(2d+2) x (2d+2)`` key-query and value matrices."""
    return ForwardArchitecture("full", (), check_int("heads", heads, low=1, high=64))


def _check_arch(arch):
    if not isinstance(arch, ForwardArchitecture):
        raise TypeError(f"arch must be a ForwardArchitecture (two_head(), single_head(), full_heads(L)), got {type(arch).__name__}")
    return arch


def _shapes(arch: ForwardArchitecture, d: int) -> dict[str, tuple[int, int]]:
    D = 2 * d + 2
    if arch.kind == "structured":
        return {n: {"U": (d, d), "V": (2, 2), "W": (D, D)}[n[0]] for n in arch.param_names()}
    return {n: (D, D) for n in arch.param_names()}


def init_params(arch: ForwardArchitecture, A: torch.Tensor, *, init_scale: float = 0.0,
        gen: torch.Generator | None = None) -> dict[str, torch.Tensor]:
    """Zero (the papers' choice) or, the named variation ``init_scale > 0`` (with ``gen``), ``N(0, init_scale^2)``."""
    _check_arch(arch)
    A = check_embeddings(A)
    init_scale = check_float("init_scale", init_scale, low=0.0)
    if init_scale > 0 and not isinstance(gen, torch.Generator):
        raise TypeError("gen must be a torch.Generator when init_scale > 0")
    return _init(arch, A, init_scale, gen)


def _init(arch: ForwardArchitecture, A: torch.Tensor, init_scale: float = 0.0, gen=None) -> dict[str, torch.Tensor]:
    params = {}
    for name, shape in _shapes(arch, A.shape[0]).items():
        if init_scale > 0:
            params[name] = (init_scale * torch.randn(shape, generator=gen, dtype=torch.float64)).to(A.dtype)
        else:
            params[name] = torch.zeros(shape, dtype=A.dtype)
    return params


def _check_params(params, arch, d):
    if not isinstance(params, Mapping):
        raise TypeError("params must be a mapping name -> tensor")
    for name, shape in _shapes(arch, d).items():
        if name not in params:
            raise ValueError(f"params is missing {name!r}; {arch.label()} needs {arch.param_names()}")
        if not isinstance(params[name], torch.Tensor) or tuple(params[name].shape) != shape:
            raise ValueError(f"params[{name!r}] must be a tensor of shape {shape}")
    return params


def _check_all(params, arch, A, batch):
    _check_arch(arch)
    if not isinstance(batch, ForwardBatch):
        raise TypeError(f"batch must be a ForwardBatch, got {type(batch).__name__}")
    if not isinstance(A, torch.Tensor) or A.dim() != 2 or A.shape[1] != batch.S:
        raise ValueError(f"A must be a tensor of shape (d, S={batch.S})")
    _check_params(params, arch, A.shape[0])


def dense_matrices(params, arch: ForwardArchitecture, d: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Every head as dense ``(W^KQ_l, W^V_l)``, ``(2d+2) x (2d+2)``: a structured head puts ``U_l``, ``V_l`` in the
    (node-2, node-2) and (stage, stage) blocks of ``W^KQ_l``, its fixed swap/stage copy in ``W^V_l``."""
    _check_arch(arch)
    d = check_int("d", d, low=1)
    _check_params(params, arch, d)
    D = 2 * d + 2
    out = []
    for l in range(1, arch.heads + 1):
        if arch.kind == "full":
            out.append((params[f"WKQ{l}"], params[f"WV{l}"]))
            continue
        role = arch.roles[l - 1]
        dt = params[f"U{l}"].dtype
        WKQ = torch.zeros(D, D, dtype=dt)
        WKQ[d : 2 * d, d : 2 * d] = params[f"U{l}"]
        WKQ[2 * d :, 2 * d :] = params[f"V{l}"]
        WV = params[f"WV{l}"] if role == "learned" else torch.zeros(D, D, dtype=dt)
        if "swap" in role:
            WV[:d, d : 2 * d] = torch.eye(d, dtype=dt)
            WV[d : 2 * d, :d] = torch.eye(d, dtype=dt)
        if "stage" in role:
            WV[2 * d :, 2 * d :] = torch.eye(2, dtype=dt)
        out.append((WKQ, WV))
    return out
