"""The stored heavier scaling study (:func:`stored_study`), its file and the command line that writes it."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from .... import paths, store
from ....walks.positions import M_for
from .critical import critical_M
from .runs import CRITICAL_CRITERIA, CRITICAL_N, CURVE_N, M_FIXED, M_GRID, N_FIXED, measure


#: Where the stored heavier study lives, relative to the data directory (:func:`onelayer.paths.data_path`).
STORED = "walks/data/scaling.json"
#: The ``kind`` of the stored file (:mod:`onelayer.store`).
KIND = "walks-scaling"
#: What the command line computes.
DESCRIPTION = ("How the walks model's convergence and cost grow with the sequence length ``N`` and the positional "
               "dimension ``M``.")
_NON_FINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def stored_study(*, quick: bool = False, progress=print) -> dict:
    """The heavier grids stored in :data:`STORED`.

    Sixteen seeds; ``p = 0.7`` and ``p = 0.5``; the sweep over ``N`` at
    ``M = 1000`` extended to ``N = 577`` with 1000 and with 4000 training
    walks (the second shows that the lost seeds are a sampling effect); the
    sweep over ``M`` and along ``M = N^{3/2}`` (to ``N = 385``);
    :func:`~onelayer.studies.walks.scaling.critical.critical_M` for both criteria up to ``N = 769``, with 1000 and with
    4000 training walks (``"<criterion>, more walks"``). About 6 minutes on one
    core (``quick=True``: seconds).
    """
    seeds = tuple(range(3 if quick else 16))
    big_N = (13, 25, 49) if quick else (13, 25, 49, 97, 193, 289, 385, 577)
    curve_N = (13, 25, 49) if quick else CURVE_N + (385,)
    Ms = (100, 400, 1600) if quick else M_GRID
    crit_N = (13, 25, 49) if quick else CRITICAL_N + (385, 769)
    n_big = 600 if quick else 4000
    base = {"seeds": seeds, "n_train": 200 if quick else 1000, "n_test": 200 if quick else 1000,
            "steps": 8 if quick else 16, "timing_steps": 2 if quick else 4}
    out = {"meta": {"created_by": "python -m onelayer.studies.walks.scaling", "quick": quick, "defaults": dict(base),
                    "M_fixed": M_FIXED, "N_fixed": N_FIXED}, "studies": {}, "critical": {}}
    out["meta"]["defaults"]["seeds"] = list(seeds)
    for p in (0.7, 0.5):
        start = time.perf_counter()
        study = {
            "N": measure([(N, M_FIXED) for N in big_N], p=p, axis="N", **base),
            "M": measure([(N_FIXED, M) for M in Ms], p=p, axis="M", **base),
            "curve": measure([(N, M_for(N)) for N in curve_N], p=p, axis="curve", **base),
            "N_more_walks": measure([(N, M_FIXED) for N in big_N], p=p, axis="N_more_walks",
                                    **{**base, "n_train": n_big}),
        }
        out["studies"][f"p={p}"] = study
        progress(f"study p={p}: {time.perf_counter() - start:.0f} s")
    for criterion in CRITICAL_CRITERIA:
        for walks, key in ((base["n_train"], criterion), (n_big, f"{criterion}, more walks")):
            start = time.perf_counter()
            out["critical"][key] = critical_M(crit_N, seeds=seeds, criterion=criterion, n_train=walks,
                                              n_test=base["n_test"])
            progress(f"critical M ({key}): {time.perf_counter() - start:.0f} s")
    return out


def _restore(x):
    if isinstance(x, dict):
        return {k: _restore(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_restore(v) for v in x]
    return _NON_FINITE.get(x, x) if isinstance(x, str) else x


def save(data: dict, path) -> Path:
    """Write a :func:`stored_study` result as a versioned JSON file of kind :data:`KIND` (``nan`` as ``"nan"``)."""
    return store.write_json(path, data, kind=KIND)


def load(path=None) -> dict:
    """Read a stored study: ``path`` (a user's path, see :func:`onelayer.paths.resolve`) or :data:`STORED` in the data directory."""
    path = paths.data_path(STORED) if path is None else paths.resolve(path)
    if not path.exists():
        raise FileNotFoundError(f"no stored scaling study at {path}; run python -m onelayer.studies.walks.scaling --out {path}")
    return _restore(store.read_json(path, kind=KIND))


def main(argv=None) -> int:
    """Command line: compute :func:`stored_study` and write it as JSON."""
    parser = argparse.ArgumentParser(prog="python -m onelayer.studies.walks.scaling", description=DESCRIPTION)
    parser.add_argument("--out", required=True, help="path of the JSON file to write")
    parser.add_argument("--quick", action="store_true", help="a tiny version in seconds")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    path = save(stored_study(quick=args.quick), args.out)
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")
    return 0

