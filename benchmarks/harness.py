"""Timing and peak-memory helpers shared by the ``benchmarks/bench_*.py`` modules.

A benchmark module exposes ``run(quick: bool = False) -> list[dict]``; each dict
is one *row* comparing our implementation ("ours") with a reference
implementation of the same computation ("reference"):

``name``
    Short name of the comparison (str).
``config``
    The problem size and what one *step* is: a string, e.g.
    ``"N=64 n=8 d=8, 200 GD steps"``, or a mapping (shown as ``key=value, ...``).
``ours_s``, ``reference_s``
    Wall-clock **seconds per step** (a float; ``reference_s`` may be ``None``
    when there is nothing to compare with).
``ratio``
    Speed-up of ours, ``reference_s / ours_s`` (``> 1``: ours is faster).
``ours_peak_mb``, ``reference_peak_mb``
    Peak extra memory in MB (MiB, ``2**20`` bytes) of one call of each side,
    or ``None`` when not measured.

Extra keys (e.g. ``max_abs_diff`` between the two results) are kept in the
JSON output. :func:`compare` builds a complete row from two callables.

What the measurements see
-------------------------
* :func:`time_call`: wall-clock time (``time.perf_counter``) of whole calls,
  after ``warmup`` untimed calls; the best of ``repeat`` is the figure least
  disturbed by other processes (the machine may be shared), the median is kept
  too. Single-threaded if ``OMP_NUM_THREADS=1`` (``make bench`` sets it).
* :func:`peak_rss_mb`: runs the callable once in a *forked child process* and
  reports how far its resident set size (RSS) rose above its level just
  before the call (Linux: the ``VmHWM`` high-water mark, reset through
  ``/proc/self/clear_refs``; elsewhere ``ru_maxrss``, which can only
  under-report), minus the growth of its file-backed pages (the code of torch
  and other shared libraries that the call pages in, which is not memory the
  computation needs). RSS counts everything else the process touches: torch
  tensors, NumPy arrays, Python objects, allocator slack. The child starts with
  a copy of the parent's memory, so data built before the call is not counted.
  The resolution is one page (4 KiB).
* :func:`peak_traced_mb`: the ``tracemalloc`` peak of one in-process call.
  It sees Python objects and NumPy arrays but **not** torch tensors (torch's
  CPU allocator does not report to ``tracemalloc``); use it only for pure
  Python/NumPy code.
"""

from __future__ import annotations

import gc
import math
import multiprocessing as mp
import os
import re
import resource
import statistics
import sys
import time
import tracemalloc
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = [
    "ROW_KEYS",
    "Timing",
    "time_call",
    "peak_rss_mb",
    "peak_traced_mb",
    "peak_memory_mb",
    "make_row",
    "check_row",
    "compare",
    "machine",
]

#: The keys every row must have.
ROW_KEYS = ("name", "config", "ours_s", "reference_s", "ratio", "ours_peak_mb", "reference_peak_mb")

_MB = 2.0**20


@dataclass(frozen=True)
class Timing:
    """Seconds per call of :func:`time_call`: the best and the median of the repeats."""

    best_s: float
    median_s: float
    repeats: tuple[float, ...]


