"""The package installs like a package (issue 29).

* pyproject.toml declares every distribution that ``src/onelayer`` imports (an AST scan of every ``import``, at
  module level or inside functions), and nothing else; each with a lower bound that the pin satisfies; its
  ``requires-python`` is the highest lower bound among the pins' own Requires-Python, and the Makefile's check says
  the same version.

Module names map to distributions through ``importlib.metadata.packages_distributions()`` of this environment
(make setup's .venv, installed from requirements.txt).
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "onelayer"
REQUIREMENTS_TXT = ROOT / "requirements.txt"


def imported_modules(paths: list[Path]) -> dict[str, set[str]]:
    """Top-level module name -> files importing it: every absolute ``import``/``from`` anywhere in the files."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], set()).add(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path))
    return found


def imported_distributions(paths: list[Path]) -> tuple[dict[str, set[str]], list[str]]:
    """Distribution -> files importing it, and the modules no distribution provides. Left out: the stdlib, onelayer,
    the repository's own folders (``benchmarks``, which ``onelayer bench`` imports from a checkout) and the scanned
    files' own modules (``e2e_support`` beside the e2e tests, ``book_html`` in tools/)."""
    providers = md.packages_distributions()
    local = {path.stem for path in paths}
    dists: dict[str, set[str]] = {}
    unknown = []
    for module, files in imported_modules(paths).items():
        if module in sys.stdlib_module_names or module == "onelayer" or module in local or (ROOT / module).is_dir():
            continue
        if module not in providers:
            unknown.append(f"{module} (imported by {', '.join(sorted(files))})")
            continue
        for dist in providers[module]:
            dists.setdefault(canonicalize_name(dist), set()).update(files)
    return dists, unknown


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def pins(text: str | None = None) -> dict[str, tuple[Version, list[str]]]:
    """requirements.txt: name -> (pinned version, the names under its "# via", ``-r requirements.in`` kept as is)."""
    text = REQUIREMENTS_TXT.read_text() if text is None else text
    out: dict[str, tuple[Version, list[str]]] = {}
    current = None
    for line in text.splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            name, version = line.split(";")[0].strip().split("==")
            current = canonicalize_name(name)
            out[current] = (Version(version), [])
        elif current and line.startswith("    # "):
            via = line[len("    # "):].strip()
            via = via.removeprefix("via").strip().lstrip("#").strip()
            if via:
                out[current][1].append(via if via.startswith("-r ") else canonicalize_name(via))
        elif line.strip() and not line.startswith("#"):
            raise AssertionError(f"requirements.txt: unexpected line {line!r}")
    return out


def version_lower_bound(spec: SpecifierSet) -> Version | None:
    bounds = [Version(s.version) for s in spec if s.operator in (">=", "==", "~=", "===")]
    return max(bounds) if bounds else None


# --- pyproject.toml against the imports of src/onelayer ---------------------------------------------------------

def undeclared_and_unimported(paths: list[Path], declared: list[str]) -> tuple[list[str], list[str], list[str]]:
    imported, unknown = imported_distributions(paths)
    names = {canonicalize_name(Requirement(d).name) for d in declared}
    undeclared = [f"{d} (imported by {', '.join(sorted(files))})" for d, files in sorted(imported.items())
                  if d not in names]
    return undeclared, sorted(names - set(imported)), unknown


def test_pyproject_declares_exactly_what_the_package_imports():
    undeclared, unimported, unknown = undeclared_and_unimported(python_files("src/onelayer"), pyproject()["dependencies"])
    assert not unknown, f"imported, but no installed distribution provides it: {unknown}"
    assert not undeclared, f"src/onelayer imports these, pyproject.toml does not declare them: {undeclared}"
    assert not unimported, f"pyproject.toml declares these, src/onelayer never imports them: {unimported}"


def test_the_scan_catches_an_undeclared_import_inside_a_function(tmp_path):
    """The comparison above on a planted module (a test that can fail): an import inside a function body counts,
    the stdlib does not, and a declared but unused distribution is named too."""
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\n\ndef f():\n    import yaml\n    from scipy import stats\n")
    undeclared, unimported, unknown = undeclared_and_unimported([planted], ["scipy>=1", "tqdm>=4"])
    assert not unknown
    assert [u.split(" ")[0] for u in undeclared] == ["pyyaml"], undeclared
    assert unimported == ["tqdm"]


def test_declared_dependencies_have_lower_bounds_the_pins_meet():
    pinned = pins()
    for line in pyproject()["dependencies"]:
        req = Requirement(line)
        bound = version_lower_bound(req.specifier)
        assert bound is not None, f"pyproject.toml: {line!r} has no lower bound"
        name = canonicalize_name(req.name)
        assert name in pinned, f"pyproject.toml declares {name}, requirements.txt does not pin it"
        assert req.specifier.contains(pinned[name][0], prereleases=True), \
            f"pyproject.toml: {line!r} excludes the pin {name}=={pinned[name][0]}"


def test_requires_python_is_what_the_pins_need():
    pinned = pins()
    needs = {}
    for name in pinned:
        spec = md.metadata(name).get("Requires-Python")
        bound = version_lower_bound(SpecifierSet(spec)) if spec else None
        if bound is not None:
            needs[name] = bound
    highest = max(needs.values())
    spec = SpecifierSet(pyproject()["requires-python"])
    assert version_lower_bound(spec) == highest, (
        f"requires-python is {spec}; the pins need >={highest} "
        f"({', '.join(n for n, v in needs.items() if v == highest)})")
    makefile = (ROOT / "Makefile").read_text()
    assert f"onelayer needs Python {highest}+" in makefile, f"the Makefile's Python check does not say {highest}+"
