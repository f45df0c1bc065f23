"""Layering of the package (issue 21): the papers' code never depends on the book's chapter modules, chapter modules
do not depend on each other, and every registered figure of a chapter module is what its notebook shows."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from onelayer import registry

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
CHAPTERS = "onelayer.chapters"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every onelayer module ``path`` imports (module level or inside functions), as absolute names.

    ``from pkg import a, b`` counts as importing the modules ``pkg.a`` and ``pkg.b`` where those are modules, and as
    importing ``pkg`` itself otherwise (names defined in ``pkg/__init__.py``).
    """
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    known = modules()
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known}
            found |= submodules
            if len(submodules) < len(node.names):
                found.add(target)
    return {m for m in found if m == "onelayer" or m.startswith("onelayer.")}


def import_graph() -> dict[str, set[str]]:
    """module -> the onelayer modules it imports (names resolved to the module files that exist)."""
    known = modules()
    graph = {}
    for name, path in known.items():
        deps = set()
        for m in imported_modules(path):
            while m and m not in known:
                m = m.rsplit(".", 1)[0] if "." in m else ""
            if m and m != name:
                deps.add(m)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): each is an import cycle."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((SRC / "onelayer").rglob("*.py"))}


def test_cycle_finder_finds_a_cycle_and_only_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_no_import_cycles():
    """No two onelayer modules import each other, directly or through others (lazy imports inside functions count)."""
    assert cycles(import_graph()) == []


def test_import_graph_reader_finds_relative_and_absolute_imports(tmp_path):
    # the reader must see what the tests below forbid, or they could never fail
    mods = modules()
    assert "onelayer.registry" in imported_modules(mods["onelayer.chapters.selector"])
    assert "onelayer.chapters.selector" in imported_modules(ROOT / "src" / "onelayer" / "chapters" / "selector.py") | {
        "onelayer.chapters.selector"}
    fake = SRC / "onelayer" / "walks" / "_layering_probe.py"
    try:
        fake.write_text("from ..chapters import selector\n")
        assert "onelayer.chapters.selector" in imported_modules(fake)
    finally:
        fake.unlink()


def test_papers_and_core_never_import_chapter_modules():
    offenders = {name: sorted(m for m in imported_modules(path) if m == CHAPTERS or m.startswith(CHAPTERS + "."))
                 for name, path in modules().items() if not (name == CHAPTERS or name.startswith(CHAPTERS + "."))}
    # the registry's discover() imports the package by name (a string), not with an import statement
    assert {k: v for k, v in offenders.items() if v} == {}


def test_a_chapter_module_imports_no_other_chapter_module():
    for name, path in modules().items():
        if name.startswith(CHAPTERS + "."):
            others = {m for m in imported_modules(path) if m.startswith(CHAPTERS + ".") and m != name}
            assert not others, f"{name} imports the chapter modules {sorted(others)}"


def chapter_notebook(module: str) -> Path:
    return ROOT / "book" / Path(*module.split(".")[2:]).with_suffix(".ipynb")


def test_every_chapter_module_mirrors_a_notebook():
    for name in registry.chapter_modules():
        assert chapter_notebook(name).is_file(), f"{name} has no notebook {chapter_notebook(name).relative_to(ROOT)}"


@pytest.mark.parametrize("module", registry.chapter_modules())
def test_every_registered_function_of_a_chapter_module_is_called_by_its_notebook(module):
    notebook = json.loads(chapter_notebook(module).read_text())
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    specs = [s for s in registry.available().values() if s.module == module]
    assert specs, f"{module} registers nothing"
    for spec in specs:
        caller = spec.fn.__name__
        # a registered frames function is shown through the player that draws the same frames
        pattern = rf"\b{re.escape(caller)}\(" if not spec.name.endswith("-frames") else r"\b\w+_player\("
        assert re.search(pattern, code), f"{chapter_notebook(module).name} never calls {module}.{caller} ({spec.name})"


def test_registered_functions_live_in_chapter_modules():
    for spec in registry.available().values():
        assert spec.module.startswith(CHAPTERS + "."), (spec.name, spec.module)
