"""The floating inputs that studies and chapters build for :mod:`onelayer.trees`, passed through the jitter lane.

The papers' modules build their inputs exactly and never perturb them; a caller that builds a floating input
(Gaussian embeddings, a Gaussian initialisation) takes it from here, so that ``ONELAYER_JITTER``
(:mod:`onelayer.jitter`, ``make test-jitter``) moves its last bits. With the variable unset these functions
return exactly what :mod:`onelayer.trees` builds (``jitter`` returns its input unchanged).
"""

from __future__ import annotations

import torch

from ...jitter import jitter
from ...trees.forward.model import ForwardArchitecture, init_params
from ...trees.shared.embeddings import independent_embeddings

__all__ = ["gaussian_embeddings", "forward_init"]


def gaussian_embeddings(S: int, d: int, gen: torch.Generator) -> torch.Tensor:
    """:func:`~onelayer.trees.shared.embeddings.independent_embeddings` (float64), jittered as
    ``"trees.embeddings.independent"``."""
    return jitter(independent_embeddings(S, d, gen), "trees.embeddings.independent")


def forward_init(arch: ForwardArchitecture, A: torch.Tensor, *, init_scale: float = 0.0,
                 gen: torch.Generator | None = None) -> dict[str, torch.Tensor]:
    """:func:`~onelayer.trees.forward.model.init_params`, each matrix jittered as ``"trees.forward.init.<name>"``
    (zeros stay zeros: the jitter is relative)."""
    return {name: jitter(p, f"trees.forward.init.{name}") for name, p in init_params(arch, A, init_scale=init_scale,
                                                                                      gen=gen).items()}
