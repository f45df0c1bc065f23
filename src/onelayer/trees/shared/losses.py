"""Normalisation of the squared loss, common to the backward and the forward model.

Both models regress the next token with ``c * ||y_hat - y||^2``. The paper's
normalisation is not known to us, so it is a named option:
:class:`LossOptions` chooses ``c`` (1/2 or 1) and whether the errors are
averaged over all (tree, position) pairs or summed over positions and averaged
over trees; :func:`normalised` applies it, for every loss of both models.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...validation import check_bool, check_choice

__all__ = ["REDUCTIONS", "LossOptions", "normalised"]

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


def normalised(total, *, positions, trees, options: LossOptions):
    """The loss from the summed squared error ``total`` under ``options``: ``c * total / positions`` for
    ``reduction="mean"`` (``positions``: the number of (tree, position) pairs summed), ``c * total / trees`` for
    ``"sum"``, with ``c = 1/2`` if ``options.half`` else ``1``.

    ``total``, ``positions`` and ``trees`` may be numbers or tensors (one entry per member of a batched run); the
    factor ``c`` is a power of two, so ``c * total`` is exact and the result is rounded once, by the division.
    """
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    c = 0.5 if options.half else 1.0
    return c * total / (positions if options.reduction == "mean" else trees)