def time_call(fn: Callable[[], object], *, repeat: int = 5, warmup: int = 1, number: int = 1) -> Timing:
    """Time ``fn()`` (no arguments): ``repeat`` measurements of ``number`` calls each.

    Returns seconds **per call**.
    """
    if not callable(fn):
        raise TypeError("fn must be callable with no arguments")
    for label, value, low in (("repeat", repeat, 1), ("warmup", warmup, 0), ("number", number, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"{label} must be an integer >= {low}, got {value!r}")
    for _ in range(warmup):
        fn()
    gc.collect()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return Timing(best_s=min(times), median_s=statistics.median(times), repeats=tuple(times))


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status") as fh:
            match = re.search(rf"^{field}:\s+(\d+) kB", fh.read(), re.MULTILINE)
    except OSError:
        return None
    return int(match.group(1)) if match else None


def _reset_high_water_mark() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return _status_kb("VmHWM") is not None


def _maxrss_kb() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes on macOS, kB on Linux


def _release_free_heap() -> None:
    """Return free ``malloc`` memory to the OS (glibc), so that reused heap does not hide allocations."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _child(fn, conn) -> None:
    try:
        gc.collect()
        _release_free_heap()
        exact = _reset_high_water_mark()
        before = _status_kb("VmRSS") if exact else _maxrss_kb()
        files_before = _status_kb("RssFile") or 0
        fn()
        after = _status_kb("VmHWM") if exact else _maxrss_kb()
        # Pages of shared libraries (torch's code) that the call faults in count towards RSS
        # but are not memory the computation needs: subtract their growth.
        files = max((_status_kb("RssFile") or 0) - files_before, 0)
        conn.send(("ok", max(after - before - files, 0) * 1024 / _MB))
    except BaseException:  # report anything, including SystemExit, to the parent
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def peak_rss_mb(fn: Callable[[], object], *, timeout: float = 600.0) -> float:
    """Peak extra resident memory (MB) of one call of ``fn()``, in a forked child process.

    Falls back to :func:`peak_traced_mb` where ``fork`` is unavailable (then torch
    tensors are not seen).
    """
    if not callable(fn):
        raise TypeError("fn must be callable with no arguments")
    if "fork" not in mp.get_all_start_methods():
        return peak_traced_mb(fn)
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(fn, child))
    proc.start()
    child.close()
    try:
        if not parent.poll(timeout):
            proc.kill()
            raise TimeoutError(f"memory measurement did not finish within {timeout} s")
        status, value = parent.recv()
    finally:
        proc.join()
        parent.close()
    if status != "ok":
        raise RuntimeError(f"the measured function failed in the child process:\n{value}")
    return float(value)


def peak_traced_mb(fn: Callable[[], object]) -> float:
    """``tracemalloc`` peak (MB) of one in-process call of ``fn()`` (blind to torch tensors)."""
    if not callable(fn):
        raise TypeError("fn must be callable with no arguments")
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return max(peak - base, 0) / _MB


def peak_memory_mb(fn: Callable[[], object], *, method: str = "rss") -> float:
    """Peak extra memory of ``fn()`` in MB: ``method="rss"`` (child process) or ``"tracemalloc"``."""
    if method == "rss":
        return peak_rss_mb(fn)
    if method == "tracemalloc":
        return peak_traced_mb(fn)
    raise ValueError(f"method must be 'rss' or 'tracemalloc'; got {method!r}")


def _ratio(reference, ours) -> float | None:
    if reference is None or ours is None or not ours > 0:
        return None
    return reference / ours


def make_row(name: str, config: str, *, ours_s: float, reference_s: float | None,
             ours_peak_mb: float | None = None, reference_peak_mb: float | None = None, **extra) -> dict:
    """A checked row; ``ratio = reference_s / ours_s``."""
    row = {
        "name": name,
        "config": config,
        "ours_s": ours_s,
        "reference_s": reference_s,
        "ratio": _ratio(reference_s, ours_s),
        "ours_peak_mb": ours_peak_mb,
        "reference_peak_mb": reference_peak_mb,
        **extra,
    }
    return check_row(row)


def check_row(row) -> dict:
    """Validate a row (keys, types, ``ratio == reference_s / ours_s``); return it."""
    if not isinstance(row, dict):
        raise TypeError(f"a benchmark row must be a dict, got {type(row).__name__}")
    missing = [k for k in ROW_KEYS if k not in row]
    if missing:
        raise ValueError(f"benchmark row {row.get('name', '?')!r} lacks keys {missing}; required: {list(ROW_KEYS)}")
    if not isinstance(row["name"], str) or not row["name"]:
        raise TypeError(f"row['name'] must be a non-empty string, got {row['name']!r}")
    if not isinstance(row["config"], (str, Mapping)) or not row["config"]:
        raise TypeError(f"row['config'] must be a non-empty string or mapping, got {row['config']!r}")
    for key in ("ours_s", "reference_s", "ratio", "ours_peak_mb", "reference_peak_mb"):
        value = row[key]
        if value is None and key != "ours_s":
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"row {row['name']!r}: {key} must be a finite number >= 0, got {value!r}")
    expected = _ratio(row["reference_s"], row["ours_s"])
    if (expected is None) != (row["ratio"] is None) or (
        expected is not None and not math.isclose(row["ratio"], expected, rel_tol=0.02)
    ):
        raise ValueError(
            f"row {row['name']!r}: ratio must be reference_s / ours_s = {expected!r} (the speed-up of ours), "
            f"got {row['ratio']!r}"
        )
    return row


def compare(
    name: str,
    config: str,
    ours: Callable[[], object],
    reference: Callable[[], object] | None,
    *,
    steps: int,
    repeat: int = 3,
    warmup: int = 1,
    memory: bool = True,
    **extra,
) -> dict:
    """Time (and measure the memory of) two no-argument callables doing ``steps`` steps each.

    Returns a row with seconds per step (best of ``repeat``) and the peak extra RSS
    of one call of each side (if ``memory``).
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    ours_s = time_call(ours, repeat=repeat, warmup=warmup).best_s / steps
    reference_s = None if reference is None else time_call(reference, repeat=repeat, warmup=warmup).best_s / steps
    ours_mb = peak_rss_mb(ours) if memory else None
    reference_mb = peak_rss_mb(reference) if memory and reference is not None else None
    return make_row(name, config, ours_s=ours_s, reference_s=reference_s,
                    ours_peak_mb=ours_mb, reference_peak_mb=reference_mb, **extra)


def machine() -> dict:
    """What the numbers were measured on (for the results file)."""
    import platform

    import torch

    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "load_average": load,
    }
