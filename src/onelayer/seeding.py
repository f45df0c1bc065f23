"""Determinism: one call that fixes seeds, thread count and the default dtype.

Every chapter starts with :func:`setup`. nbval compares the text a chapter
printed when it was committed with a fresh run, so the numbers must not depend
on the thread schedule or on an unseeded generator.
"""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from . import blas
from .validation import check_choice, check_int

__all__ = ["setup", "generator", "numpy_rng", "DTYPES"]

#: The floating-point types a chapter may ask for, by name.
DTYPES = {"float64": torch.float64, "float32": torch.float32}


def setup(seed: int = 0, *, threads: int | None = None, dtype: str = "float64") -> torch.dtype:
    """Seed Python, NumPy and torch, pin the torch thread count, set the default dtype.

    Parameters
    ----------
    seed:
        Seed for ``random``, ``numpy`` and ``torch`` (a non-negative integer).
    threads:
        Number of intra-op threads torch may use. ``None`` (default): the
        ``OMP_NUM_THREADS`` environment variable, else 1. The ``Makefile`` sets 1;
        ``make test-portable`` sets 2 to check that no stored output depends on
        the order in which threads sum a reduction.
    dtype:
        ``"float64"`` (default; every theory check runs in double precision)
        or ``"float32"``.

    Returns
    -------
    torch.dtype
        The default floating-point dtype now in force.
    """
    seed = check_int("seed", seed, low=0, high=2**32 - 1)
    if threads is None:
        try:
            threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
        except ValueError:
            raise ValueError(f"OMP_NUM_THREADS must be a whole number of threads, got {os.environ['OMP_NUM_THREADS']!r}") from None
    threads = check_int("threads", threads, low=1, high=256)
    check_choice("dtype", dtype, DTYPES)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    blas.check()  # warns if MKL's reproducible branch is not the one asked for (see onelayer.blas)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.set_default_dtype(DTYPES[dtype])
    return DTYPES[dtype]


def generator(seed: int) -> torch.Generator:
    """A fresh, seeded CPU ``torch.Generator`` (use one per experiment, not the global one)."""
    seed = check_int("seed", seed, low=0, high=2**63 - 1)
    gen = torch.Generator()
    gen.manual_seed(seed)
    return gen


def numpy_rng(seed: int) -> np.random.Generator:
    """A fresh, seeded NumPy ``Generator``."""
    seed = check_int("seed", seed, low=0, high=2**63 - 1)
    return np.random.default_rng(seed)
