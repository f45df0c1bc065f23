"""Execute notebooks in place, top to bottom in one fresh kernel, and store the outputs.

Usage: python tools/execute.py book/part/chapter.ipynb [...]

This is how the committed outputs are produced; nbval later re-runs each
notebook and compares every text output with what is stored here.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from onelayer import blas, execution

try:  # run as a script (make execute): tools/ is on sys.path
    import lab_view
except ImportError:  # imported as tools.execute
    from tools import lab_view

blas.request()  # MKL's reproducible branch for the kernels (import onelayer already asked; explicit here)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("PYTHONHASHSEED", "0")


def execute(path: Path) -> float:
    execution.install()  # no stall on cells with an Output widget (see onelayer.execution)
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=True,
        record_timing=False,
    )
    client.execute()
    elapsed = time.perf_counter() - start
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
    drop_unviewed_widget_state(nb)
    lab_view.apply(nb)  # JupyterLab collapses the code the book hides
    nbformat.write(nb, path)
    return elapsed


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def drop_unviewed_widget_state(nb) -> bool:
    """Drop the stored widget state of a notebook none of whose outputs displays a widget (a progress bar or a widget
    built and never shown leaves state that nothing draws); returns whether it did."""
    shown = any(WIDGET_VIEW in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", []))
    if shown or "widgets" not in nb.metadata:
        return False
    del nb.metadata["widgets"]
    return True


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for name in argv:
        path = Path(name)
        if path.suffix != ".ipynb" or not path.exists():
            print(f"not a notebook: {name}", file=sys.stderr)
            return 2
        print(f"{path}: {execute(path):.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
