"""The one-layer transformer of the walks paper, simulated through ``q = W x~_N``.

The model (eq. 2.1) is

    f(X) = V X softmax(X~^T W x~_N),   X~ = [X; P],   x~_N = [0; p_N],

with value matrix ``V`` (``K x K``), merged key-query matrix ``W``
(``(K+M) x (K+M)``), one-hot tokens ``X`` (zero query slot) and fixed positional
vectors ``P`` (:mod:`onelayer.walks.positions`). It is trained by full-batch
gradient descent on ``L = E[l(f(X), y)]`` (:mod:`onelayer.walks.losses`).

Why ``q`` is enough
-------------------
The query column ``x~_N`` is the same for every input, so ``W`` enters the
model only through ``q = W x~_N in R^{K+M}``: the logit of position ``j`` is
``x~_j^T q``, i.e. ``q_tok[s_j] + p_j^T q_pos``. A GD step
``W <- W - eta dL/dW`` with ``dL/dW = (dL/dq) x~_N^T`` moves ``q`` by
``-eta ||x~_N||^2 dL/dq``. Simulating ``(V, q)`` is therefore *exact* for plain
GD with any step-size schedule and any initialisation (``q_0 = W_0 x~_N``),
and it never materialises ``X~`` (``B (K+M) N`` numbers). The gradients of
:meth:`WalkTransformer.loss_and_grads` are in closed form; the entry for
``"q"`` is ``||x~_N||^2 dL/dq``, so that ``q -= eta * grads["q"]`` is the GD
step on ``W``. :mod:`onelayer.walks.reference` keeps the literal full-``W``
autograd model, and the tests check that both give the same trajectory.
(Adam on ``q`` is *not* Adam on ``W``; only GD is supported here.)

Bit-level symmetry
------------------
The contractions over the ``K`` classes and over the batch are computed so that
every coordinate goes through the same floating-point operations
(:func:`rowwise_matmul`, :func:`batch_sum`, sequential ``scatter_add``). With
exactly orthogonal positions and the exact population of a deterministic walk,
the computed state then stays *exactly* symmetric, as in exact arithmetic;
with BLAS matrix products, one-ulp differences between output columns appear
for some ``K`` (e.g. 20) and grow until the symmetry breaks.

Options (:class:`ModelConfig`; defaults are the paper's Sections 2 and 5.1)
-----------------------------------------------------------------------------
``positions``: ``"sin"`` (default) | ``"exact"`` | ``"none"``
    The positional vectors, see :mod:`onelayer.walks.positions`.
``gram_error``: ``0.0`` (default) | ``g > 0``; ``gram_seed`` (0)
    Add a seeded Gaussian perturbation to the positional vectors that moves the
    off-diagonal entries of their Gram matrix by about ``g`` (see
    :mod:`onelayer.walks.positions`): a symmetry breaker of a stated size, the
    same on every machine, in place of floating-point round-off.
``normalize``: ``"none"`` (default) | ``"keys"`` | ``"keys_and_query"``
    Unit-normalise the attention inputs: every column ``x~_j`` on the key side,
    and optionally ``x~_N`` on the query side (Section 5.2 normalises "each
    ``x~_i``" without saying which). Tokens are one-hot, so the norms are fixed
    numbers per position and normalisation is a fixed rescaling of each logit.
    A zero vector is left as it is.
``logit_scale``: ``"one"`` (default) | ``"inv_sqrt_d"``
    Multiply the logits by 1 or by ``1/sqrt(K+M)``.
``residual``: ``False`` (default) | ``True``
    Add the query slot's own token part to the output. That part is zero, so
    the output and every gradient are unchanged (the reference model computes
    it literally; the tests confirm it).
``hidden``: ``None`` (default) | ``m``
    Replace ``V X S`` by ``A ReLU(V X S)`` with ``V in R^{m x K}`` and
    ``A in R^{K x m}`` (the Appendix F.2 variant, our reading of it).
``loss``: ``"log"`` (default) | ``"squared"`` | ``"cross_entropy"``; ``epsilon`` (0.1)
    See :mod:`onelayer.walks.losses`.
``reduction``: ``"mean"`` (default) | ``"sum"``
    ``L = sum_b w_b l_b`` (``w`` = the data's weights, ``1/B`` for a sample,
    probabilities for a population) or ``B`` times that (the sum over sampled
    sequences).
``dtype``: ``"float64"`` (default) | ``"float32"``
    The floating-point precision of every tensor.

Initialisation (:meth:`WalkTransformer.init`): ``"zero"`` (default) or
``"gaussian"`` with standard deviation ``sigma`` for every entry of ``V``,
``W`` (and ``A``), drawn from a seeded generator. The optimiser is
:func:`onelayer.training.train` (plain GD, step size a number or a schedule
``t -> eta_t``, or a mapping ``{"V": ..., "q": ...}``).

Indices are 0-based: position ``N - 2`` is the direct parent ``x_{N-1}`` and
``N - 1`` the query slot.
"""

