"""Book execution: each chapter's execution time against its budget, on the machine at hand.

The test command never judges time (``make test`` passes or fails on outputs only); it measures. Its nbval run
writes every notebook's seconds to ``_build/runtime.json`` (the root ``conftest.py``), with the machine's CPU and
load. This benchmark compares those seconds with the budgets the chapters are written to: a reader should be able
to re-run any chapter while reading it. One row per notebook and one for the whole book; ``ours`` is the measured
time, ``reference`` the budget, and the ratio budget / time is the headroom (above 1: within budget).

Where no runtime file exists (or ``ONELAYER_RUNTIME_JSON`` names a missing one), the notebooks are executed here
under nbval first, one after another in one process, as ``make test`` does (a few minutes; quick mode runs the
two smallest chapters only).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.harness import make_row

ROOT = Path(__file__).resolve().parents[1]
#: Seconds one chapter may take under nbval (kernel start included), and the whole book, on the 2-core CI machine.
CHAPTER_BUDGET_S = 90.0
BOOK_BUDGET_S = 420.0
#: Two small chapters: what quick mode executes when there is no runtime file.
QUICK_NOTEBOOKS = ("book/selector.ipynb", "book/walks/ring.ipynb")


def runtime_file() -> Path:
    return Path(os.environ.get("ONELAYER_RUNTIME_JSON") or ROOT / "_build" / "runtime.json")


def measure(path: Path, notebooks: list[str]) -> None:
    """Execute ``notebooks`` under nbval (as ``make test`` does), writing their times to ``path``."""
    flags = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
             "--nbval-cell-timeout=300", "-q", "-p", "no:cacheprovider"]
    env = {**os.environ, "ONELAYER_RUNTIME_JSON": str(path)}
    subprocess.run([sys.executable, "-m", "pytest", *flags, *notebooks], cwd=ROOT, env=env, check=False,
                   stdout=subprocess.DEVNULL)


def rows_from(record: dict, source: str) -> list[dict]:
    """The benchmark rows of one runtime record (``conftest.py``'s ``runtime.json``)."""
    machine = record.get("machine", {})
    where = {"source": source, "cpu": machine.get("cpu"), "load_average": machine.get("load_average")}
    rows = [make_row("book execution", name, ours_s=seconds, reference_s=CHAPTER_BUDGET_S,
                     within_budget=seconds <= CHAPTER_BUDGET_S, **where)
            for name, seconds in record["notebooks"].items()]
    total = record["total_s"]
    rows.append(make_row("book execution", f"all {len(record['notebooks'])} notebooks", ours_s=total,
                         reference_s=BOOK_BUDGET_S, within_budget=total <= BOOK_BUDGET_S, **where))
    return rows


def run(quick: bool = False) -> list[dict]:
    path = runtime_file()
    if not path.exists():
        notebooks = list(QUICK_NOTEBOOKS) if quick else ["book"]
        measure(path, notebooks)
    record = json.loads(path.read_text())
    return rows_from(record, str(path))
