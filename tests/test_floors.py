"""The three floors and their one import direction: papers <- studies <- book.

* A paper's modules (``PAPERS``: ``onelayer.walks``, ``onelayer.trees``) import the standard library, torch, numpy
  and scipy, their own paper, and the shared floor (``SHARED_FLOOR``: argument checks, seeded generators, the one GD
  trainer), nothing else: not the other paper, no store, paths, plots, widgets, registry, jitter, chapter or
  formatting.
* The shared floor imports the standard library, torch, numpy, tqdm (the trainer's progress bar) and itself.
* The studies (``onelayer.studies``) import nothing of the book side (``BOOK``).

The checks read the source (``ast``), so a lazy import inside a function counts too.
``test_a_planted_import_fails`` plants a forbidden import (at module level or inside a function) in a copy of each
floor and checks that the same function reports it, and nothing else.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

SRC = Path(__file__).resolve().parents[1] / "src"

#: The papers' floor: one package per paper.
PAPERS = ("onelayer.walks", "onelayer.trees")
#: What every paper may use besides itself: argument checks, seeded generators (and the BLAS set-up they need),
#: the one GD trainer.
SHARED_FLOOR = ("onelayer.validation", "onelayer.seeding", "onelayer.blas", "onelayer.training")
#: Third-party packages a paper may import.
PAPER_THIRD_PARTY = ("torch", "numpy", "scipy")
#: ... and the shared floor (the trainer's optional progress bar).
SHARED_THIRD_PARTY = PAPER_THIRD_PARTY + ("tqdm",)
#: The book side: what the chapters use to show, store and check results. Studies import none of it.
BOOK = ("onelayer.chapters", "onelayer.chapter", "onelayer.figures", "onelayer.verdicts", "onelayer.plots", "onelayer.plotted",
        "onelayer.widgets", "onelayer.scrubber", "onelayer.registry", "onelayer.findings", "onelayer.cli",
        "onelayer.execution", "onelayer.tables", "onelayer.formatting", "onelayer.__main__",
        "matplotlib", "ipywidgets", "IPython")


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules_of(package: str, src: Path = SRC) -> list[Path]:
    root = src.joinpath(*package.split("."))
    return sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]


def imports(path: Path, src: Path = SRC) -> set[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved; ``from a import b`` gives ``a.b``
    when ``a.b`` is a module of the package, else ``a``)."""
    name = module_name(path, src)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                is_module = src.joinpath(*sub.split(".")).is_dir() or src.joinpath(*sub.split(".")).with_suffix(".py").is_file()
                found.add(sub if is_module else mod)
    return found


def _within(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def paper_violations(package: str, src: Path = SRC) -> list[str]:
    """``file: module`` for every import of ``package``'s modules outside its floor."""
    bad = []
    for path in modules_of(package, src):
        for name in sorted(imports(path, src)):
            top = name.split(".")[0]
            if top == "onelayer":
                if not _within(name, (package,) + SHARED_FLOOR):
                    bad.append(f"{path.relative_to(src)}: {name}")
            elif top not in PAPER_THIRD_PARTY and top not in sys.stdlib_module_names:
                bad.append(f"{path.relative_to(src)}: {name}")
    return bad


def shared_floor_violations(src: Path = SRC) -> list[str]:
    bad = []
    for module in SHARED_FLOOR:
        for path in modules_of(module, src):
            for name in sorted(imports(path, src)):
                top = name.split(".")[0]
                if top == "onelayer" and not _within(name, SHARED_FLOOR):
                    bad.append(f"{path.relative_to(src)}: {name}")
                elif top != "onelayer" and top not in SHARED_THIRD_PARTY and top not in sys.stdlib_module_names:
                    bad.append(f"{path.relative_to(src)}: {name}")
    return bad


def studies_violations(src: Path = SRC) -> list[str]:
    """``file: module`` for every import of a book-side module by a study."""
    return [f"{path.relative_to(src)}: {name}" for path in modules_of("onelayer.studies", src)
            for name in sorted(imports(path, src)) if _within(name, BOOK)]


@pytest.mark.parametrize("package", PAPERS)
def test_papers_import_only_torch_numpy_scipy_and_their_floor(package):
    assert modules_of(package), f"{package} has no modules"
    assert paper_violations(package) == []


def test_the_shared_floor_stays_below_the_papers():
    assert shared_floor_violations() == []


def test_studies_import_nothing_of_the_book():
    assert modules_of("onelayer.studies")
    assert studies_violations() == []


WALKS = lambda src: paper_violations("onelayer.walks", src)  # noqa: E731
TREES = lambda src: paper_violations("onelayer.trees", src)  # noqa: E731


@pytest.mark.parametrize("planted, target, check", [
    ("from ..jitter import jitter", "walks/model.py", WALKS),
    ("from .. import store", "walks/model.py", WALKS),
    ("import matplotlib.pyplot as plt", "walks/model.py", WALKS),
    ("from ..studies.walks import experiment", "walks/model.py", WALKS),
    ("from ..trees.backward import model", "walks/data.py", WALKS),
    ("from ...plots import new_figure", "trees/backward/model.py", TREES),
    ("from onelayer.jitter import jitter", "trees/shared/embeddings.py", TREES),
    ("from ... import store", "trees/forward/model.py", TREES),
    ("import matplotlib.pyplot as plt", "trees/forward/layout.py", TREES),
    ("from ...studies.trees import beyond", "trees/backward/dynamics.py", TREES),
    ("from ...walks import ring", "trees/shared/data.py", TREES),
    ("from ...figures import walks", "studies/walks/experiment.py", lambda src: studies_violations(src)),
    ("from ... import plots", "studies/walks/experiment.py", lambda src: studies_violations(src)),
    ("from ...figures import trees_forward", "studies/trees/beyond.py", lambda src: studies_violations(src)),
    ("from onelayer.chapters.trees import lab", "studies/trees/forward_limits.py", lambda src: studies_violations(src)),
    ("from . import chapter", "training.py", lambda src: shared_floor_violations(src)),
])
def test_a_planted_import_fails(tmp_path, planted, target, check):
    """A copy of the package with one forbidden import added to one floor module: the check names it."""
    import shutil

    copy = tmp_path / "src"
    shutil.copytree(SRC / "onelayer", copy / "onelayer", ignore=shutil.ignore_patterns("__pycache__"))
    assert check(copy) == []  # the copy is clean before the plant
    path = copy / "onelayer" / target
    path.write_text(path.read_text() + f"\n\ndef _planted():\n    {planted}\n")
    found = check(copy)
    assert len(found) == 1 and found[0].startswith(str(path.relative_to(copy))), found