from __future__ import annotations

import math

import torch

from ..jitter import jitter
from ..seeding import DTYPES, generator
from ..training import History, train
from ..validation import check_choice, check_float
from . import losses, positions, prediction, ring
from .contractions import batch_sum, rowwise_matmul
from .data import TokenData
from .options import INITS, LOGIT_SCALES, NORMALIZE, REDUCTIONS, ModelConfig

# ModelConfig, the option lists and the contractions are defined in .options and .contractions and stay importable here.
__all__ = ["WalkTransformer", "rowwise_matmul", "batch_sum"]



class WalkTransformer:
    """The paper's one-layer transformer with fixed geometry ``P``, parameters passed explicitly.

    Parameters are plain dictionaries of tensors: ``{"V", "q"}`` (plus ``"A"``
    with a hidden ReLU layer). Build them with :meth:`init` (or reduce a full
    ``{"V", "W"}`` with :meth:`reduce`); train with :meth:`train`.

    Parameters
    ----------
    config:
        A :class:`ModelConfig`, or ``None`` to build one from ``options``.
    **options:
        Fields of :class:`ModelConfig` (``K``, ``N``, ``M``, ``positions``, ...).
    """

    def __init__(self, config: ModelConfig | None = None, **options):
        if config is None:
            config = ModelConfig(**options)
        elif options:
            config = config.replace(**options)
        if not isinstance(config, ModelConfig):
            raise TypeError("config must be a ModelConfig")
        self.config = config
        c = config
        self.dtype = DTYPES[c.dtype]
        self.D = c.K + c.M
        #: positional matrix (M, N)
        self.P = positions.positional_matrix(c.N, c.M, c.positions, dtype=self.dtype,
                                             gram_error=c.gram_error, gram_seed=c.gram_seed)
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
        """Initial ``{"V", "W"}`` (and ``"A"``) of the full model.

        ``"zero"`` gives zeros; ``"gaussian"`` draws every entry from
        ``N(0, sigma^2)`` with a generator seeded by ``seed`` (``V``, then
        ``W``, then ``A``).
        """
        check_choice("init", init, INITS)
        sigma = check_float("sigma", sigma, low=0.0)
        c = self.config
        shapes = {"V": (self.value_rows, c.K), "W": (self.D, self.D)}
        if c.hidden is not None:
            shapes["A"] = (c.K, c.hidden)
        if init == "zero":
            return {name: torch.zeros(shape, dtype=self.dtype) for name, shape in shapes.items()}
        gen = generator(seed)
        return {name: jitter(sigma * torch.randn(shape, generator=gen, dtype=torch.float64), f"walks.init.{name}").to(self.dtype)
                for name, shape in shapes.items()}

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
        return self.forward_tokens(params, data.tokens)

    def forward_tokens(self, params: dict[str, torch.Tensor], tokens: torch.Tensor) -> dict[str, torch.Tensor]:
        """The forward pass on raw tokens ``(..., B, N - 1)`` with parameters ``(..., K + M)``, ``(..., rows, K)``.

        The leading axes ``...`` (none for one model, one member axis for
        :mod:`onelayer.walks.batched`) are independent members. Returns the
        logits ``z`` and attention ``S`` (``(..., B, N)``), the weighted token
        ``u`` and the output ``f`` (``(..., B, K)``) and, with a hidden layer, the
        pre-activation ``h``. No validation: see :meth:`forward`.
        """
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
        out["f"] = f
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

    __call__ = forward

    def _reduce_loss(self, values: torch.Tensor, data: TokenData) -> torch.Tensor:
        w = data.weights.to(self.dtype)
        factor = data.B if self.config.reduction == "sum" else 1
        return factor * (w * values).sum()

    def loss(self, params, data: TokenData) -> torch.Tensor:
        """Training loss ``L`` (scalar tensor; differentiable if the parameters require grad)."""
        f = self.forward(params, data)
        return self._reduce_loss(losses.loss_values(f, data.labels, self.config.loss, self.config.epsilon), data)

    def loss_and_grads(self, params, data: TokenData) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss and its gradients in closed form.

        ``grads["V"]`` (and ``grads["A"]``) are the usual gradients;
        ``grads["q"] = ||x~_N||^2 dL/dq`` is the change of ``q = W x~_N`` per unit
        step of GD on ``W``.
        """
        self._check_data(data)
        return self.loss_and_grads_tokens(params, data.tokens, data.labels, data.weights)

    def loss_and_grads_tokens(self, params, tokens: torch.Tensor, labels: torch.Tensor,
                              weights: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """:meth:`loss_and_grads` on raw tensors, with leading member axes as in :meth:`forward_tokens`.

        ``tokens``: ``(..., B, N - 1)``, ``labels`` and ``weights``: ``(..., B)``.
        Returns the loss of every member (``(...)``) and the gradients ``name -> (..., shape)``.
        No validation.
        """
        c = self.config
        lead, B = labels.shape[:-1], labels.shape[-1]
        members = len(lead)
        out = self.forward_tokens(params, tokens)
        S, u, f = out["S"], out["u"], out["f"]
        flat_f, flat_y = f.reshape(-1, c.K), labels.reshape(-1)
        values = losses.loss_values(flat_f, flat_y, c.loss, c.epsilon).reshape(labels.shape)
        factor = B if c.reduction == "sum" else 1
        w = weights.to(self.dtype)
        weighted = w * values
        loss = factor * (weighted.sum() if members == 0 else weighted.sum(dim=-1))
        G = losses.loss_gradient(flat_f, flat_y, c.loss, c.epsilon).reshape(f.shape) * (w * factor)[..., None]
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
    def train(
        self,
        params: dict[str, torch.Tensor],
        data: TokenData,
        *,
        steps: int,
        lr=1.0,
        record=None,
        record_every: int = 1,
        record_at=None,
        snapshot_at=(),
        progress: bool = False,
        desc: str = "walks",
    ) -> History:
        """Full-batch GD on ``data`` with closed-form gradients (:func:`onelayer.training.train`).

        ``lr`` is a number, a schedule ``t -> eta_t`` or a mapping
        ``{"V": ..., "q": ...}``; ``record`` maps names to ``params -> value``.
        """
        self._check_data(data)
        for name in ("V", "q"):
            if name not in params:
                raise ValueError(f"params must contain {name!r} (use WalkTransformer.init or .reduce)")
        return train(
            {n: t.to(self.dtype) for n, t in params.items()},
            lambda prm: self.loss(prm, data),
            steps=steps,
            lr=lr,
            record=record,
            record_every=record_every,
            record_at=record_at,
            snapshot_at=snapshot_at,
            grad_fn=lambda prm: self.loss_and_grads(prm, data),
            progress=progress,
            desc=desc,
        )
