"""The settings of the backward (Trees I) chapters, defined once: one frozen instance per chapter (the chapters
``backward_data``, ``backward_construction`` and ``backward_training`` keep their own in their modules in
:mod:`onelayer.chapters.trees`).

Each chapter notebook and its recipes in :mod:`onelayer.trees.registry` read the
same instance, so the book and ``python -m onelayer make`` cannot drift apart; a
quick variant scales one down explicitly (``dataclasses.replace(GENERALIZATION, steps=200)``).

Provenance tags (see the implementation spec ``trees.md``): **[summary]** values come
from third-party summaries of the paper's experiments appendix (one-hot embeddings,
depth ``m = 4`` perfect binary trees on ``S = 31`` labels, mini-batch SGD with batch 256,
learning rate 1, 1,024 random test trees with 0-3 children); **[guess]** values are
this reconstruction's own choices (embedding dimensions, seeds, grids, step counts,
recording intervals, the depth cap of the test trees). Nothing here is **[paper]**:
the paper's own experiments appendix could not be read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GeneralizationSettings", "GENERALIZATION"]


@dataclass(frozen=True)
class GeneralizationSettings:
    """Chapter ``backward_generalization`` (Theorem 4).

    ``S = 31``, ``m = 4``, ``lr = 1``, 1,024 random test trees with 0-3 children [summary];
    the 1,500 steps, the checkpoints every 100 steps, the test depth cap 7 and the seeds [guess].
    """

    S: int = 31
    m: int = 4
    steps: int = 1500
    lr: float = 1.0
    seed: int = 0
    test_trees: int = 1024
    test_seed: int = 7
    test_max_depth: int = 7
    checkpoint_every: int = 100
    #: beyond the assumptions (onelayer.trees.beyond): S = 80, m = 3, 400 steps at lr 8, three seeds (batched),
    #: 20 test trees of each shape [guess]
    beyond_S: int = 80
    beyond_m: int = 3
    beyond_steps: int = 400
    beyond_lr: float = 8.0
    beyond_seeds: tuple[int, ...] = (0, 1, 2)
    beyond_count: int = 20

    @property
    def checkpoints(self) -> list[int]:
        """Recorded steps ``0, checkpoint_every, ..., steps``."""
        return list(range(0, self.steps + 1, self.checkpoint_every))


GENERALIZATION = GeneralizationSettings()
