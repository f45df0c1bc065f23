"""Reproducible BLAS: MKL's conditional numerical reproducibility (CNR), asked for before the first MKL call.

torch's CPU wheel does its matrix products in Intel MKL, which picks a code path
for the CPU it finds (SSE4.2, AVX2, AVX-512, ...) and, unless told otherwise,
may also sum in an order that depends on memory alignment. The last bits of a
product then differ between machines, and even between two runs on one machine.
Setting ``MKL_CBWR`` fixes the code path: ``COMPATIBLE`` (the book's choice)
uses the same SSE2 path on every x86-64 CPU, Intel or AMD; ``AUTO`` only fixes
the alignment-dependent order on the CPU at hand.

MKL reads ``MKL_CBWR`` once, at its first call. ``import onelayer`` therefore
sets it (:func:`request`, only if the environment has not set it already) before
anything is computed, and :func:`onelayer.seeding.setup` (every chapter's first
cell) warns when the branch in force is not the one asked for: that happens when
a kernel multiplied matrices with torch before it imported ``onelayer``. Such a
kernel still runs every chapter; only last bits may differ from the stored
outputs. Restart it and import ``onelayer`` first, or start Jupyter with
``MKL_CBWR=COMPATIBLE`` (``make lab`` does).

The ``Makefile`` exports ``MKL_CBWR=COMPATIBLE`` for every target (tests, nbval,
the book's kernels, ``make lab``, ``tools/execute.py``); ``make test-portable``
runs the tests once more with CNR off and MKL's dispatch capped at SSE4.2
(``ONELAYER_BLAS=native MKL_ENABLE_INSTRUCTIONS=SSE4_2``), so no stored output or
test may depend on the code path.

Why CNR *off* there, not another branch: MKL honours the branches named after an
instruction set (``SSE4_2``, ``AVX2``, ...) on Intel CPUs only. On an AMD EPYC
(AVX-512) the instruction-set branches reported ``AUTO``, and an exact comparison
of two sums of the same numbers in other orders passed under every explicit
value tried (``COMPATIBLE``, ``AUTO``, ``OFF``, ``SSE4_2``, ``AVX2``); it failed
only with ``MKL_CBWR`` unset, which ``ONELAYER_BLAS=native`` restores (:func:`request`).
"""

from __future__ import annotations

import ctypes
import os
import warnings
from functools import lru_cache
from pathlib import Path

__all__ = ["ENV", "NATIVE_ENV", "DEFAULT", "native", "request", "branch", "check"]

#: MKL's environment variable for conditional numerical reproducibility.
ENV = "MKL_CBWR"
#: The branch the book asks for: the same code path on every x86-64 CPU.
DEFAULT = "COMPATIBLE"
#: ``ONELAYER_BLAS=native``: leave MKL to its own dispatch (CNR off), for the portability check only.
NATIVE_ENV = "ONELAYER_BLAS"
#: Branches named after an instruction set: MKL honours them on Intel CPUs only and runs ``AUTO`` elsewhere.
_INSTRUCTION_BRANCHES = frozenset({"SSE2", "SSSE3", "SSE4_1", "SSE4_2", "AVX", "AVX2", "AVX512", "AVX512_E1",
                                   "AVX512_MIC", "AVX512_MIC_E1"})
#: ``mkl_cbwr_get(MKL_CBWR_BRANCH)`` values (``mkl_cbwr.h``) and their names.
_BRANCHES = {1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2", 9: "AVX",
             10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}


def native() -> bool:
    """Whether ``ONELAYER_BLAS=native`` asks for MKL's own dispatch (CNR off; a check of the portable outputs only)."""
    return os.environ.get(NATIVE_ENV, "").strip().lower() == "native"


def request() -> str:
    """Ask MKL for :data:`DEFAULT` unless ``MKL_CBWR`` is already set (not empty); returns the value now in force.

    Under ``ONELAYER_BLAS=native`` it removes ``MKL_CBWR`` instead and returns ``""``: MKL then picks its code path
    and summation order for the CPU at hand, as in a process that never heard of CNR (``make test-portable`` runs
    the tests that way: on an AMD CPU no explicit ``MKL_CBWR`` value tried moved the bits that the unset variable
    moves).
    """
    if native():
        os.environ.pop(ENV, None)
        return ""
    if not os.environ.get(ENV, "").strip():
        os.environ[ENV] = DEFAULT
    return os.environ[ENV]


@lru_cache(maxsize=1)
def _cbwr_get():
    """MKL's ``mkl_cbwr_get`` as linked into torch's CPU library, or ``None`` (no MKL: e.g. ARM builds)."""
    import torch

    if not torch.backends.mkl.is_available():
        return None
    for lib in sorted((Path(torch.__file__).parent / "lib").glob("libtorch_cpu.*")):
        try:
            fn = ctypes.CDLL(str(lib)).mkl_serv_cbwr_get
        except (OSError, AttributeError):
            continue
        fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
        return fn
    return None


def branch() -> str | None:
    """The CNR branch MKL uses in this process (``"COMPATIBLE"``, ``"AUTO"``, ``"OFF"``, ...), ``None`` without MKL."""
    fn = _cbwr_get()
    if fn is None:
        return None
    value = fn(1)  # MKL_CBWR_BRANCH
    return _BRANCHES.get(value, f"unknown ({value})")


def check() -> str | None:
    """Warn (``RuntimeWarning``) when MKL is present and its branch differs from the one ``MKL_CBWR`` asks for.

    Returns the branch in force (``None`` without MKL).
    """
    got = branch()
    wanted = "OFF" if native() else os.environ.get(ENV, "").split(",")[0].strip().upper()
    if got is None or not wanted or got == wanted:
        return got
    if got == "AUTO" and wanted in _INSTRUCTION_BRANCHES:
        return got  # not a late request: MKL offers instruction-set branches on Intel CPUs only (measured on AMD EPYC)
    warnings.warn(
        f"MKL uses the {got} branch, not {wanted} as {ENV} asks: torch multiplied matrices before onelayer was "
        f"imported, so the last bits of results may differ from the book's. Restart the kernel and import onelayer "
        f"first, or start Jupyter with {ENV}={DEFAULT}.", RuntimeWarning, stacklevel=3)
    return got
