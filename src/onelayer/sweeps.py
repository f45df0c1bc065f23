"""The registry of stored sweeps: the long experiments whose results the chapters load.

A *sweep* runs for minutes to an hour and writes one JSON file (through
:mod:`onelayer.store`) into the data directory (:mod:`onelayer.paths`); a
chapter then loads that file and a test recomputes a small case against it.
``python -m onelayer sweep NAME [options]`` runs one; ``python -m onelayer sweep
--list`` lists them.

**Adding a sweep.** Give the module that runs it a ``main(argv=None) -> int``
with its own options (it must accept ``--out PATH``), then add one
:class:`Sweep` line to :data:`SWEEPS`. The module is imported only when its
sweep runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Sweep", "SWEEPS", "get", "run"]


@dataclass(frozen=True)
class Sweep:
    """One stored sweep: its name, the ``module:function`` that runs it, its file in the data directory."""

    name: str
    entry: str
    stored: str
    description: str
    minutes: int

    def load_main(self):
        """The sweep's ``main(argv)`` function (imports its module)."""
        module, _, func = self.entry.partition(":")
        return getattr(importlib.import_module(module), func)


#: Every stored sweep (``make sweeps`` runs each of them; ``tests/test_cli.py`` checks that none is missing).
SWEEPS: dict[str, Sweep] = {
    s.name: s
    for s in (
        Sweep("trees-forward-limits", "onelayer.studies.trees.forward_limits:main", "trees/data/forward_sweep.json",
              "Trees II: the loss table and the heads x depth sweep of the limits chapter", 75),
        Sweep("trees-forward-seeds", "onelayer.studies.trees.forward_seeds:main", "trees/data/forward_seeds.json",
              "Trees II: the heads x depth sweep for seeds 1 and 2, with each run's failure profile", 30),
        Sweep("trees-forward-layouts", "onelayer.studies.trees.forward_alternative_layouts:main", "trees/data/forward_layouts.json",
              "Trees II: the forward models under two alternative layouts (child first; no turning token)", 6),
        Sweep("trees-forward-training-seeds", "onelayer.studies.trees.forward_seeded_training:main",
              "trees/data/forward_training_seeds.json",
              "Trees II, Theorem 5: the two-head run and the learned-value-map split over 20 seeds each", 12),
        Sweep("trees-forward-rescaling-seeds", "onelayer.studies.trees.forward_rescaling:main",
              "trees/data/forward_rescaling_seeds.json",
              "Trees II, Theorem 5: learning rate 0.2 (mean, sum over positions) against 2 at equal eta_eff t, 20 seeds", 7),
        Sweep("trees-forward-edge-flag", "onelayer.studies.trees.forward_edge_flag:main", "trees/data/forward_edge_flag.json",
              "Trees II: one head against two, 20 seeds per cell, under both readings of the prompt edges' stage block", 12),
        Sweep("trees-forward-limit-rates", "onelayer.studies.trees.forward_limit_rates:main",
              "trees/data/forward_limit_rates.json",
              "Trees II: Theorem 8, no chain of thought, no turning token, and 1-4 full heads at m = 2, 3 with their "
              "failures by tree size and goal depth, over 20 seeds each", 35),
        Sweep("walks-scaling", "onelayer.studies.walks.scaling.stored:main", "walks/data/scaling.json",
              "Walks: steps to converge and time per step against N and M", 6),
    )
}


def get(name: str) -> Sweep:
    """The sweep registered as ``name``; ``ValueError`` naming the known sweeps otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if name not in SWEEPS:
        raise ValueError(f"unknown sweep {name!r}; the sweeps are: {', '.join(SWEEPS)}")
    return SWEEPS[name]


def output_file(name: str, argv: Sequence[str] = ()) -> Path:
    """The file the sweep ``name`` writes with options ``argv``: its ``--out``, else its file in the data directory."""
    from .paths import data_path

    argv = list(argv)
    for i, arg in enumerate(argv):
        if arg.startswith("--out="):
            return Path(arg.split("=", 1)[1])
        if arg == "--out" and i + 1 < len(argv):
            return Path(argv[i + 1])
    return data_path(get(name).stored)


def run(name: str, argv: Sequence[str] = ()) -> int:
    """Run the sweep ``name`` with its own options ``argv``; ``--out`` defaults to its file in the data directory."""
    from .paths import data_path

    sweep = get(name)
    argv = list(argv)
    if not any(a == "--out" or a.startswith("--out=") for a in argv) and not any(a in ("-h", "--help") for a in argv):
        argv = ["--out", str(data_path(sweep.stored)), *argv]
    return int(sweep.load_main()(argv) or 0)
