"""The stored sweep: its file, :func:`save`, :func:`load` and the command line that writes it."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from .... import paths, store
from .runs import sweep

#: Where the stored sweep lives, relative to the data directory (:func:`onelayer.paths.data_path`).
STORED = "walks/data/random_init_sweep.json"
#: The ``kind`` of the stored file (:mod:`onelayer.store`).
KIND = "walks-random-init-sweep"
#: What the command line computes.
DESCRIPTION = "Section 5.2 of the walks paper: small random initialisation, and a sweep over the recipe's unknowns."
#: Tiny sizes of the sweep's ``--quick`` variant (seconds): steps, recording, walk length, dimension, walks, the
#: steps of the weighted-token table and of the snapshots of ``V``.
QUICK = {"steps": 20, "record_every": 5, "N": 13, "M": 100, "n_train": 50, "n_test": 50, "table_steps": (5, 10),
         "snapshot_steps": (10, 20)}


def save(data: dict, path) -> Path:
    """Write a sweep as a versioned JSON file of kind :data:`KIND` (creating the directory)."""
    return store.write_json(path, data, kind=KIND, indent=None)


def load(path=None) -> dict:
    """Read a sweep written by :func:`save`: ``path`` (see :func:`onelayer.paths.resolve`) or :data:`STORED` in the data directory."""
    path = paths.data_path(STORED) if path is None else paths.resolve(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; create it with: python -m onelayer.studies.walks.random_init --out {path}")
    return store.read_json(path, kind=KIND)


def main(argv=None) -> int:
    """Command line: run the sweep and write it as JSON (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.walks.random_init", description=DESCRIPTION)
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(20)), help="seeds (default 0 to 19)")
    parser.add_argument("--detail-seeds", type=int, nargs="+", default=[0, 1, 2],
                        help="seeds whose runs keep every curve, V and the attention profile (default 0 1 2); the "
                             "other seeds keep the optimal-fraction curve, the final values and the weighted-token table")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests (seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.quick:
        data = sweep(normalizations=("keys_and_query",), readings=(("mean", 0.01), ("sum", 0.01)), seeds=args.seeds[:1],
                     progress=True, **QUICK)
    else:
        data = sweep(seeds=tuple(args.seeds), detail_seeds=tuple(s for s in args.detail_seeds if s in args.seeds),
                     progress=True)
    save(data, args.out)
    print(f"wrote {args.out} ({len(data['runs'])} runs)")
    return 0

