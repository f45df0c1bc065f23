"""The floating inputs of the walks studies, passed through :func:`onelayer.jitter.jitter`.

The paper's floor (:mod:`onelayer.walks`) builds its inputs unperturbed; a perturbation is the caller's. Every
study and chapter builds its models here, so that the jitter test lane (``ONELAYER_JITTER``) moves the last bits
of the same inputs as before: the sinusoidal positions, the injected Gram error and Gaussian initialisations.
"""

from __future__ import annotations

import torch

from ...jitter import jitter
from ...walks import positions
from ...walks.model import ModelConfig, WalkTransformer

__all__ = ["walk_model", "positional_matrix"]


def walk_model(config: ModelConfig | None = None, **options) -> WalkTransformer:
    """:class:`~onelayer.walks.model.WalkTransformer` whose floating inputs pass through ``jitter``."""
    return WalkTransformer(config, perturb=jitter, **options)


def positional_matrix(N: int, M: int, kind: str = "sin", **options) -> torch.Tensor:
    """:func:`onelayer.walks.positions.positional_matrix` with its floating inputs passed through ``jitter``."""
    return positions.positional_matrix(N, M, kind, perturb=jitter, **options)
