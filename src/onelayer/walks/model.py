"""The one-layer transformer of the walks paper: eq. 2.1 literally, then the fast exact form through ``q = W x~_N``.

    f(X) = V X softmax(X~^T W x~_N),   X~ = [X; P],   x~_N = [0; p_N]                              (eq. 2.1)

with value matrix ``V`` (``K x K``), merged key-query matrix ``W`` (``(K+M) x (K+M)``), one-hot tokens ``X`` (zero
query slot) and fixed positions ``P`` (:mod:`onelayer.walks.positions`), trained by full-batch GD on
``L = sum_b w_b l(f(X_b), y_b)`` (:func:`loss_values`). :func:`literal_forward` is eq. 2.1 as written (full ``W``,
autograd; the definition the tests hold the fast form to).

Why ``q`` is enough: the query column ``x~_N`` is the same for every input, so ``W`` enters only through
``q = W x~_N``; the logit of position ``j`` is ``q_tok[s_j] + p_j^T q_pos``. A GD step on ``W`` moves ``q`` by
``-eta ||x~_N||^2 dL/dq``, so simulating ``(V, q)`` is exact for plain GD from any initialisation and never builds
``X~``. :meth:`WalkTransformer.loss_and_grads` gives the gradients in closed form with ``grads["q"] =
||x~_N||^2 dL/dq``, so that ``q -= eta * grads["q"]`` is the step on ``W`` (Adam on ``q`` is not Adam on ``W``).

Bit-level symmetry: the contractions over the ``K`` classes and over the batch (:func:`rowwise_matmul`,
:func:`batch_sum`, sequential ``scatter_add``) put every coordinate through the same floating-point operations, so
with exactly orthogonal positions and the exact population of a deterministic walk the state stays exactly
symmetric, as in exact arithmetic (BLAS products leave one-ulp differences that grow until the symmetry breaks).

Options (:class:`ModelConfig`; the defaults are the paper's Sections 2 and 5.1)
    ``positions`` ``"sin"`` | ``"exact"`` | ``"none"``, and ``gram_error``, ``gram_seed``: the positional vectors
    (:mod:`onelayer.walks.positions`). ``normalize`` ``"none"`` | ``"keys"`` | ``"keys_and_query"``: unit-normalise
    every key column ``x~_j`` and optionally the query (Section 5.2; a fixed rescaling of each logit, a zero vector
    left as it is). ``logit_scale`` ``"one"`` | ``"inv_sqrt_d"``: the factor ``1/sqrt(K+M)`` on the logits.
    ``residual``: add the query slot's token part (zero) to the output. ``hidden = m``: ``A ReLU(V X S)`` with
    ``V in R^{m x K}``, ``A in R^{K x m}`` (Appendix F.2, our reading). ``loss`` ``"log"`` (eq. 2.2,
    ``-log(f_y + epsilon)``, NaN once ``f_y <= -epsilon``) | ``"squared"`` | ``"cross_entropy"`` (the extra losses
    Theorem 4.1 is checked with). ``reduction`` ``"mean"`` (weights ``w``) | ``"sum"`` (``B`` times that).
    ``dtype`` ``"float64"`` | ``"float32"``.
Biases (a variation of ours, for Section 6): an entry ``"beta"`` (``(N,)``) of the parameters is added to the
    logits, an entry ``"b"`` (``(K,)``) to the output scores; their gradients are autograd's, not
    :meth:`WalkTransformer.loss_and_grads`'s.

:meth:`WalkTransformer.init` is zero (default) or Gaussian (``sigma``, seeded); :meth:`WalkTransformer.gd_step` is
one GD step, :meth:`WalkTransformer.train` a run of them (:func:`onelayer.training.train`). ``perturb=f`` passes the
floating inputs the model builds through ``f(tensor, name)`` (the studies pass :func:`onelayer.jitter.jitter`).
Indices are 0-based: position ``N - 2`` is the parent ``x_{N-1}``, ``N - 1`` the query slot.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch

from ..seeding import DTYPES, generator
from ..training import History, train
from ..validation import check_bool, check_choice, check_float, check_int
from . import positions, prediction, ring
from .data import TokenData

__all__ = ["literal_forward", "literal_loss", "literal_train", "materialize", "LOSSES", "loss_values",
           "loss_gradient", "ModelConfig", "NORMALIZE", "LOGIT_SCALES", "REDUCTIONS", "INITS", "rowwise_matmul",
           "batch_sum", "WalkTransformer"]


# -- eq. 2.1, literally ------------------------------------------------------------------------------
def materialize(model: WalkTransformer, data: TokenData) -> torch.Tensor:
    """``X~ = [X; P]`` for every sequence: ``(B, K + M, N)`` in the model's dtype."""
    X = data.one_hot(model.dtype)
    P = model.P.expand(data.B, -1, -1)
    return torch.cat([X, P], dim=1)


