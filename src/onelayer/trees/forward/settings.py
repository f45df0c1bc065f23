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

__all__ = ["TrainingSettings", "LimitsSettings", "TRAINING", "LIMITS"]


@dataclass(frozen=True)
class TrainingSettings:
    """Chapter ``forward_training`` (Theorem 5).

    ``S = 25``, ``m = 3``, ``batch_size = 256`` [summary]; ``lr = 2`` under the mean loss
    [guess] (the summaries' 0.2 [summary] is ``paper_lr``, used by the rescaling check
    with ``paper_lr_steps`` steps); 1,000 steps and the recording interval [guess].
    """

    S: int = 25
    m: int = 3
    steps: int = 1000
    lr: float = 2.0
    batch_size: int = 256
    record_every: int = 20
    paper_lr: float = 0.2
    paper_lr_steps: int = 200
    #: learned value maps (issue 14): m = 2, S = 17, the module's defaults except fewer steps [guess]
    lv_m: int = 2
    lv_S: int = 17
    lv_steps: int = 1200
    lv_seeds: tuple[int, ...] = (0, 1, 2)
    lv_init_scales: tuple[float, ...] = (0.0, 0.01, 0.1)
    lv_record_every: int = 50
    #: frames of the attention scrubber (recorded steps of the main run)
    scrub_steps: tuple[int, ...] = (0, 20, 40, 60, 100, 140, 200, 300, 400, 500, 600, 800, 1000)
    scrub_seed: int = 4


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


TRAINING = TrainingSettings()
LIMITS = LimitsSettings()
