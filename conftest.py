"""Repository-wide pytest hooks: the book's runtime budget.

When nbval runs notebooks (``pytest --nbval ... book``), every notebook cell is
a test item. For each notebook this plugin adds up the durations pytest
measured for its items (setup, call and teardown: the first cell's setup
includes starting the kernel, the last cell's teardown stopping it), prints a
table at the end of the session, writes it to ``_build/runtime.json`` (or to
``$ONELAYER_RUNTIME_JSON``) and FAILS the session (exit code 1) when

* the total over all notebooks exceeds ``$ONELAYER_BOOK_BUDGET_S``
  (default 300 seconds), or
* one notebook exceeds ``$ONELAYER_CHAPTER_BUDGET_S`` (default 90 seconds).

A budget may be ``inf`` to switch that check off. A session without notebook
items (``pytest tests``) is left alone: nothing is printed, written or checked.

Jitter mode (``ONELAYER_JITTER``, see :mod:`onelayer.jitter`): a notebook cell tagged
``exact-arithmetic`` still runs, but its outputs are not compared, and a test marked
``@pytest.mark.exact_arithmetic(reason=...)`` is skipped with its reason. Both are the
few illustrations whose point is exact arithmetic or the machine's own round-off.

MKL's reproducible branch (:mod:`onelayer.blas`) is asked for here too, before any kernel
starts, for a ``pytest`` run outside the ``Makefile``.
"""

from __future__ import annotations

import json
import math
import os
from collections import defaultdict
from pathlib import Path

import pytest

from onelayer import blas, jitter

blas.request()

#: Notebook cell tag of an exact-arithmetic or round-off illustration (its outputs are not compared in jitter mode).
EXACT_TAG = "exact-arithmetic"

BUDGETS = {"ONELAYER_BOOK_BUDGET_S": 420.0, "ONELAYER_CHAPTER_BUDGET_S": 90.0}


def budget(name: str) -> float:
    """The budget in seconds from environment variable ``name`` (or its default)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return BUDGETS[name]
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isnan(value) or value <= 0:
        raise pytest.UsageError(f"{name} must be a positive number of seconds (or 'inf'), got {raw!r}")
    return value


def is_notebook(nodeid: str) -> bool:
    """Whether a test id belongs to a notebook cell (``path.ipynb::Cell 3``)."""
    return nodeid.split("::", 1)[0].endswith(".ipynb")


def check_budget(times: dict[str, float], total_budget: float, chapter_budget: float) -> list[str]:
    """The budget violations (empty when within budget), one readable message each."""
    problems = [
        f"{name} took {seconds:.1f} s > chapter budget {chapter_budget:g} s (ONELAYER_CHAPTER_BUDGET_S)"
        for name, seconds in sorted(times.items())
        if seconds > chapter_budget
    ]
    total = sum(times.values())
    if total > total_budget:
        problems.append(f"all notebooks took {total:.1f} s > book budget {total_budget:g} s (ONELAYER_BOOK_BUDGET_S)")
    return problems


class RuntimeBudget:
    """The plugin object: collects per-notebook durations and judges them at the end."""

    def __init__(self) -> None:
        self.times: dict[str, float] = defaultdict(float)
        self.verdict: dict | None = None

    def pytest_collection_modifyitems(self, items) -> None:
        if any(is_notebook(item.nodeid) for item in items):
            for name in BUDGETS:
                budget(name)  # a malformed budget is a usage error before anything runs

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if is_notebook(report.nodeid):
            self.times[report.nodeid.split("::", 1)[0]] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.times:
            return
        total_budget, chapter_budget = budget("ONELAYER_BOOK_BUDGET_S"), budget("ONELAYER_CHAPTER_BUDGET_S")
        problems = check_budget(self.times, total_budget, chapter_budget)
        verdict = {
            "notebooks": {name: round(seconds, 2) for name, seconds in sorted(self.times.items())},
            "total_s": round(sum(self.times.values()), 2),
            "book_budget_s": total_budget,
            "chapter_budget_s": chapter_budget,
            "within_budget": not problems,
            "problems": problems,
        }
        path = Path(os.environ.get("ONELAYER_RUNTIME_JSON") or session.config.rootpath / "_build" / "runtime.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(verdict, indent=1, default=str) + "\n")
        self.verdict = {**verdict, "path": str(path)}
        if problems and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        verdict = self.verdict
        if verdict is None:
            return
        tr = terminalreporter
        width = max(len(name) for name in verdict["notebooks"]) + 2
        tr.write_sep("=", "notebook runtime budget")
        for name, seconds in verdict["notebooks"].items():
            flag = "  OVER" if seconds > verdict["chapter_budget_s"] else ""
            tr.write_line(f"{name:<{width}}{seconds:8.1f} s{flag}")
        tr.write_line(f"{'total':<{width}}{verdict['total_s']:8.1f} s")
        tr.write_line(
            f"budgets: {verdict['chapter_budget_s']:g} s per notebook, {verdict['book_budget_s']:g} s in all; "
            f"times written to {verdict['path']}"
        )
        for message in verdict["problems"]:
            tr.write_line(f"RUNTIME BUDGET EXCEEDED: {message}", red=True, bold=True)
        if not verdict["problems"]:
            tr.write_line("within the runtime budget", green=True)


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
    config.pluginmanager.register(RuntimeBudget(), "onelayer-runtime-budget")
    config.pluginmanager.register(JitterMarks(), "onelayer-jitter-marks")
    config.addinivalue_line("markers", f"{jitter.MARK}(reason): a test about exact arithmetic or the machine's own "
                                       "round-off, skipped in jitter mode (ONELAYER_JITTER)")