def _unit(columns: torch.Tensor, dim: int) -> torch.Tensor:
    norms = columns.norm(dim=dim, keepdim=True)
    return columns / torch.where(norms > 0, norms, torch.ones_like(norms))


def literal_forward(model: WalkTransformer, full: dict[str, torch.Tensor], data: TokenData, Xt: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Eq. 2.1 as written: logits ``z = X~^T W x~_N``, attention ``S = softmax(z)``, output ``f = V X S``, with
    ``V``, the full ``W`` (and ``A``) in ``full``, ``X~`` built for every sequence (:func:`materialize`, 0.8 GB at the
    paper's size) and every option applied literally. Slow on purpose; :meth:`WalkTransformer.forward_raw` is the
    fast exact form, tested against it."""
    c = model.config
    Xt = materialize(model, data) if Xt is None else Xt
    keys = _unit(Xt, 1) if c.normalize != "none" else Xt
    query = Xt[:, :, -1]
    if c.normalize == "keys_and_query":
        query = _unit(query, 1)
    scale = 1.0 if c.logit_scale == "one" else 1.0 / math.sqrt(model.D)
    Wq = query @ full["W"].T  # W x~_N for each sequence
    z = scale * torch.einsum("bdn,bd->bn", keys, Wq)
    S = torch.softmax(z, dim=1)
    u = torch.einsum("bkn,bn->bk", Xt[:, : c.K, :], S)
    h = u @ full["V"].T
    f = h if c.hidden is None else torch.relu(h) @ full["A"].T
    if c.residual:
        f = f + Xt[:, : c.K, -1]
    return {"z": z, "S": S, "f": f}


def literal_loss(model: WalkTransformer, full: dict[str, torch.Tensor], data: TokenData, Xt: torch.Tensor | None = None) -> torch.Tensor:
    """The training loss ``L = sum_b w_b l(f(X_b), y_b)`` of :func:`literal_forward` (differentiable in ``full``)."""
    c = model.config
    f = literal_forward(model, full, data, Xt)["f"]
    values = loss_values(f, data.labels, c.loss, c.epsilon)
    factor = data.B if c.reduction == "sum" else 1
    return factor * (data.weights.to(model.dtype) * values).sum()


def literal_train(model: WalkTransformer, full: dict[str, torch.Tensor], data: TokenData, *, steps: int, lr=1.0, record=None, snapshot_at=(), Xt: torch.Tensor | None = None, progress: bool = False) -> History:
    """Full-batch GD on ``V`` and the full ``W``, gradients by autograd (:func:`onelayer.training.train`)."""
    Xt = materialize(model, data) if Xt is None else Xt
    return train({n: t.to(model.dtype) for n, t in full.items()}, lambda prm: literal_loss(model, prm, data, Xt),
                 steps=steps, lr=lr, record=record, snapshot_at=snapshot_at, progress=progress, desc="literal")


# -- the loss (eq. 2.2 and the two extra losses of Theorem 4.1) ---------------------------------------
#: Names accepted by the ``loss`` option.
LOSSES = ("log", "squared", "cross_entropy")


def loss_values(f: torch.Tensor, labels: torch.Tensor, kind: str = "log", epsilon: float = 0.1) -> torch.Tensor:
    """``l(f_b, y_b)`` for every row ``b`` of ``f`` (``(B, K)`` -> ``(B,)``); ``kind`` one of :data:`LOSSES`."""
    if kind == "log":
        score = f.gather(1, labels[:, None])[:, 0]
        return -torch.log(score + epsilon)
    if kind == "squared":
        target = torch.nn.functional.one_hot(labels, f.shape[1]).to(f.dtype)
        return 0.5 * ((f - target) ** 2).sum(dim=1)
    return torch.logsumexp(f, dim=1) - f.gather(1, labels[:, None])[:, 0]


def loss_gradient(f: torch.Tensor, labels: torch.Tensor, kind: str = "log", epsilon: float = 0.1) -> torch.Tensor:
    """``dl(f_b, y_b)/df_b`` for every row (``(B, K)``)."""
    target = torch.nn.functional.one_hot(labels, f.shape[1]).to(f.dtype)
    if kind == "log":
        score = f.gather(1, labels[:, None])
        return -target / (score + epsilon)
    if kind == "squared":
        return f - target
    return torch.softmax(f, dim=1) - target


# -- sizes and options ---------------------------------------------------------------------------------
#: Names accepted by the ``normalize`` option.
NORMALIZE = ("none", "keys", "keys_and_query")
#: Names accepted by the ``logit_scale`` option.
LOGIT_SCALES = ("one", "inv_sqrt_d")
#: Names accepted by the ``reduction`` option.
REDUCTIONS = ("mean", "sum")
#: Names accepted by ``WalkTransformer.init(init=...)``.
INITS = ("zero", "gaussian")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and options of the model, checked once here (the module docstring describes each option)."""

    K: int
    N: int
    M: int = 1000
    positions: str = "sin"
    gram_error: float = 0.0
    gram_seed: int = 0
    normalize: str = "none"
    logit_scale: str = "one"
    residual: bool = False
    hidden: int | None = None
    loss: str = "log"
    epsilon: float = 0.1
    reduction: str = "mean"
    dtype: str = "float64"

    def __post_init__(self):
        check_int("K", self.K, low=1, high=100_000)
        check_int("N", self.N, low=2, high=1_000_000)
        check_int("M", self.M, low=1, high=1_000_000)
        check_choice("positions", self.positions, positions.POSITIONS)
        check_float("gram_error", self.gram_error, low=0.0)
        check_int("gram_seed", self.gram_seed, low=0)
        check_choice("normalize", self.normalize, NORMALIZE)
        check_choice("logit_scale", self.logit_scale, LOGIT_SCALES)
        check_bool("residual", self.residual)
        if self.hidden is not None:
            check_int("hidden", self.hidden, low=1, high=100_000)
        check_choice("loss", self.loss, LOSSES)
        check_float("epsilon", self.epsilon, low=0.0)
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_choice("dtype", self.dtype, tuple(DTYPES))

    def replace(self, **changes) -> ModelConfig:
        """A copy with some fields changed."""
        return ModelConfig(**{**asdict(self), **changes})


# -- contractions with one operation order for every entry (module docstring, "Bit-level symmetry") ----------------
def rowwise_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """``A @ B`` (with leading member axes: ``A[b] @ B[b]``) as elementwise products summed over the contiguous last
    axis: every output entry goes through the same floating-point operations, which BLAS does not promise."""
    return (A[..., :, None, :] * B.transpose(-1, -2)[..., None, :, :]).sum(dim=-1)


def batch_sum(X: torch.Tensor, members: int = 0) -> torch.Tensor:
    """Sum over the batch axis (after ``members`` leading member axes), reduced as a contiguous row so that every
    output entry is summed identically."""
    lead = X.shape[:members]
    flat = X.reshape(lead + (X.shape[members], -1)).transpose(-1, -2).contiguous()
    return flat.sum(dim=-1).reshape(lead + X.shape[members + 1:])


class WalkTransformer:
    """The paper's one-layer transformer with fixed geometry ``P``; built from a :class:`ModelConfig` or its fields
    (``options``), with an optional ``perturb`` (module docstring). Parameters are plain dictionaries of tensors,
    ``{"V", "q"}`` (plus ``"A"`` with a hidden ReLU layer): :meth:`init` (or :meth:`reduce` of a full ``{"V", "W"}``)."""

    def __init__(self, config: ModelConfig | None = None, *, perturb=None, **options):
        if config is None:
            config = ModelConfig(**options)
        elif options:
            config = config.replace(**options)
        if not isinstance(config, ModelConfig):
            raise TypeError("config must be a ModelConfig")
        self.config = config
        #: the caller's perturbation of floating inputs (``None``: none)
        self.perturb = perturb
        c = config
        self.dtype = DTYPES[c.dtype]
        self.D = c.K + c.M
        #: positional matrix (M, N)
        self.P = positions._positional_matrix(c.N, c.M, c.positions, self.dtype, c.gram_error, c.gram_seed, perturb)
        pos_norm2 = (self.P * self.P).sum(dim=0)
        #: the fixed query column x~_N = [0; p_N]
        self.x_query = torch.cat([torch.zeros(c.K, dtype=self.dtype), self.P[:, -1]])
        #: ||x~_N||^2, the factor between dL/dq and the GD change of q
        self.query_norm2 = float(pos_norm2[-1])
        key_norm2 = pos_norm2.clone()
        key_norm2[:-1] += 1.0  # one-hot token part of the real positions
        ones = torch.ones(c.N, dtype=self.dtype)
        if c.normalize == "none":
            self.key_factors = ones
        else:
            self.key_factors = torch.where(key_norm2 > 0, key_norm2.clamp_min(1e-300).rsqrt(), ones)
        query_factor = 1.0
        if c.normalize == "keys_and_query" and self.query_norm2 > 0:
            query_factor = 1.0 / math.sqrt(self.query_norm2)
        scale = 1.0 if c.logit_scale == "one" else 1.0 / math.sqrt(self.D)
        #: the constant in front of every logit (scale times query normalisation)
        self.logit_factor = scale * query_factor

    def __repr__(self) -> str:
        return f"WalkTransformer({self.config})"

    # -- parameters ---------------------------------------------------------------
    @property
    def value_rows(self) -> int:
        """Rows of ``V``: ``K``, or ``hidden`` with the ReLU head."""
        return self.config.hidden or self.config.K

    def init_full(self, init: str = "zero", *, sigma: float = 0.01, seed: int = 0) -> dict[str, torch.Tensor]:
        """Initial ``{"V", "W"}`` (and ``"A"``) of the full model: zeros, or ``"gaussian"`` entries ``N(0, sigma^2)``
        from a generator seeded by ``seed`` (``V``, then ``W``, then ``A``)."""
        check_choice("init", init, INITS)
        sigma = check_float("sigma", sigma, low=0.0)
        c = self.config
        shapes = {"V": (self.value_rows, c.K), "W": (self.D, self.D)}
        if c.hidden is not None:
            shapes["A"] = (c.K, c.hidden)
        if init == "zero":
            return {name: torch.zeros(shape, dtype=self.dtype) for name, shape in shapes.items()}
        gen = generator(seed)
        draws = {name: sigma * torch.randn(shape, generator=gen, dtype=torch.float64) for name, shape in shapes.items()}
        if self.perturb is not None:
            draws = {name: self.perturb(x, f"walks.init.{name}") for name, x in draws.items()}
        return {name: x.to(self.dtype) for name, x in draws.items()}

    def reduce(self, full: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``{"V", "W"}`` -> ``{"V", "q"}`` with ``q = W x~_N`` (other entries copied)."""
        if "W" not in full or "V" not in full:
            raise ValueError("full parameters must contain 'V' and 'W'")
        out = {name: t.detach().clone() for name, t in full.items() if name != "W"}
        out["q"] = full["W"].detach() @ self.x_query
        return out

    def init(self, init: str = "zero", *, sigma: float = 0.01, seed: int = 0) -> dict[str, torch.Tensor]:
        """Initial ``{"V", "q"}`` (and ``"A"``): :meth:`init_full` followed by :meth:`reduce`."""
        return self.reduce(self.init_full(init, sigma=sigma, seed=seed))

    def full_W(self, q: torch.Tensor, W0: torch.Tensor | None = None) -> torch.Tensor:
        """The ``W`` reached by GD from ``W0`` (zeros by default) when the reduced state is ``q``.

        GD only ever adds multiples of ``(.) x~_N^T`` to ``W``, so
        ``W = W0 + (q - W0 x~_N) x~_N^T / ||x~_N||^2``. Blocks: ``W_11 = W[:K, :K]``,
        ``W_12 = W[:K, K:]``, ``W_21 = W[K:, :K]``, ``W_22 = W[K:, K:]``.
        """
        if self.query_norm2 == 0:
            raise ValueError("full_W needs a non-zero query column (positions='none' leaves W at its initial value)")
        W0 = torch.zeros((self.D, self.D), dtype=self.dtype) if W0 is None else W0
        return W0 + torch.outer(q - W0 @ self.x_query, self.x_query) / self.query_norm2

    # -- forward --------------------------------------------------------------------
    def _check_data(self, data: TokenData) -> None:
        if not isinstance(data, TokenData):
            raise TypeError("data must be a onelayer.walks.data.TokenData")
        if data.K != self.config.K or data.N != self.config.N:
            raise ValueError(f"data has K={data.K}, N={data.N}; the model expects K={self.config.K}, N={self.config.N}")

    def _pass(self, params: dict[str, torch.Tensor], data: TokenData) -> dict[str, torch.Tensor]:
        self._check_data(data)
        return self.forward_raw(params, data.tokens)

    def forward_raw(self, params: dict[str, torch.Tensor], tokens: torch.Tensor) -> dict[str, torch.Tensor]:
        """The forward pass on raw tokens ``(..., B, N - 1)``, parameters ``(..., K + M)``, ``(..., rows, K)``; leading
        axes ``...`` are independent members. Returns the logits ``z`` and attention ``S`` (``(..., B, N)``), the
        weighted token ``u``, the output ``f`` (``(..., B, K)``) and, with a hidden layer, ``h``. No validation."""
        c = self.config
        q = params["q"]
        q_pos = q[..., c.K:]
        # p_j^T q_pos, shared by every sequence: a matrix-vector product for one model
        r = self.P.T @ q_pos if q.ndim == 1 else q_pos @ self.P
        lead, B = tokens.shape[:-2], tokens.shape[-2]
        raw = torch.empty(lead + (B, c.N), dtype=self.dtype)
        if q.ndim == 1:
            raw[..., :-1] = q[: c.K][tokens] + r[:-1]
        else:
            flat = tokens.reshape(lead + (-1,))
            raw[..., :-1] = q[..., : c.K].gather(-1, flat).reshape(tokens.shape) + r[..., None, :-1]
        raw[..., -1] = r[..., -1:]
        z = self.logit_factor * self.key_factors * raw
        if "beta" in params:  # the bias variation: one bias per position on the logits
            z = z + params["beta"]
        S = torch.softmax(z, dim=-1)
        u = torch.zeros(lead + (B, c.K), dtype=self.dtype).scatter_add_(-1, tokens, S[..., :-1])
        out = {"z": z, "S": S, "u": u}
        h = rowwise_matmul(u, params["V"].transpose(-1, -2))
        if c.hidden is None:
            f = h
        else:
            out["h"] = h
            f = rowwise_matmul(torch.relu(h), params["A"].transpose(-1, -2))
        if c.residual:
            # the query slot's token part, added literally: it is the zero vector
            f = f + torch.zeros(lead + (B, c.K), dtype=self.dtype)
        out["f"] = f + params["b"] if "b" in params else f  # the bias variation: one bias per output score
        return out

    def logits(self, params, data: TokenData) -> torch.Tensor:
        """Attention logits ``z = X~^T W x~_N`` (with the configured scalings), ``(B, N)``."""
        return self._pass(params, data)["z"]

    def attention(self, params, data: TokenData) -> torch.Tensor:
        """Attention weights ``S`` over the ``N`` positions, ``(B, N)``."""
        return self._pass(params, data)["S"]

    def weighted_token(self, params, data: TokenData) -> torch.Tensor:
        """The attention-weighted token ``X S`` (``(B, K)``), the only thing ``V`` sees."""
        return self._pass(params, data)["u"]

    def forward(self, params, data: TokenData) -> torch.Tensor:
        """Output scores ``f(X)`` for every sequence, ``(B, K)``."""
        return self._pass(params, data)["f"]

    def loss_of_scores(self, f: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        """``L = sum_b w_b l(f_b, y_b)`` (times ``B`` with ``reduction="sum"``) of output scores ``f`` (``(..., B, K)``).

        With leading member axes, one loss per member (``(...)``). No validation.
        """
        c = self.config
        values = loss_values(f.reshape(-1, c.K), labels.reshape(-1), c.loss, c.epsilon).reshape(labels.shape)
        factor = labels.shape[-1] if c.reduction == "sum" else 1
        weighted = weights.to(self.dtype) * values
        return factor * (weighted.sum() if labels.ndim == 1 else weighted.sum(dim=-1))

    def loss(self, params, data: TokenData) -> torch.Tensor:
        """Training loss ``L`` (scalar tensor; differentiable if the parameters require grad)."""
        return self.loss_of_scores(self.forward(params, data), data.labels, data.weights)

    def loss_and_grads(self, params, data: TokenData) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss and its gradients in closed form; ``grads["q"] = ||x~_N||^2 dL/dq`` is the change of
        ``q = W x~_N`` per unit step of GD on ``W``."""
        self._check_data(data)
        return self.loss_and_grads_raw(params, data.tokens, data.labels, data.weights)

    def loss_and_grads_raw(self, params, tokens: torch.Tensor, labels: torch.Tensor,
                              weights: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """:meth:`loss_and_grads` on raw ``tokens`` ``(..., B, N - 1)``, ``labels``, ``weights`` ``(..., B)`` with
        leading member axes as in :meth:`forward_raw`: the losses ``(...)`` and gradients ``(..., shape)``."""
        c = self.config
        lead, B = labels.shape[:-1], labels.shape[-1]
        members = len(lead)
        out = self.forward_raw(params, tokens)
        S, u, f = out["S"], out["u"], out["f"]
        loss = self.loss_of_scores(f, labels, weights)
        flat_f, flat_y = f.reshape(-1, c.K), labels.reshape(-1)
        factor = B if c.reduction == "sum" else 1
        w = weights.to(self.dtype)
        G = loss_gradient(flat_f, flat_y, c.loss, c.epsilon).reshape(f.shape) * (w * factor)[..., None]
        grads = {}
        if c.hidden is None:
            grads["V"] = batch_sum(G[..., :, None] * u[..., None, :], members)
            a = rowwise_matmul(G, params["V"])
        else:
            h = out["h"]
            grads["A"] = batch_sum(G[..., :, None] * torch.relu(h)[..., None, :], members)
            Gh = rowwise_matmul(G, params["A"]) * (h > 0).to(self.dtype)
            grads["V"] = batch_sum(Gh[..., :, None] * u[..., None, :], members)
            a = rowwise_matmul(Gh, params["V"])
        alpha = torch.zeros(lead + (B, c.N), dtype=self.dtype)
        alpha[..., :-1] = a.gather(-1, tokens)
        delta = S * (alpha - (S * alpha).sum(dim=-1, keepdim=True))
        delta = delta * (self.logit_factor * self.key_factors)
        dq_tok = torch.zeros(lead + (c.K,), dtype=self.dtype).scatter_add_(
            -1, tokens.reshape(lead + (-1,)), delta[..., :-1].reshape(lead + (-1,)))
        summed = batch_sum(delta, members)
        # the positional part: a matrix-vector product for one model
        dq_pos = self.P @ summed if members == 0 else summed @ self.P.T
        grads["q"] = self.query_norm2 * torch.cat([dq_tok, dq_pos], dim=-1)
        return loss, grads

    def gd_step(self, params, data: TokenData, lr: float = 1.0) -> dict[str, torch.Tensor]:
        """One full-batch GD step ``theta - eta grad L(theta)``; on ``q`` it is the paper's step
        ``W <- W - eta dL/dW`` (``grads["q"]`` is the change of ``q`` per unit step on ``W``)."""
        _, grads = self.loss_and_grads(params, data)
        return {name: value - lr * grads[name] for name, value in params.items()}

    # -- predictions --------------------------------------------------------------------
    def predict(self, params, data: TokenData) -> torch.Tensor:
        """Predicted labels with the smallest-index tie rule (Definition 2.1)."""
        return prediction.predict(self.forward(params, data))

    def accuracy(self, params, data: TokenData) -> float:
        """Weighted accuracy of :meth:`predict` on ``data``."""
        return prediction.accuracy(self.predict(params, data), data.labels, data.weights)

    def conditional_accuracy(self, params, data: TokenData, p: float) -> float:
        """Average of ``Pi[s_{N-1}, y_hat]`` over ``data``'s inputs (ring walks only)."""
        Pi = ring.transition_matrix(self.config.K, p)
        return prediction.conditional_accuracy(self.predict(params, data), data.last, Pi, data.weights)

    # -- training -------------------------------------------------------------------------
    def train(self, params: dict[str, torch.Tensor], data: TokenData, *, steps: int, lr=1.0, record=None,
              record_every: int = 1, record_at=None, snapshot_at=(), progress: bool = False,
              desc: str = "walks") -> History:
        """Full-batch GD on ``data`` with closed-form gradients (:func:`onelayer.training.train`): ``lr`` a number, a
        schedule ``t -> eta_t`` or a mapping ``{"V": ..., "q": ...}``; ``record`` maps names to ``params -> value``."""
        self._check_data(data)
        for name in ("V", "q"):
            if name not in params:
                raise ValueError(f"params must contain {name!r} (use WalkTransformer.init or .reduce)")
        return train({n: t.to(self.dtype) for n, t in params.items()}, lambda prm: self.loss(prm, data), steps=steps,
                     lr=lr, record=record, record_every=record_every, record_at=record_at, snapshot_at=snapshot_at,
                     grad_fn=lambda prm: self.loss_and_grads_raw(prm, data.tokens, data.labels, data.weights),
                     progress=progress, desc=desc)
