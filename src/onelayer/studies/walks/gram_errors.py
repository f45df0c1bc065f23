"""The stored sweep of Figures 4 and 5 against the size of the seeded Gram error (Theorem 4.1's chapter).

At ``p = 1`` the paper's recipe stays in the symmetric state of Theorem 4.1 only as long as nothing breaks the
symmetry; in a float64 run the paper's round-off does, and the book stands in for round-off with a seeded relative
error of the positional Gram matrix (:func:`onelayer.studies.walks.sensitivity.scaled_model`), so that every machine
computes the same run. The size of that error is a reading, not a fact of the paper [ours]. This sweep runs
:func:`onelayer.studies.walks.sensitivity.figure45_seeds` (Figures 4 and 5 over many training samples) for each error size,
positional reading and squared norm ``||p_i||^2``; the reading's own default sizes (``2*10^-12`` for sinusoidal
positions, 0 for exactly orthogonal ones) are in the ``walks-seed-rates`` sweep.

``python -m onelayer sweep walks-figure45-gram-errors`` (or ``python -m onelayer.studies.walks.gram_errors --out PATH``)
writes :data:`STORED`; ``--quick`` is a tiny version for tests. :func:`load` reads it back.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from ... import paths, store
from . import sensitivity

__all__ = ["STORED", "KIND", "FULL", "QUICK", "sweep", "save", "load", "main"]

#: Where the stored sweep lives, relative to the data directory (:func:`onelayer.paths.data_path`).
STORED = "walks/data/figure45_gram_errors.json"
#: The ``kind`` of the stored file (:mod:`onelayer.store`).
KIND = "walks-figure45-gram-errors"
#: The full sweep: relative Gram error sizes, positional readings, squared norms (those of ``walks-seed-rates``)
#: and training samples (data seeds 0, 1, ...) per cell.
FULL = {"errors": (1e-15, 1e-12, 1e-9, 1e-6), "readings": ("exact", "sin"), "norms": (20.0, 40.0, "M/16", "M/8", "M/2"),
        "seeds": 40}
#: The ``--quick`` variant (seconds): two sizes, one reading and norm, two samples, short walks.
QUICK = {"errors": (1e-12, 1e-6), "readings": ("exact",), "norms": (40.0,), "seeds": 2, "N": 25, "M": 100, "n": 100}


def sweep(*, quick: bool = False, progress=print) -> dict:
    """:func:`~onelayer.studies.walks.sensitivity.figure45_seeds` for every (error, reading, norm) of :data:`FULL` (or
    :data:`QUICK`); returns the stored content: ``meta`` and ``rows`` (one per training sample and cell)."""
    c = QUICK if quick else FULL
    size = {"N": c["N"], "M": c["M"], "n_train": c["n"], "n_test": c["n"]} if quick else {}
    start = time.perf_counter()
    rows = []
    for error in c["errors"]:
        for reading in c["readings"]:
            for norm in c["norms"]:
                rows += sensitivity.figure45_seeds(norm, positions=reading, seeds=range(c["seeds"]),
                                                   relative_gram_error=error, **size)
            progress(f"Gram error {error:g}, {reading}: {time.perf_counter() - start:.0f} s")
    settings = {k: list(v) if isinstance(v, tuple) else v for k, v in c.items()}
    return {"meta": {"created_by": "python -m onelayer sweep walks-figure45-gram-errors" + (" --quick" if quick else ""),
                     "quick": quick, "settings": settings, "seconds": round(time.perf_counter() - start, 1)},
            "rows": rows}


def save(data: dict, path) -> Path:
    """Write the sweep as a versioned JSON file of kind :data:`KIND` (creating the directory)."""
    return store.write_json(path, data, kind=KIND, indent=None)


def load(path=None) -> dict:
    """Read the sweep written by :func:`save`: ``path`` or :data:`STORED` in the data directory."""
    path = paths.data_path(STORED) if path is None else paths.resolve(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; create it with: python -m onelayer sweep walks-figure45-gram-errors")
    return store.from_jsonable(store.read_json(path, kind=KIND))


def main(argv=None) -> int:
    """Command line: run the sweep and write it as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.walks.gram_errors", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests (seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    data = sweep(quick=args.quick)
    save(data, args.out)
    print(f"wrote {args.out} ({len(data['rows'])} rows, {data['meta']['seconds']} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
