"""Normalisation of the squared loss, common to the backward and the forward model.

Both models regress the next token with ``c * ||y_hat - y||^2``. The paper's
normalisation is not known to us, so it is a named option:
:class:`LossOptions` chooses ``c`` (1/2 or 1) and whether the errors are
averaged over all (tree, position) pairs or summed over positions and averaged
over trees.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...validation import check_bool, check_choice

__all__ = ["REDUCTIONS", "LossOptions"]

#: Accepted values of ``reduction``.
REDUCTIONS = ("mean", "sum")


@dataclass(frozen=True)
class LossOptions:
    """Loss normalisation (reconstructed choice; the paper's is unknown).

    ``reduction="mean"`` averages over all (tree, position) pairs,
    ``"sum"`` sums over positions and averages over trees; ``half`` puts the
    factor 1/2 in front of the squared error. Default: mean with 1/2.
    """

    reduction: str = "mean"
    half: bool = True

    def __post_init__(self):
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_bool("half", self.half)
