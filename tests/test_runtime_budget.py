"""The book's runtime budget (root ``conftest.py``): per-notebook times, table, JSON, failing session."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _plugin():
    spec = importlib.util.spec_from_file_location("onelayer_root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _project(tmp_path: Path) -> Path:
    """A throw-away project: the root conftest, a tiny notebook that sleeps 0.3 s, a passing test."""
    shutil.copy(ROOT / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell("import time\ntime.sleep(0.3)\nprint(6 * 7)", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="42\n")]
    nb.cells = [cell]
    nbformat.write(nb, tmp_path / "tiny.ipynb")
    (tmp_path / "test_plain.py").write_text("def test_ok():\n    assert True\n")
    return tmp_path


def _pytest(project: Path, *args: str, **budgets: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONELAYER_")}
    env.update(budgets)
    env["OMP_NUM_THREADS"] = "1"
    # Entry-point plugins off (importing them all takes seconds); nbval is named where it is used.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--rootdir", str(project), *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )


def test_check_budget_messages():
    plugin = _plugin()
    times = {"book/a.ipynb": 10.0, "book/b.ipynb": 50.0}
    assert plugin.check_budget(times, 300.0, 90.0) == []
    chapter = plugin.check_budget(times, 300.0, 20.0)
    assert len(chapter) == 1 and "book/b.ipynb took 50.0 s > chapter budget 20 s" in chapter[0]
    total = plugin.check_budget(times, 55.0, 90.0)
    assert len(total) == 1 and "60.0 s > book budget 55 s" in total[0]
    assert len(plugin.check_budget(times, 1.0, 1.0)) == 3


def test_budget_from_environment(monkeypatch):
    plugin = _plugin()
    monkeypatch.delenv("ONELAYER_BOOK_BUDGET_S", raising=False)
    assert plugin.budget("ONELAYER_BOOK_BUDGET_S") == 420.0
    monkeypatch.setenv("ONELAYER_BOOK_BUDGET_S", "inf")
    assert plugin.budget("ONELAYER_BOOK_BUDGET_S") == float("inf")
    monkeypatch.setenv("ONELAYER_CHAPTER_BUDGET_S", "12.5")
    assert plugin.budget("ONELAYER_CHAPTER_BUDGET_S") == 12.5
    for bad in ("0", "-3", "fast", "nan"):
        monkeypatch.setenv("ONELAYER_CHAPTER_BUDGET_S", bad)
        with pytest.raises(pytest.UsageError, match="ONELAYER_CHAPTER_BUDGET_S must be a positive number"):
            plugin.budget("ONELAYER_CHAPTER_BUDGET_S")


def test_is_notebook():
    plugin = _plugin()
    assert plugin.is_notebook("book/selector.ipynb::Cell 3")
    assert not plugin.is_notebook("tests/test_batched.py::test_x[ipynb]")


def test_nbval_run_within_and_over_budget(tmp_path):
    project = _project(tmp_path)
    ok = _pytest(project, "-p", "nbval", "--nbval", "--nbval-current-env", "tiny.ipynb")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "notebook runtime budget" in ok.stdout and "within the runtime budget" in ok.stdout
    data = json.loads((project / "_build" / "runtime.json").read_text())
    assert set(data["notebooks"]) == {"tiny.ipynb"}
    # The kernel start and the 0.3 s sleep are both inside the measured time.
    assert data["notebooks"]["tiny.ipynb"] >= 0.3
    assert data["within_budget"] and data["chapter_budget_s"] == 90.0 and data["book_budget_s"] == 420.0

    over = _pytest(project, "-p", "nbval", "--nbval", "--nbval-current-env", "tiny.ipynb", ONELAYER_CHAPTER_BUDGET_S="0.2")
    assert over.returncode == 1, over.stdout + over.stderr
    assert "1 passed" in over.stdout  # the cells passed; only the budget failed the session
    assert "RUNTIME BUDGET EXCEEDED: tiny.ipynb took" in over.stdout
    assert "chapter budget 0.2 s" in over.stdout
    data = json.loads((project / "_build" / "runtime.json").read_text())
    assert not data["within_budget"] and data["chapter_budget_s"] == 0.2


def test_plain_test_runs_are_left_alone(tmp_path):
    project = _project(tmp_path)
    # Budgets so small that any notebook would fail them, and even malformed ones, change nothing.
    res = _pytest(project, "test_plain.py", ONELAYER_BOOK_BUDGET_S="0.001", ONELAYER_CHAPTER_BUDGET_S="nonsense")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "runtime budget" not in res.stdout
    assert not (project / "_build").exists()
