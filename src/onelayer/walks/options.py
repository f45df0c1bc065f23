"""The sizes and named options of the walks model (:class:`ModelConfig`); see :mod:`onelayer.walks.model` for each option."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..seeding import DTYPES
from ..validation import check_bool, check_choice, check_float, check_int
from . import losses, positions

__all__ = ["ModelConfig", "NORMALIZE", "LOGIT_SCALES", "REDUCTIONS", "INITS"]

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
    """Sizes and options of the model (see :mod:`onelayer.walks.model` for each option)."""

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
        check_choice("loss", self.loss, losses.LOSSES)
        check_float("epsilon", self.epsilon, low=0.0)
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_choice("dtype", self.dtype, tuple(DTYPES))

    def replace(self, **changes) -> ModelConfig:
        """A copy with some fields changed."""
        return ModelConfig(**{**asdict(self), **changes})
