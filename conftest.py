"""Repository-wide pytest hooks: the book's execution times (measured, never judged) and jitter mode.

When nbval runs notebooks (``pytest --nbval ... book``), every notebook cell is
a test item. For each notebook this plugin adds up the durations pytest
measured for its items (setup, call and teardown: the first cell's setup
includes starting the kernel, the last cell's teardown stopping it), prints a
table at the end of the session and writes it to ``_build/runtime.json`` (or to
``$ONELAYER_RUNTIME_JSON``), with the machine's load average, CPU count and CPU
model at the end of the run. The times never change the session's outcome:
the test command passes or fails on outputs only, however fast or busy the
machine is. The budgets the chapters are held to are compared with these
times by ``make bench`` (``benchmarks/bench_book.py``), which reports them.
A session without notebook items (``pytest tests``) is left alone: nothing is
printed or written.

Jitter mode (``ONELAYER_JITTER``, see :mod:`onelayer.jitter`): a notebook cell tagged
``exact-arithmetic`` still runs, but its outputs are not compared, and a test marked
``@pytest.mark.exact_arithmetic(reason=...)`` is skipped with its reason. Both are the
few illustrations whose point is exact arithmetic or the machine's own round-off.

MKL's reproducible branch (:mod:`onelayer.blas`) is asked for here too, before any kernel
starts, for a ``pytest`` run outside the ``Makefile``; so is the kernel transport
(:func:`onelayer.execution.install`: nbval's kernels are started encrypted, as the book's are).
"""

from __future__ import annotations

import json
import os
import platform
from collections import defaultdict
from pathlib import Path

import pytest

from onelayer import blas, execution, jitter

blas.request()
execution.install()

#: Notebook cell tag of an exact-arithmetic or round-off illustration (its outputs are not compared in jitter mode).
EXACT_TAG = "exact-arithmetic"


def is_notebook(nodeid: str) -> bool:
    """Whether a test id belongs to a notebook cell (``path.ipynb::Cell 3``)."""
    return nodeid.split("::", 1)[0].endswith(".ipynb")


def cpu_model() -> str:
    """The CPU's model name (Linux: ``/proc/cpuinfo``), else what :mod:`platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


class RuntimeTable:
    """The plugin object: collects per-notebook durations, prints and writes them; judges nothing."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)
        self.record: dict | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if is_notebook(report.nodeid):
            self.times[report.nodeid.split("::", 1)[0]] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.times:
            return
        record = {
            "notebooks": {name: round(seconds, 2) for name, seconds in sorted(self.times.items())},
            "total_s": round(sum(self.times.values()), 2),
            "machine": {
                "cpu": cpu_model(),
                "cpu_count": os.cpu_count(),
                "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None,
                "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            },
        }
        path = Path(os.environ.get("ONELAYER_RUNTIME_JSON") or session.config.rootpath / "_build" / "runtime.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=1, default=str) + "\n")
        self.record = {**record, "path": str(path)}

    def pytest_terminal_summary(self, terminalreporter) -> None:
        record = self.record
        if record is None:
            return
        tr = terminalreporter
        width = max(len(name) for name in record["notebooks"]) + 2
        tr.write_sep("=", "notebook execution times (measured, not judged)")
        for name, seconds in record["notebooks"].items():
            tr.write_line(f"{name:<{width}}{seconds:8.1f} s")
        tr.write_line(f"{'total':<{width}}{record['total_s']:8.1f} s")
        load = record["machine"]["load_average"]
        tr.write_line(
            f"on {record['machine']['cpu_count']} CPUs ({record['machine']['cpu']})"
            + (f", load average {load[0]:g} at the end" if load else "")
            + f"; written to {record['path']}; 'make bench' compares them with the chapters' budgets"
        )


class JitterMarks:
    """In jitter mode: exact-arithmetic notebook cells run unchecked, exact-arithmetic tests are skipped."""

    def pytest_collection_modifyitems(self, items) -> None:
        if not jitter.active():
            return
        for item in items:
            cell = getattr(item, "cell", None)
            if cell is not None and EXACT_TAG in cell.get("metadata", {}).get("tags", []):
                item.options["check"] = False  # nbval: run the cell, do not compare its outputs
                continue
            mark = item.get_closest_marker(jitter.MARK)
            if mark is not None:
                reason = mark.kwargs.get("reason")
                if not reason:
                    raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.{jitter.MARK} needs reason=...")
                item.add_marker(pytest.mark.skip(reason=f"jitter mode: exact-arithmetic illustration ({reason})"))


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(RuntimeTable(), "onelayer-runtime-table")
    config.pluginmanager.register(JitterMarks(), "onelayer-jitter-marks")
    config.addinivalue_line("markers", f"{jitter.MARK}(reason): a test about exact arithmetic or the machine's own "
                                       "round-off, skipped in jitter mode (ONELAYER_JITTER)")
