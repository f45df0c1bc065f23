"""The book's execution times (root ``conftest.py``): per-notebook times, table and JSON; never the session's outcome."""

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

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

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


def test_is_notebook():
    plugin = _plugin()
    assert plugin.is_notebook("book/selector.ipynb::Cell 3")
    assert not plugin.is_notebook("tests/test_batched.py::test_x[ipynb]")


def test_nbval_run_is_timed_and_never_failed_for_time(tmp_path):
    project = _project(tmp_path)
    # A budget variable from the old conftest changes nothing: time is not judged by the test command.
    ok = _pytest(project, "-p", "nbval", "--nbval", "--nbval-current-env", "tiny.ipynb", ONELAYER_CHAPTER_BUDGET_S="0.01")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "notebook execution times (measured, not judged)" in ok.stdout
    assert "BUDGET" not in ok.stdout.upper().replace("BUDGETS", "")
    data = json.loads((project / "_build" / "runtime.json").read_text())
    assert set(data["notebooks"]) == {"tiny.ipynb"} and data["total_s"] == data["notebooks"]["tiny.ipynb"]
    # The kernel start and the 0.3 s sleep are both inside the measured time.
    assert data["notebooks"]["tiny.ipynb"] >= 0.3
    assert data["machine"]["cpu_count"] == os.cpu_count() and data["machine"]["cpu"]


def test_a_failing_cell_still_fails_the_run(tmp_path):
    project = _project(tmp_path)
    nb = nbformat.read(project / "tiny.ipynb", as_version=4)
    nb.cells[0].outputs[0]["text"] = "41\n"  # the stored output no longer matches
    nbformat.write(nb, project / "tiny.ipynb")
    res = _pytest(project, "-p", "nbval", "--nbval", "--nbval-current-env", "tiny.ipynb")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "1 failed" in res.stdout and "notebook execution times" in res.stdout


def test_plain_test_runs_are_left_alone(tmp_path):
    project = _project(tmp_path)
    res = _pytest(project, "test_plain.py")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "execution times" not in res.stdout
    assert not (project / "_build").exists()
