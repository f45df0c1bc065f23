"""The stored seed sweep of the Theorem 3.1 and 4.1 chapters: claims about one training sample, measured as rates.

Four experiments, each over many training samples (data seeds), each trained with
:func:`onelayer.studies.walks.batched.train_batched`:

* ``"first_steps"``: :func:`onelayer.studies.walks.first_steps.first_steps_samples` at ``p = 0.7`` (how many columns of
  ``V^(1)`` peak at the most frequent training label; whether step 3 is Bayes-optimal);
* ``"edge"``: :func:`onelayer.studies.walks.edge.edge_table` for ``K = 6`` (and ``K = 3, 4``) at ``p`` near 1 (Bayes-optimal
  on the parent, or locked onto another lag);
* ``"figure45"``: :func:`onelayer.studies.walks.sensitivity.figure45_seeds` per positional reading (sinusoidal with the
  seeded Gram error, exactly orthogonal) and squared norm ``||p_i||^2`` (Figures 4 and 5 reproduced or not);
* ``"direction"``: :func:`onelayer.studies.walks.direction.direction_samples` at ``p = 0.7`` (the best power ``(Pi^T)^a``
  of ``V``'s direction under the log-loss and the squared loss; the growth of Lemma C.7's remainder).

``python -m onelayer sweep walks-seed-rates`` (or ``python -m onelayer.studies.walks.seed_rates --out PATH``) writes
:data:`STORED`; ``--quick`` is a tiny version for tests. :func:`load` reads it back (``"nan"`` strings become
floats again).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from ... import paths, store
from . import direction, edge, first_steps, sensitivity

__all__ = ["STORED", "KIND", "FULL", "QUICK", "sweep", "save", "load", "main"]

#: Where the stored sweep lives, relative to the data directory (:func:`onelayer.paths.data_path`).
STORED = "walks/data/seed_rates.json"
#: The ``kind`` of the stored file (:mod:`onelayer.store`).
KIND = "walks-seed-rates"
#: The full sweep: walk parameter and samples of the first steps; ``p``, ring sizes and seeds of the edge (the
#: small rings with the same seeds); readings, squared norms and seeds of Figures 4 and 5; walk parameter, seeds and
#: steps of the direction runs.
FULL = {"first_p": 0.7, "first_seeds": 400, "edge_ps": edge.EDGE_PS, "edge_Ks": (6, 3, 4), "edge_seeds": 40,
        "readings": ("sin", "exact"), "norms": (20.0, 40.0, "M/16", "M/8", "M/2"), "figure45_seeds": 40,
        "direction_p": 0.7, "direction_seeds": 40, "direction_steps": 300, "remainder_steps": 1000}
#: The ``--quick`` variant (seconds): the same experiments, few seeds, short walks.
QUICK = {"first_p": 0.7, "first_seeds": 4, "edge_ps": (0.9, 0.99), "edge_Ks": (6,), "edge_seeds": 3,
         "readings": ("sin", "exact"), "norms": (40.0,), "figure45_seeds": 3, "direction_p": 0.7, "direction_seeds": 2,
         "direction_steps": 20, "remainder_steps": 60, "N": 25, "M": 100, "n": 100}


def sweep(*, quick: bool = False, progress=print) -> dict:
    """Run the four experiments with :data:`FULL` (or :data:`QUICK`) settings; returns the stored content."""
    c = QUICK if quick else FULL
    size = {"N": c["N"], "M": c["M"], "n_train": c["n"], "n_test": c["n"]} if quick else {}
    out = {"meta": {"created_by": "python -m onelayer sweep walks-seed-rates" + (" --quick" if quick else ""),
                    "quick": quick, "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in c.items()},
                    "seconds": {}}}
    start = time.perf_counter()
    out["first_steps"] = first_steps.first_steps_samples(c["first_p"], seeds=range(c["first_seeds"]), **size)
    out["meta"]["seconds"]["first_steps"] = round(time.perf_counter() - start, 1)
    progress(f"first steps: {len(out['first_steps'])} samples, {out['meta']['seconds']['first_steps']} s")
    start = time.perf_counter()
    out["edge"] = []
    for K in c["edge_Ks"]:
        for p in c["edge_ps"]:  # one p at a time keeps the member batch small
            out["edge"] += edge.edge_table((p,), seeds=range(c["edge_seeds"]), Ks=(K,), **size)
        progress(f"edge K={K}: {time.perf_counter() - start:.0f} s")
    out["meta"]["seconds"]["edge"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    out["figure45"] = []
    for reading in c["readings"]:
        for norm in c["norms"]:
            out["figure45"] += sensitivity.figure45_seeds(norm, positions=reading, seeds=range(c["figure45_seeds"]),
                                                          **size)
            progress(f"figures 4/5 {reading} {norm}: {time.perf_counter() - start:.0f} s")
    out["meta"]["seconds"]["figure45"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    out["direction"] = direction.direction_samples(
        c["direction_p"], seeds=range(c["direction_seeds"]), direction_steps=c["direction_steps"],
        remainder_steps=c["remainder_steps"], **({"N": c["N"], "M": c["M"], "n_train": c["n"]} if quick else {}))
    out["meta"]["seconds"]["direction"] = round(time.perf_counter() - start, 1)
    progress(f"direction: {len(out['direction'])} samples, {out['meta']['seconds']['direction']} s")
    return out


def save(data: dict, path) -> Path:
    """Write the sweep as a versioned JSON file of kind :data:`KIND` (creating the directory)."""
    return store.write_json(path, data, kind=KIND, indent=None)


def load(path=None) -> dict:
    """Read the sweep written by :func:`save`: ``path`` or :data:`STORED` in the data directory."""
    path = paths.data_path(STORED) if path is None else paths.resolve(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} not found; create it with: python -m onelayer sweep walks-seed-rates")
    return store.from_jsonable(store.read_json(path, kind=KIND))


def main(argv=None) -> int:
    """Command line: run the sweep and write it as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.walks.seed_rates", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="output JSON file")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests (seconds)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    data = sweep(quick=args.quick)
    data["meta"]["seconds"]["total"] = round(time.perf_counter() - start, 1)
    save(data, args.out)
    print(f"wrote {args.out} ({data['meta']['seconds']['total']} s)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
