"""The stored sampled runs of the trees scaling study: computing them (:func:`main`, ``make sweeps``) and reading them."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from .... import store
from ....paths import data_path
from ....validation import check_bool, check_choice, check_float
from .. import forward_limits as limits
from ..scaling.criteria import _DEFAULTS, LABEL_DEPTH, SAMPLED_DEPTHS, SAMPLED_LABEL_SIZES, Criterion, nodes
from ..scaling.runs import population_run, sampled_run

__all__ = ["STORED", "STORED_KIND", "FORWARD_SWEEP", "load_stored", "load_forward_sweep",
           "compute_stored", "main"]

#: Where :func:`main` stores the sampled runs by default (inside :func:`onelayer.paths.data_dir`).
STORED = "trees/data/scaling.json"
#: The ``kind`` of that file (:mod:`onelayer.store`).
STORED_KIND = "trees-scaling-sweep"
#: The stored forward heads x depth sweep, inside the data directory (:data:`onelayer.studies.trees.forward_limits.STORED`).
FORWARD_SWEEP = limits.STORED


def load_stored(path=None) -> dict:
    """The stored sampled runs (default :data:`STORED` in the data directory), read through :func:`onelayer.store.read_json`."""
    path = data_path(STORED) if path is None else Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist; create it with: python -m onelayer.studies.trees.scaling --out {path}")
    return store.read_json(path, kind=STORED_KIND)


def load_forward_sweep(path=None) -> dict:
    """The stored forward sweep (:func:`onelayer.studies.trees.forward_limits.load_stored`)."""
    return limits.load_stored(path)


def _population_crossings(m: int, S: int, lr: float) -> list[float]:
    """Population steps of the three default criteria (``nan`` for one not met within twice the attention crossing)."""
    first = population_run(m, S, lr=lr, stop=Criterion("attention"))
    run = population_run(m, S, lr=lr, max_steps=2 * int(first["steps"][-1]) + 10)
    return [float(c.crossing(run["steps"], run)) for c in _DEFAULTS]


def compute_stored(*, quick: bool = False, sweeps=("depth", "labels"), seeds=tuple(range(8)), lr: float = 1.0,
                   batch_size: int = 256, protocol: str = "sgd", budget_factor: float = 1.5,
                   depths: Sequence[int] | None = None, label_sizes: Sequence[int] | None = None,
                   progress=print) -> dict:
    """Run the sampled grids (about 15 minutes on one core; ``quick``: two tiny sizes, seconds).

    Each size gets a budget of ``budget_factor`` times the largest population
    crossing step of the three default criteria (stored as
    ``population_crossings``), and fine record windows around them. Returns the JSON-ready dict that :func:`main` writes.
    """
    check_bool("quick", quick)
    budget_factor = check_float("budget_factor", budget_factor, low=1.0)
    grids = {"depth": [(m, nodes(m)) for m in (depths or SAMPLED_DEPTHS)],
             "labels": [(LABEL_DEPTH, S) for S in (label_sizes or SAMPLED_LABEL_SIZES)]}
    if quick:
        seeds, batch_size = tuple(seeds)[:2], 16
        grids = {"depth": [(2, 7)], "labels": [(2, 9)]}
    result = {"command": "python -m onelayer.studies.trees.scaling --out book/trees/data/scaling.json" + (" --quick" if quick else ""),
              "quick": quick, "lr": lr, "batch_size": batch_size, "protocol": protocol, "seeds": list(seeds),
              "budget_factor": budget_factor, "runs": {}}
    for sweep in sweeps:
        check_choice("sweep", sweep, ("depth", "labels"))
        result["runs"][sweep] = []
        for m, S in grids[sweep]:
            focus = _population_crossings(m, S, lr)
            steps = int(math.ceil(budget_factor * np.nanmax(focus)))
            run = sampled_run(m, S, steps=steps, seeds=seeds, lr=lr, batch_size=batch_size, protocol=protocol,
                              record_points=20 if quick else 100, focus=focus)
            run["population_crossings"] = dict(zip([c.describe() for c in _DEFAULTS], focus))
            result["runs"][sweep].append(run)
            progress(f"{sweep:6s} m={m} S={S:3d} budget {steps:6d}: {run['crossings'][Criterion().describe()]}  "
                     f"{run['seconds']:.1f} s")
    return result


def main(argv=None) -> int:
    """Command line: ``python -m onelayer.studies.trees.scaling --out FILE [--quick] [--sweep depth|labels|all]``."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.trees.scaling", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help=f"output JSON file (default: {STORED} in the data directory)")
    parser.add_argument("--quick", action="store_true", help="tiny version for tests")
    parser.add_argument("--sweep", choices=("depth", "labels", "all"), default="all")
    parser.add_argument("--depths", type=int, nargs="*", default=None, help=f"depths of the depth sweep (default {SAMPLED_DEPTHS})")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    out = data_path(STORED) if args.out is None else args.out
    sweeps = ("depth", "labels") if args.sweep == "all" else (args.sweep,)
    result = compute_stored(quick=args.quick, sweeps=sweeps, depths=args.depths)
    if out.exists() and args.sweep != "all":
        old = store.read_json(out, kind=STORED_KIND)
        result["runs"] = {**old.get("runs", {}), **result["runs"]}
    store.write_json(out, result, kind=STORED_KIND, indent=None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
