"""Token sequences as the model sees them: ``X = [x_1, ..., x_{N-1}, 0] in R^{K x N}`` (one-hot ``x_i = e_{s_i}``,
a zero query slot) with the label ``y = s_N``.

:class:`TokenData` stores a batch compactly as integer tokens with a weight per sequence: ``1/B`` for a sample, the
probabilities for an exact population (weighted averages are then expectations). Built from ring walks
(:meth:`TokenData.from_states`, :func:`walk_data`, :func:`walk_population`) or from one-hot columns of any vocabulary
(:meth:`TokenData.from_one_hot`, the entry point of the question-answering tasks of Section 6).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..validation import check_int
from . import ring

__all__ = ["TokenData", "walk_data", "walk_population"]


@dataclass(frozen=True)
class TokenData:
    """A batch of ``B`` inputs ``X`` (one-hot tokens, zero query slot) with labels and weights.

    Attributes
    ----------
    tokens:
        int64 ``(B, N - 1)``: token index of positions ``1..N-1`` (values in ``0..K-1``).
    labels:
        int64 ``(B,)``: the target ``y`` (in ``0..K-1``).
    weights:
        float64 ``(B,)``, non-negative, summing to 1 (``1/B`` for a sample,
        probabilities for a population).
    K:
        Vocabulary size (one-hot dimension and number of output scores).
    """

    tokens: torch.Tensor
    labels: torch.Tensor
    weights: torch.Tensor
    K: int

    def __post_init__(self):
        K = check_int("K", self.K, low=1)
        t, y, w = self.tokens, self.labels, self.weights
        if not isinstance(t, torch.Tensor) or t.dtype != torch.int64 or t.ndim != 2 or t.shape[1] < 1:
            raise TypeError("tokens must be an int64 tensor of shape (B, N-1) with N >= 2")
        B = t.shape[0]
        if B < 1:
            raise ValueError("tokens must hold at least one sequence")
        if not isinstance(y, torch.Tensor) or y.dtype != torch.int64 or y.shape != (B,):
            raise TypeError(f"labels must be an int64 tensor of shape ({B},)")
        if not isinstance(w, torch.Tensor) or w.dtype != torch.float64 or w.shape != (B,):
            raise TypeError(f"weights must be a float64 tensor of shape ({B},)")
        if int(t.min()) < 0 or int(t.max()) >= K or int(y.min()) < 0 or int(y.max()) >= K:
            raise ValueError(f"tokens and labels must lie in [0, {K - 1}] (K={K})")
        if (w < 0).any() or abs(float(w.sum()) - 1.0) > 1e-12:
            raise ValueError("weights must be non-negative and sum to 1")

    # -- shapes ---------------------------------------------------------------
    @property
    def B(self) -> int:
        """Number of sequences."""
        return self.tokens.shape[0]

    @property
    def N(self) -> int:
        """Sequence length including the query slot (``tokens`` has ``N - 1`` columns)."""
        return self.tokens.shape[1] + 1

    @property
    def last(self) -> torch.Tensor:
        """The last observed token ``s_{N-1}`` of every sequence."""
        return self.tokens[:, -1]

    # -- constructors -----------------------------------------------------------
    @classmethod
    def _trusted(cls, tokens, labels, weights, K: int) -> TokenData:
        """An instance from parts its caller built valid: no second check."""
        data = object.__new__(cls)
        for name, value in (("tokens", tokens), ("labels", labels), ("weights", weights), ("K", K)):
            object.__setattr__(data, name, value)
        return data

    @classmethod
    def from_states(cls, states: torch.Tensor, K: int, weights=None) -> TokenData:
        """Inputs ``s_1..s_{N-1}`` and label ``s_N`` from walks ``states`` (int64 ``(B, N)``)."""
        if not isinstance(states, torch.Tensor) or states.dtype != torch.int64 or states.ndim != 2 or states.shape[1] < 2:
            raise TypeError("states must be an int64 tensor of shape (B, N) with N >= 2")
        return cls(*_split(states, weights), K)

    @classmethod
    def from_one_hot(cls, X: torch.Tensor, labels, weights=None) -> TokenData:
        """The generic entry point: the paper's ``X`` for any vocabulary size.

        Parameters
        ----------
        X:
            ``(B, K, N)`` (or ``(K, N)`` for one input): columns ``1..N-1`` one-hot,
            column ``N`` (the query slot) zero.
        labels:
            ``B`` target indices in ``0..K-1``.
        weights:
            Optional probabilities of the ``B`` inputs (default uniform).
        """
        X = torch.as_tensor(X)
        if X.ndim == 2:
            X = X[None]
        if X.ndim != 3 or X.shape[2] < 2:
            raise ValueError(f"X must have shape (B, K, N) with N >= 2, got {tuple(X.shape)}")
        body, query = X[:, :, :-1], X[:, :, -1]
        is_binary = ((body == 0) | (body == 1)).all()
        if not bool(is_binary) or not bool((body.sum(dim=1) == 1).all()):
            raise ValueError("columns 1..N-1 of X must be one-hot vectors")
        if bool((query != 0).any()):
            raise ValueError("the last column of X (the query slot) must be zero")
        tokens = body.argmax(dim=1).to(torch.int64)
        y = torch.as_tensor(labels, dtype=torch.int64).reshape(-1)
        B = X.shape[0]
        w = torch.full((B,), 1.0 / B, dtype=torch.float64) if weights is None else torch.as_tensor(weights, dtype=torch.float64)
        return cls(tokens, y, w, X.shape[1])

    # -- views ------------------------------------------------------------------
    def one_hot(self, dtype: torch.dtype = torch.float64) -> torch.Tensor:
        """The paper's ``X`` for every sequence: ``(B, K, N)``, last column zero."""
        X = torch.zeros((self.B, self.K, self.N), dtype=dtype)
        X[:, :, :-1] = torch.nn.functional.one_hot(self.tokens, self.K).transpose(1, 2).to(dtype)
        return X

    def token_average(self) -> torch.Tensor:
        """``(1/(N-1)) sum_{i<N} x_i`` per sequence, float64 ``(B, K)`` (what uniform attention sees, up to ``(N-1)/N``)."""
        counts = torch.zeros((self.B, self.K), dtype=torch.float64)
        counts.scatter_add_(1, self.tokens, torch.ones(self.tokens.shape, dtype=torch.float64))
        return counts / (self.N - 1)

    def subset(self, index) -> TokenData:
        """The sequences ``index`` (weights renormalised)."""
        w = self.weights[index]
        return TokenData._trusted(self.tokens[index], self.labels[index], w / w.sum(), self.K)


def _split(states: torch.Tensor, weights=None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    B = states.shape[0]
    w = torch.full((B,), 1.0 / B, dtype=torch.float64) if weights is None else torch.as_tensor(weights, dtype=torch.float64)
    return states[:, :-1].contiguous(), states[:, -1].contiguous(), w


def walk_data(K: int, p: float, N: int, n: int, *, seed: int = 0) -> TokenData:
    """``n`` sampled ring walks of length ``N`` as :class:`TokenData` (uniform weights)."""
    states = ring.sample_walks(K, p, N, n, seed=seed)  # checks K, p, N, n
    return TokenData._trusted(*_split(states), int(K))


def walk_population(K: int, p: float, N: int) -> TokenData:
    """Every ring walk of length ``N`` with its probability (see :func:`onelayer.walks.ring.enumerate_walks`)."""
    states, probs = ring.enumerate_walks(K, p, N)  # checks K, p, N
    return TokenData._trusted(*_split(states, probs), int(K))
