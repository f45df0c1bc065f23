"""The stored rate of Theorem 3.1 item 3 over many training samples (issue 22): how fast ``V``'s direction reaches the
sample's own square-root target, one log-log slope per sample (:func:`onelayer.studies.walks.direction.target_slopes`).

The samples are data seeds ``0 .. 39``, the 40 training samples of the ``"direction"`` experiment of
:mod:`onelayer.studies.walks.seed_rates` (seed 0 is the theorem chapter's one-sample run). ``python -m onelayer sweep
walks-direction-slopes`` (or ``python -m onelayer.studies.walks.direction_slopes --out PATH``) writes :data:`STORED` (about
two minutes on one core); ``--quick`` is a small version for tests.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from ... import paths, store
from .direction import target_slopes

__all__ = ["STORED", "KIND", "FULL", "QUICK", "sweep", "save", "load", "main"]

#: Where the stored sweep lives, relative to the data directory (:func:`onelayer.paths.data_path`).
STORED = "walks/data/direction_slopes.json"
#: The ``kind`` of the stored file (:mod:`onelayer.store`).
KIND = "walks-direction-slopes"
#: The full sweep: walk parameter, samples, GD steps, recorded steps and the first fitted record (the chapter's run).
FULL = {"p": 0.7, "seeds": 40, "steps": 1000, "n_records": 40, "from_record": 10}
#: The ``--quick`` variant (seconds): short walks, a short run, few samples.
QUICK = {"p": 0.7, "seeds": 3, "steps": 60, "n_records": 12, "from_record": 4, "N": 25, "M": 100, "n_train": 200}


def sweep(*, quick: bool = False, progress=print) -> dict:
    """:func:`~onelayer.studies.walks.direction.target_slopes` with :data:`FULL` (or :data:`QUICK`) settings."""
    c = dict(QUICK if quick else FULL)
    start = time.perf_counter()
    rows = target_slopes(c.pop("p"), seeds=tuple(range(c.pop("seeds"))), **c)
    seconds = round(time.perf_counter() - start, 1)
    progress(f"direction slopes: {len(rows)} samples, {seconds} s")
    return {"meta": {"created_by": "python -m onelayer sweep walks-direction-slopes" + (" --quick" if quick else ""),
                     "quick": quick, "settings": dict(QUICK if quick else FULL), "seconds": seconds},
            "samples": rows}


def save(data: dict, path) -> Path:
    """Write the sweep as a versioned JSON file of kind :data:`KIND`."""
    return store.write_json(path, data, kind=KIND)


def load(path=None) -> dict:
    """Read the sweep written by :func:`save`: ``path`` or :data:`STORED` in the data directory."""
    path = paths.data_path(STORED) if path is None else paths.resolve(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; create it with: python -m onelayer sweep walks-direction-slopes")
    return store.read_json(path, kind=KIND)


def main(argv=None) -> int:
    """Command line: run the sweep and write it as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.walks.direction_slopes",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")
    parser.add_argument("--quick", action="store_true", help="small version for tests (seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    data = sweep(quick=args.quick)
    save(data, args.out)
    print(f"wrote {args.out} ({data['meta']['seconds']} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
