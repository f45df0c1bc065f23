"""The settings of the forward (Trees II) chapters, defined once: one frozen instance per chapter.

Each chapter notebook and its recipes in :mod:`onelayer.trees.registry` read the
same instance; a quick variant scales one down explicitly
(``dataclasses.replace(TRAINING, steps=60)``).

Provenance tags (see the implementation spec ``trees.md``): **[summary]** values come
from third-party summaries of the paper's experiments appendix (one-hot embeddings,
depth ``m = 3`` perfect binary training trees on ``S = 25`` labels, mini-batch SGD with
batch 256, learning rate 0.2 for the forward task, 1,024 random test trees);
**[guess]** values are this reconstruction's own choices. The chapters train with
learning rate 2 under the per-position mean loss (:attr:`TrainingSettings.lr`), the
same dynamics as 0.2 under a loss summed over positions up to the time scale (the
forward_training chapter shows the rescaling), so 2 is [guess] and 0.2 [summary].
Nothing here is **[paper]**.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LimitsSettings", "LIMITS"]


@dataclass(frozen=True)
class LimitsSettings:
    """Chapter ``forward_limits`` (Theorem 8, single against two heads, heads x depth).

    ``S = 25``, ``m = 3``, 1,024 random test trees [summary]; ``lr = 2`` (mean loss), 1,000
    steps, the 600 steps of the runs without a chain of thought, the depth cap 6 and the
    seeds [guess]. The stored sweeps have their own settings in :mod:`~onelayer.trees.forward.limits`.
    """

    S: int = 25
    m: int = 3
    steps: int = 1000
    lr: float = 2.0
    test_trees: int = 1024
    test_seed: int = 8
    test_max_depth: int = 6
    train_eval_trees: int = 1024
    train_eval_seed: int = 9
    direct_steps: int = 600
    #: beyond the assumptions (onelayer.trees.beyond): S = 80, m = 2, 1,000 steps at lr 8, batch 64, one seed,
    #: 20 test trees of each shape [guess]
    beyond_S: int = 80
    beyond_m: int = 2
    beyond_steps: int = 1000
    beyond_lr: float = 8.0
    beyond_batch: int = 64
    beyond_seeds: tuple[int, ...] = (0,)
    beyond_count: int = 20


LIMITS = LimitsSettings()
