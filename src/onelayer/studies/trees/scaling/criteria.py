"""Convergence criteria and the size grids of the trees scaling study (:mod:`onelayer.studies.trees.scaling`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ....power_laws import crossing_steps
from ....validation import check_bool, check_choice, check_float, check_int

__all__ = [
    "CRITERIA",
    "DEFAULT_THRESHOLDS",
    "DEPTHS",
    "LABEL_DEPTH",
    "LABEL_SIZES",
    "SAMPLED_DEPTHS",
    "SAMPLED_LABEL_SIZES",
    "Criterion",
    "nodes",
    "tokens",
    "size_grid",
]

#: Convergence criteria of :class:`Criterion`.
CRITERIA = ("attention", "accuracy", "loss")
#: Default threshold of each criterion.
DEFAULT_THRESHOLDS = {"attention": 0.9, "accuracy": 1.0, "loss": 0.01}
#: Depths of the depth grid (``S = n``) computed with the population recursion.
DEPTHS = (2, 3, 4, 5, 6)
#: Depths with stored sampled runs.
SAMPLED_DEPTHS = (2, 3, 4, 5)
#: Fixed depth of the labels grid.
LABEL_DEPTH = 3
#: Label-set sizes of the labels grid (population recursion).
LABEL_SIZES = (15, 31, 63, 127, 255)
#: Label-set sizes with stored sampled runs.
SAMPLED_LABEL_SIZES = (15, 31, 63, 127)


@dataclass(frozen=True)
class Criterion:
    """When a run counts as converged.

    Parameters
    ----------
    name:
        ``"attention"`` (default): mean teacher-forced attention on the correct
        edge ``>= threshold`` (default 0.9). ``"accuracy"``: teacher-forced
        accuracy ``>= threshold`` (default 1.0). ``"loss"``: loss
        ``<= threshold * (loss at step 0)`` (default 0.01).
    threshold:
        In ``(0, 1]`` for ``"attention"``/``"accuracy"``, in ``(0, 1)`` for
        ``"loss"``; ``None`` means the default of the criterion.
    """

    name: str = "attention"
    threshold: float | None = None

    def __post_init__(self):
        check_choice("criterion", self.name, CRITERIA)
        if self.threshold is None:
            object.__setattr__(self, "threshold", DEFAULT_THRESHOLDS[self.name])
        high_open = self.name == "loss"
        thr = check_float("threshold", self.threshold, low=0.0, high=1.0, low_open=True, high_open=high_open)
        object.__setattr__(self, "threshold", thr)

    def describe(self) -> str:
        """One line, e.g. ``"attention on the correct edge >= 0.9"``."""
        return {
            "attention": f"attention on the correct edge >= {self.threshold:g}",
            "accuracy": f"teacher-forced accuracy >= {self.threshold:g}",
            "loss": f"loss <= {self.threshold:g} x initial loss",
        }[self.name]

    def met(self, records: Mapping[str, np.ndarray]) -> np.ndarray:
        """Boolean array: where the criterion holds, from records ``"correct_weight"``, ``"accuracy"``, ``"loss"``."""
        if self.name == "attention":
            return np.asarray(records["correct_weight"]) >= self.threshold
        if self.name == "accuracy":
            return np.asarray(records["accuracy"]) >= self.threshold - 1e-12
        loss = np.asarray(records["loss"], dtype=float)
        return loss <= self.threshold * loss[:1]

    def holds(self, correct_weight: float, accuracy: float, loss: float, initial_loss: float) -> bool:
        """Whether the criterion holds at one step (scalar form of :meth:`met`)."""
        if self.name == "attention":
            return correct_weight >= self.threshold
        if self.name == "accuracy":
            return accuracy >= self.threshold - 1e-12
        return loss <= self.threshold * initial_loss

    def crossing(self, steps, records: Mapping[str, np.ndarray]) -> np.ndarray:
        """First recorded step at which the criterion holds (``nan`` if never); shape ``()`` or ``(B,)``."""
        return crossing_steps(steps, self.met(records).astype(float), 0.5)


#: The three criteria at their default thresholds (all measured on every stored run).
_DEFAULTS = (Criterion("attention"), Criterion("accuracy"), Criterion("loss"))


def _criterion(criterion) -> Criterion:
    if isinstance(criterion, Criterion):
        return criterion
    if isinstance(criterion, str):
        return Criterion(criterion)
    raise TypeError(f"criterion must be a Criterion or one of {CRITERIA}, got {type(criterion).__name__}")


def nodes(m: int) -> int:
    """Number of nodes ``n = 2^(m+1) - 1`` of a perfect binary tree of depth ``m``."""
    m = check_int("m", m, low=1, high=12)
    return 2 ** (m + 1) - 1


def tokens(m: int, *, root_token: bool = True, eos: bool = False) -> int:
    """Teacher-forced sequence length ``N``: ``n - 1`` edges, root token, goal token and the CoT inputs."""
    m = check_int("m", m, low=1, high=12)
    prompt = 2 ** (m + 1) - 2 + int(check_bool("root_token", root_token)) + 1
    return prompt + m + int(check_bool("eos", eos)) - 1


def _check_size(m, S):
    m = check_int("m", m, low=1, high=12)
    S = check_int("S", S, low=nodes(m))
    return m, S



def size_grid(grid: str, *, sampled: bool = False) -> list[tuple[int, int]]:
    """The ``(m, S)`` sizes of a grid: ``"depth"`` (``S = n``) or ``"labels"`` (``m = 3``); ``sampled``: the stored subset."""
    check_choice("grid", grid, ("depth", "labels"))
    check_bool("sampled", sampled)
    if grid == "depth":
        return [(m, nodes(m)) for m in (SAMPLED_DEPTHS if sampled else DEPTHS)]
    return [(LABEL_DEPTH, S) for S in (SAMPLED_LABEL_SIZES if sampled else LABEL_SIZES)]


def _sizes(sizes) -> list[tuple[int, int]]:
    if isinstance(sizes, str):
        return size_grid(sizes)
    out = []
    for i, pair in enumerate(sizes):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"sizes[{i}] must be a pair (m, S), got {pair!r}")
        out.append(_check_size(*pair))
    if not out:
        raise ValueError("sizes must contain at least one (m, S) pair")
    return out
