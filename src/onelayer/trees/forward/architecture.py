"""The forward model's architectures and parameters: head kinds and roles, initialisation, checks.

A :class:`ForwardArchitecture` says which heads a forward model has (see
:mod:`onelayer.trees.forward.model` for the formula): *structured* heads with a
trainable key-query part and a value map fixed by the head's role
(:data:`ROLES`), or *full* heads whose key-query and value matrices are both
learned. :func:`init_params` builds the parameters (zero by default),
:func:`dense_matrices` writes any head as the pair ``(W^KQ_l, W^V_l)`` of the
generic formula.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from ...validation import check_choice, check_float, check_int
from ..shared.embeddings import check_embeddings
from .layout import ForwardBatch

__all__ = ["ROLES", "KINDS", "ForwardArchitecture", "two_head", "single_head", "full_heads", "init_params", "dense_matrices"]

#: Value maps of structured heads: fixed (``"swap"``, ``"stage"``, ``"swap+stage"``) or a trainable dense
#: ``W^V_l`` (``"learned"``, a named variation).
ROLES = ("swap", "stage", "swap+stage", "learned")
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
    return _init(arch, A, init_scale, gen)


def _init(arch: ForwardArchitecture, A: torch.Tensor, init_scale: float = 0.0, gen=None) -> dict[str, torch.Tensor]:
    """:func:`init_params` with arguments its caller has checked."""
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


def _check_all(params, arch, A, batch):
    _check_arch(arch)
    if not isinstance(batch, ForwardBatch):
        raise TypeError(f"batch must be a ForwardBatch, got {type(batch).__name__}")
    if not isinstance(A, torch.Tensor) or A.dim() != 2 or A.shape[1] != batch.S:
        raise ValueError(f"A must be a tensor of shape (d, S={batch.S})")
    _check_params(params, arch, A.shape[0])


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
