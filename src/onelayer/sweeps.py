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
        Sweep("walks-random-init", "onelayer.studies.walks.random_init.stored:main", "walks/data/random_init_sweep.json",
              "Walks, Section 5.2: GD from small Gaussian initialisation, 3 normalisations x 6 step readings x 2 walks "
              "x 20 seeds", 35),
        Sweep("walks-qa-seeds", "onelayer.studies.walks.qa_seeds:main", "walks/data/qa_seeds.json",
              "Walks, Section 6: both question-answering tasks over 40 seeds, every bias placement and normalisation", 6),
        Sweep("trees-backward-seeds", "onelayer.studies.trees.backward_seeds:main", "trees/data/backward_seeds.json",
              "Trees I: backward SGD over 20 seeds (one-hot) and 20 embedding draws (Gaussian), tested on 1,024 random trees, "
              "with the test loss, the margin and its bound at every checkpoint", 6),
        Sweep("trees-backward-beyond", "onelayer.studies.trees.beyond:main", "trees/data/backward_beyond.json",
              "Trees I: the backward model past the assumptions over 20 seeds (one-hot) and 20 embedding draws (Gaussian)", 2),
        Sweep("walks-seed-rates", "onelayer.studies.walks.seed_rates:main", "walks/data/seed_rates.json",
              "Walks, Theorems 3.1 and 4.1: V(1) columns, the edge near p=1, Figures 4/5 and the direction of V over "
              "many training samples", 10),
        Sweep("walks-figure45-gram-errors", "onelayer.studies.walks.gram_errors:main", "walks/data/figure45_gram_errors.json",
              "Walks, Theorem 4.1: Figures 4/5 over 40 training samples per size of the seeded Gram error, positional "
              "reading and norm", 8),
        Sweep("trees-forward-beyond", "onelayer.studies.trees.beyond:forward_main", "trees/data/forward_beyond.json",
              "Trees II: the forward model past the assumptions over 20 Gaussian embedding draws", 10),
        Sweep("walks-variations-seeds", "onelayer.studies.walks.variations.seeds:main", "walks/data/variations_seeds.json",
              "Walks, variations: the 1/sqrt(d) logit scale and the parent at lag 2 over 20 seeds per p", 1),
        Sweep("walks-direction-slopes", "onelayer.studies.walks.direction_slopes:main", "walks/data/direction_slopes.json",
              "Walks, Theorem 3.1 item 3: the rate at which V's direction reaches the sample's own target, "
              "over 40 training samples", 2),
        Sweep("walks-scaling", "onelayer.studies.walks.scaling.stored:main", "walks/data/scaling.json",
              "Walks: steps to converge and time per step against N and M", 6),
        Sweep("trees-scaling", "onelayer.studies.trees.scaling.stored:main", "trees/data/scaling.json",
              "Trees: steps to converge and time per step against depth and number of labels", 17),
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
