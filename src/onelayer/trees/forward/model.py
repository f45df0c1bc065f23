"""One-layer multi-head models for the forward task (reconstruction R-F, spec sections 4.3-4.4).

Tokens are ``x = [x^(1); x^(2); x^(s)] in R^(2d+2)`` (:mod:`~onelayer.trees.forward.layout`).
Every head ``l`` attends causally from the query ``x_N`` (the last token) and
the heads' outputs are added; the sum is regressed onto the next token:

    y_hat_N = sum_l W^V_l X softmax(s^(l)),      X = [x_1, ..., x_N].

No ``1/sqrt(d)``, no positional encoding, no residual, no MLP. Three kinds of
head are available (:class:`ForwardArchitecture`):

* **structured** (the spec's two-head model, section 4.3): the logits are
  ``s^(l)_i = x_i^(2)T U_l x_N^(2) + x_i^(s)T V_l x_N^(s)`` with trainable
  ``U_l`` (``d x d``) and ``V_l`` (``2 x 2``, indexed [key stage, query
  stage]), started at 0; the value map is *fixed* by the head's role:
  ``"swap"`` maps ``[x^(1); x^(2); x^(s)] -> [x^(2); x^(1); 0]`` (traversal),
  ``"stage"`` maps it to ``[0; 0; x^(s)]`` (stage control), and
  ``"swap+stage"`` does both (the spec's structured single head, section 4.4).
  :func:`two_head` is roles ``("swap", "stage")``, :func:`single_head` is
  ``("swap+stage",)``; any tuple of roles is accepted.
* **full** (the authors' single-head ablation as described in the review
  discussion, with any number of heads): every head has a fully learnable
  key-query matrix ``W^KQ_l`` and value matrix ``W^V_l``, both
  ``(2d+2) x (2d+2)``; ``s^(l)_i = x_i^T W^KQ_l x_N``.

Every parameterisation is a reconstruction (the paper's equations were not
visible). Zero initialisation is the default; with it, heads of the same
kind and role receive identical gradients and stay identical forever, so a
genuinely multi-head *full* model needs the named variation
``init_scale > 0`` (a small Gaussian initialisation).

Loss: squared error ``c * ||y_hat - y||^2`` with the normalisation of
:class:`onelayer.trees.shared.losses.LossOptions` (mean over positions with
``c = 1/2`` by default, or sum over positions; ``c = 1`` with ``half=False``),
shared with the backward part.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import History, train
from ...validation import check_choice, check_float, check_int
from ..shared.embeddings import check_embeddings, with_empty
from ..shared.losses import LossOptions
from .layout import (
    STEP_TYPES,
    ForwardBatch,
    answer_from_chain,
    forward_target_vectors,
    forward_token_vectors,
    perfect_forward_batch,
)

__all__ = [
    "ROLES",
    "KINDS",
    "ForwardArchitecture",
    "two_head",
    "single_head",
    "full_heads",
    "init_params",
    "head_logits",
    "attention",
    "head_outputs",
    "predict",
    "loss",
    "round_tokens",
    "teacher_forced_correct",
    "block_correct",
    "accuracy_by_type",
    "ForwardDecodeResult",
    "greedy_decode",
    "train_forward",
    "dense_matrices",
    "reference_predict",
]

#: Fixed value maps of structured heads.
ROLES = ("swap", "stage", "swap+stage")
#: Kinds of architecture.
KINDS = ("structured", "full")


@dataclass(frozen=True)
class ForwardArchitecture:
    """Which heads the model has.

    Parameters
    ----------
    kind:
        ``"structured"`` (trainable ``U_l, V_l``, fixed value maps) or
        ``"full"`` (trainable ``W^KQ_l, W^V_l``).
    roles:
        For ``"structured"``: one role from :data:`ROLES` per head.
    heads:
        For ``"full"``: the number of heads (``>= 1``).
    """

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
            return [f"{p}{l}" for l in range(1, self.heads + 1) for p in ("U", "V")]
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
        return {n: ((d, d) if n[0] == "U" else (2, 2)) for n in arch.param_names()}
    return {n: (D, D) for n in arch.param_names()}


def init_params(
    arch: ForwardArchitecture,
    A: torch.Tensor,
    *,
    init_scale: float = 0.0,
    gen: torch.Generator | None = None,
) -> dict[str, torch.Tensor]:
    """Initial parameters: zero (the papers' choice, default) or i.i.d. ``N(0, init_scale^2)`` entries.

    ``init_scale > 0`` is a named variation (it needs ``gen``); it is what
    breaks the symmetry between heads of a multi-head *full* model.
    """
    _check_arch(arch)
    A = check_embeddings(A)
    init_scale = check_float("init_scale", init_scale, low=0.0)
    if init_scale > 0 and not isinstance(gen, torch.Generator):
        raise TypeError("gen must be a torch.Generator when init_scale > 0")
    params = {}
    for name, shape in _shapes(arch, A.shape[0]).items():
        if init_scale > 0:
            params[name] = init_scale * torch.randn(shape, generator=gen, dtype=torch.float64).to(A.dtype)
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


def _check_all(params, arch, A, batch):
    _check_arch(arch)
    if not isinstance(batch, ForwardBatch):
        raise TypeError(f"batch must be a ForwardBatch, got {type(batch).__name__}")
    if not isinstance(A, torch.Tensor) or A.dim() != 2 or A.shape[1] != batch.S:
        raise ValueError(f"A must be a tensor of shape (d, S={batch.S})")
    _check_params(params, arch, A.shape[0])


def _logits(params, arch, X, query, keymask):
    """Logits of every head at the given query positions: ``(heads, batch, K, L)``."""
    d = (X.shape[-1] - 2) // 2
    Xq = torch.gather(X, 1, query[..., None].expand(-1, -1, X.shape[-1]))  # (batch, K, D)
    if arch.kind == "structured":
        keys2, keys_s = X[..., d : 2 * d].transpose(1, 2).contiguous(), X[..., 2 * d :].transpose(1, 2).contiguous()
        q2, q_s = Xq[..., d : 2 * d].contiguous(), Xq[..., 2 * d :].contiguous()
    else:
        keys = X.transpose(1, 2)
    out = []
    for l in range(1, arch.heads + 1):
        if arch.kind == "structured":
            U, V = params[f"U{l}"], params[f"V{l}"]
            # s_i = x_i^(2)T U x_q^(2) + x_i^(s)T V x_q^(s): project the queries first (K << L).
            s = (q2 @ U.T) @ keys2 + (q_s @ V.T) @ keys_s
        else:
            s = (Xq @ params[f"WKQ{l}"].T) @ keys
        out.append(s.masked_fill(~keymask, float("-inf")))
    return torch.stack(out)


def _keymask(batch: ForwardBatch, query: torch.Tensor) -> torch.Tensor:
    pos = torch.arange(batch.length)
    return (pos[None, None, :] <= query[:, :, None]) & batch.valid[:, None, :]


def _values(params, arch, weights, X):
    """Per-head outputs ``W^V_l X w^(l)``: ``(heads, batch, K, D)``."""
    d = (X.shape[-1] - 2) // 2
    out = []
    for l in range(1, arch.heads + 1):
        ctx = weights[l - 1] @ X  # (batch, K, D): the attention-weighted token
        if arch.kind == "full":
            out.append(ctx @ params[f"WV{l}"].T)
            continue
        role = arch.roles[l - 1]
        zeros = torch.zeros_like(ctx[..., :d])
        nodes = [ctx[..., d : 2 * d], ctx[..., :d]] if "swap" in role else [zeros, zeros]
        stage = ctx[..., 2 * d :] if "stage" in role else torch.zeros_like(ctx[..., 2 * d :])
        out.append(torch.cat(nodes + [stage], dim=-1))
    return torch.stack(out)


def head_logits(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced logits of every head at every query: ``(heads, batch, K, L)``; masked keys get ``-inf``.

    ``X`` optionally passes the materialised tokens (:func:`~.layout.forward_token_vectors`).
    """
    _check_all(params, arch, A, batch)
    X = forward_token_vectors(batch, A) if X is None else X
    return _logits(params, arch, X, batch.query, _keymask(batch, batch.query))


def attention(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced attention weights of every head: ``(heads, batch, K, L)``; padded targets get zeros."""
    w = torch.softmax(head_logits(params, arch, A, batch, X), dim=-1)
    return w * batch.target_mask[None, :, :, None].to(w.dtype)


def head_outputs(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Each head's teacher-forced output ``W^V_l X w^(l)``: ``(heads, batch, K, 2d + 2)``."""
    X = forward_token_vectors(batch, A) if X is None else X
    return _values(params, arch, attention(params, arch, A, batch, X), X)


def predict(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Teacher-forced predictions ``y_hat`` (sum over heads): ``(batch, K, 2d + 2)``."""
    return head_outputs(params, arch, A, batch, X).sum(0)


def loss(
    params,
    arch: ForwardArchitecture,
    A: torch.Tensor,
    batch: ForwardBatch,
    options: LossOptions = LossOptions(),
    X: torch.Tensor | None = None,
) -> torch.Tensor:
    """Teacher-forced squared loss of the batch (differentiable in ``params``); normalisation from ``options``."""
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    err = ((predict(params, arch, A, batch, X) - forward_target_vectors(batch, A)) ** 2).sum(-1)
    total = (err * batch.target_mask).sum() * (0.5 if options.half else 1.0)
    per = batch.target_mask.sum() if options.reduction == "mean" else batch.size
    return total / per


def round_tokens(y: torch.Tensor, A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Round vectors to the nearest token, block by block: ``(first, second, stage)`` integer tensors.

    Each node block goes to the nearest of ``a_0, ..., a_{S-1}`` and the empty
    block ``0`` (symbol ``S``); the stage block to the nearest of ``0, s_b, s_f``
    (codes 0, 1, 2). ``y`` has shape ``(..., 2d + 2)``.
    """
    if not isinstance(y, torch.Tensor) or not isinstance(A, torch.Tensor) or A.dim() != 2:
        raise TypeError("y and A must be tensors; A of shape (d, S)")
    d = A.shape[0]
    if y.shape[-1] != 2 * d + 2:
        raise ValueError(f"y must have last dimension 2d + 2 = {2 * d + 2}, got {y.shape[-1]}")
    E = with_empty(A).to(y.dtype)
    norms = (E * E).sum(0)
    flags = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=y.dtype)

    def nearest(block, vecs, sq):
        return (sq - 2 * block @ vecs).argmin(-1)

    return (
        nearest(y[..., :d], E, norms),
        nearest(y[..., d : 2 * d], E, norms),
        nearest(y[..., 2 * d :], flags.T, (flags**2).sum(1)),
    )


def teacher_forced_correct(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch, X: torch.Tensor | None = None) -> torch.Tensor:
    """Whether each rounded teacher-forced prediction equals its target token: ``(batch, K)`` (``False`` on padding)."""
    with torch.no_grad():
        f, s, st = round_tokens(predict(params, arch, A, batch, X), A)
    ok = (f == batch.target_first) & (s == batch.target_second) & (st == batch.target_stage)
    return ok & batch.target_mask


def block_correct(params, arch: ForwardArchitecture, A: torch.Tensor, batch: ForwardBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Teacher-forced correctness split by block: ``(nodes, stage)``, each ``(batch, K)`` booleans.

    ``nodes``: both rounded node blocks equal the target's; ``stage``: the
    rounded stage block does. ``False`` on padding.
    """
    with torch.no_grad():
        f, s, st = round_tokens(predict(params, arch, A, batch), A)
    nodes = (f == batch.target_first) & (s == batch.target_second) & batch.target_mask
    return nodes, (st == batch.target_stage) & batch.target_mask


def accuracy_by_type(correct: torch.Tensor, batch: ForwardBatch) -> dict[str, float]:
    """Mean of ``correct`` (``(batch, K)`` booleans) over the steps of each type in :data:`STEP_TYPES`.

    Types absent from the batch (e.g. ``"eos"`` without EOS targets) are omitted.
    """
    if not isinstance(batch, ForwardBatch):
        raise TypeError("batch must be a ForwardBatch")
    if not isinstance(correct, torch.Tensor) or correct.shape != batch.step_type.shape:
        raise ValueError(f"correct must be a tensor of shape {tuple(batch.step_type.shape)}")
    out = {}
    for code, name in enumerate(STEP_TYPES):
        sel = (batch.step_type == code) & batch.target_mask
        if sel.any():
            out[name] = float(correct[sel].double().mean())
    return out


@dataclass
class ForwardDecodeResult:
    """Greedy autoregressive decoding of a batch.

    Attributes
    ----------
    first, second, stage:
        ``(batch, K)`` generated tokens (padding: ``S, S, 0``).
    weights:
        ``(heads, batch, K, L)`` attention weights at every step, or ``None``.
    step_correct:
        ``(batch, K)``: generated step equals the target (``False`` on padding).
    chain_correct:
        ``(batch,)``: the whole chain of thought is correct.
    answer_correct:
        ``(batch,)``: the root-to-goal answer read out of the generated chain
        (:func:`~.layout.answer_from_chain`) equals the true path.
    batch:
        The decoded batch.
    """

    first: torch.Tensor
    second: torch.Tensor
    stage: torch.Tensor
    weights: torch.Tensor | None
    step_correct: torch.Tensor
    chain_correct: torch.Tensor
    answer_correct: torch.Tensor
    batch: ForwardBatch

    @property
    def step_accuracy(self) -> float:
        """Fraction of correct steps over all real steps."""
        return float(self.step_correct[self.batch.target_mask].double().mean())

    @property
    def chain_accuracy(self) -> float:
        """Fraction of trees whose whole chain is correct."""
        return float(self.chain_correct.double().mean())

    @property
    def path_accuracy(self) -> float:
        """Whole-path accuracy: fraction of trees whose root-to-goal answer is right."""
        return float(self.answer_correct.double().mean())

    def accuracy_by_type(self) -> dict[str, float]:
        """Step accuracy per step type (:data:`STEP_TYPES`)."""
        return accuracy_by_type(self.step_correct, self.batch)


@torch.no_grad()
def greedy_decode(
    params,
    arch: ForwardArchitecture,
    A: torch.Tensor,
    batch: ForwardBatch,
    *,
    keep_weights: bool = False,
) -> ForwardDecodeResult:
    """Run the model autoregressively from each goal token, for as many steps as the tree has targets.

    At step ``k`` the model reads the prompt and its own previous outputs
    (rounded to the nearest token by :func:`round_tokens`) and its rounded
    prediction becomes the next token. The number of steps per tree is its
    number of targets (``2D + 1``), the stopping rule of the backward part; the
    answer is then read out of the generated chain. All trees are decoded
    together. ``keep_weights`` stores every head's attention at every step.
    """
    _check_all(params, arch, A, batch)
    X = forward_token_vectors(batch, A).clone()
    E = with_empty(A).T
    flags = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=X.dtype)
    rows = torch.arange(batch.size)
    shape = batch.query.shape
    out_f = torch.full(shape, batch.S, dtype=torch.int64)
    out_s = out_f.clone()
    out_st = torch.zeros(shape, dtype=torch.int64)
    weights = torch.zeros(arch.heads, *shape, batch.length, dtype=X.dtype) if keep_weights else None
    for k in range(batch.steps):
        q = batch.query[:, k : k + 1]
        mask = _keymask(batch, q)
        w = torch.softmax(_logits(params, arch, X, q, mask), dim=-1)
        y = _values(params, arch, w, X).sum(0)[:, 0]
        f, s, st = round_tokens(y, A)
        out_f[:, k], out_s[:, k], out_st[:, k] = f, s, st
        if keep_weights:
            weights[:, :, k] = w[:, :, 0] * batch.target_mask[None, :, k, None]
        if k + 1 < batch.steps:
            more = batch.target_mask[:, k + 1]
            X[rows[more], q[more, 0] + 1] = torch.cat([E[f], E[s], flags[st]], dim=-1)[more]
    m = batch.target_mask
    out_f = out_f.masked_fill(~m, batch.S)
    out_s = out_s.masked_fill(~m, batch.S)
    out_st = out_st.masked_fill(~m, 0)
    step_ok = (out_f == batch.target_first) & (out_s == batch.target_second) & (out_st == batch.target_stage) & m
    chain_ok = (step_ok | ~m).all(1)
    truth = batch.answers()
    ans_ok = []
    for b in range(batch.size):
        got = answer_from_chain(out_s[b][m[b]].numpy(), out_st[b][m[b]].numpy(), int(batch.goal[b]))
        ans_ok.append(got is not None and np.array_equal(got, truth[b]))
    return ForwardDecodeResult(out_f, out_s, out_st, weights, step_ok, chain_ok, torch.tensor(ans_ok), batch)


def train_forward(
    arch: ForwardArchitecture,
    A: torch.Tensor,
    *,
    m: int,
    steps: int,
    lr,
    batch_size: int = 256,
    seed: int = 0,
    options: LossOptions = LossOptions(),
    cot: bool = True,
    eos: bool = False,
    init: Mapping[str, torch.Tensor] | None = None,
    fixed_batch: ForwardBatch | None = None,
    record: Mapping[str, Callable[[dict[str, torch.Tensor]], object]] | None = None,
    progress: bool = False,
    **train_kwargs,
) -> History:
    """Train the forward model by mini-batch SGD on the training distribution (zero init by default).

    Every step draws a fresh batch of ``batch_size`` perfect binary trees of
    depth ``m`` with uniform leaf goals, from a generator seeded by ``seed``
    (the paper's protocol, batch 256). ``fixed_batch`` trains on one batch
    instead (full-batch GD on a finite sample). ``init`` replaces the zero
    initialisation (see :func:`init_params`). ``cot=False`` trains on the
    answer-only layout. Extra keyword arguments go to
    :func:`onelayer.training.train` (``record_every``, ``record_at``, ``snapshot_at``, ...).
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
    params = dict(init) if init is not None else init_params(arch, A)
    _check_params(params, arch, A.shape[0])

    if fixed_batch is not None:
        X_fixed = forward_token_vectors(fixed_batch, A)

        def loss_fn(p):
            return loss(p, arch, A, fixed_batch, options, X_fixed)
    else:
        def loss_fn(p):
            batch = perfect_forward_batch(m, S, batch_size, rng, cot=cot, eos=eos)
            return loss(p, arch, A, batch, options)

    return train(params, loss_fn, steps=steps, lr=lr, record=record, progress=progress, desc="forward", **train_kwargs)


def dense_matrices(params, arch: ForwardArchitecture, d: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Every head as a pair of dense ``(2d+2) x (2d+2)`` matrices ``(W^KQ_l, W^V_l)`` of the generic formula.

    For a structured head ``W^KQ_l`` holds ``U_l`` in the (node-2, node-2)
    block and ``V_l`` in the (stage, stage) block, and ``W^V_l`` is the fixed
    swap and/or stage-copy matrix; a full head is returned as it is.
    """
    _check_arch(arch)
    d = check_int("d", d, low=1)
    _check_params(params, arch, d)
    D = 2 * d + 2
    out = []
    for l in range(1, arch.heads + 1):
        if arch.kind == "full":
            out.append((params[f"WKQ{l}"], params[f"WV{l}"]))
            continue
        dt = params[f"U{l}"].dtype
        WKQ = torch.zeros(D, D, dtype=dt)
        WKQ[d : 2 * d, d : 2 * d] = params[f"U{l}"]
        WKQ[2 * d :, 2 * d :] = params[f"V{l}"]
        WV = torch.zeros(D, D, dtype=dt)
        role = arch.roles[l - 1]
        if "swap" in role:
            WV[:d, d : 2 * d] = torch.eye(d, dtype=dt)
            WV[d : 2 * d, :d] = torch.eye(d, dtype=dt)
        if "stage" in role:
            WV[2 * d :, 2 * d :] = torch.eye(2, dtype=dt)
        out.append((WKQ, WV))
    return out


def reference_predict(params, arch: ForwardArchitecture, tokens: torch.Tensor, query: Sequence[int]) -> torch.Tensor:
    """The generic formula, one tree and one query at a time (a slow, plain reference for tests and benchmarks).

    ``y_hat_N = sum_l W^V_l X softmax(X^T W^KQ_l x_N)`` with ``X`` the tokens
    ``x_1..x_N`` (columns) up to the query, for each query position in
    ``query``. ``tokens`` is the ``(L, 2d+2)`` array of one tree's real tokens.
    Returns ``(len(query), 2d+2)``.
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
