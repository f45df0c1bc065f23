"""The floors of the trees paper (issue 30): ``onelayer.trees`` holds the paper's objects and imports only torch,
numpy, scipy, the standard library and its own floor; ``onelayer.studies.trees`` runs them and imports nothing of
the book side (chapters, figures, plots, widgets, registry, ...).

The checks read every import statement (module level and inside functions, relative or absolute) with ``ast``;
``test_a_planted_import_fails_each_floor`` writes a probe module into each package and shows that the checks name it.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

#: What a module of the papers' floor may import besides itself: torch, numpy, scipy, the standard library, and the
#: floor's own shared pieces (the GD trainer and the argument checks).
PAPER_THIRD_PARTY = {"torch", "numpy", "scipy"}
PAPER_FLOOR = ("onelayer.trees", "onelayer.training", "onelayer.validation")
#: The book side, which a study never imports: what draws, presents or serves the chapters.
BOOK_SIDE = ("onelayer.chapters", "onelayer.chapter", "onelayer.figures", "onelayer.plots", "onelayer.plotted",
             "onelayer.widgets", "onelayer.scrubber", "onelayer.registry", "onelayer.findings", "onelayer.cli",
             "onelayer.execution", "onelayer.tables", "matplotlib", "ipywidgets", "IPython")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, as absolute dotted names (``from pkg import a`` gives ``pkg.a`` and ``pkg``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names if target.startswith("onelayer"))
    return found


def _under(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def paper_violations(path: Path) -> list[str]:
    """Imports of ``path`` outside the papers' floor (names ``onelayer.x.y`` count when ``onelayer.x`` is not allowed)."""
    bad = []
    for m in sorted(imports(path)):
        top = m.split(".")[0]
        if top == "__future__" or top in sys.stdlib_module_names or top in PAPER_THIRD_PARTY:
            continue
        if top == "onelayer" and (_under(m, PAPER_FLOOR) or m in {"onelayer"}):
            continue
        if top == "onelayer" and any(m.startswith(p + ".") for p in PAPER_FLOOR[1:]):
            continue  # a name imported from the trainer or the checks (from onelayer.training import train)
        bad.append(m)
    return bad


def book_imports(path: Path) -> list[str]:
    return sorted(m for m in imports(path) if _under(m, BOOK_SIDE))


def package_files(dotted: str) -> list[Path]:
    return sorted((SRC / Path(*dotted.split("."))).rglob("*.py"))


PAPER_FILES = package_files("onelayer.trees")
STUDY_FILES = package_files("onelayer.studies.trees")


def test_the_floors_have_modules():
    assert len(PAPER_FILES) >= 15 and len(STUDY_FILES) >= 10


@pytest.mark.parametrize("path", PAPER_FILES, ids=lambda p: module_name(p))
def test_a_trees_module_imports_only_torch_numpy_scipy_and_its_floor(path):
    assert paper_violations(path) == [], f"{module_name(path)} imports outside the papers' floor"


@pytest.mark.parametrize("path", STUDY_FILES, ids=lambda p: module_name(p))
def test_a_trees_study_imports_nothing_of_the_book(path):
    assert book_imports(path) == [], f"{module_name(path)} imports the book side"


@pytest.mark.parametrize("package, line, check, expected", [
    ("onelayer/trees/backward", "from ...plots import new_figure\n", paper_violations, "onelayer.plots"),
    ("onelayer/trees/shared", "def f():\n    from onelayer.jitter import jitter\n", paper_violations, "onelayer.jitter"),
    ("onelayer/trees/forward", "from ... import store\n", paper_violations, "onelayer.store"),
    ("onelayer/trees/forward", "import matplotlib.pyplot as plt\n", paper_violations, "matplotlib.pyplot"),
    ("onelayer/trees/backward", "from ...studies.trees import beyond\n", paper_violations, "onelayer.studies.trees"),
    ("onelayer/studies/trees", "from ...figures import trees_forward\n", book_imports, "onelayer.figures.trees_forward"),
    ("onelayer/studies/trees", "def f():\n    from onelayer.chapters.trees import lab\n", book_imports, "onelayer.chapters.trees"),
])
def test_a_planted_import_fails_each_floor(package, line, check, expected):
    """A probe module with one forbidden import, in the package it would break: the check names the import."""
    probe = SRC / package / "_floor_probe.py"
    try:
        probe.write_text(line)
        assert expected in check(probe)
    finally:
        probe.unlink()
    clean = SRC / package / "_floor_probe.py"
    try:
        clean.write_text("import math\nimport torch\nfrom collections.abc import Sequence\n")
        assert check(clean) == []
    finally:
        clean.unlink()
