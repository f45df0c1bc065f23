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
