"""The package installs like a package, and the lock is the compiled direct dependencies (issue 29).

* pyproject.toml declares every distribution that ``src/onelayer`` imports (an AST scan of every ``import``, at
  module level or inside functions), and nothing else; each with a lower bound that the pin satisfies; its
  ``requires-python`` is the highest lower bound among the pins' own Requires-Python, and the Makefile's check says
  the same version.
* requirements.in names every distribution the repository imports (src, tests, tools, benchmarks); requirements.txt
  pins each of them, and pins nothing that no direct dependency needs: the pins are exactly the closure of
  requirements.in through the installed distributions' Requires-Dist (extras and markers evaluated here), and every
  pin's "# via" annotation leads back to requirements.in.

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

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "onelayer"
REQUIREMENTS_IN = ROOT / "requirements.in"
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


def requirements_in() -> dict[str, Requirement]:
    reqs = {}
    for line in REQUIREMENTS_IN.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            reqs[canonicalize_name(req.name)] = req
    return reqs


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


def needed_closure(direct: dict[str, Requirement]) -> dict[str, set[str]]:
    """Every distribution reached from the direct dependencies through the installed distributions' Requires-Dist
    (markers evaluated for this interpreter and platform, with the requested extras): name -> who needs it."""
    env = default_environment()
    needed: dict[str, set[str]] = {name: {"requirements.in"} for name in direct}
    todo = [(name, frozenset(req.extras)) for name, req in direct.items()]
    seen = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        if not installed(name):
            continue  # reported by the caller: needed but neither installed nor pinned
        for line in md.distribution(name).requires or []:
            req = Requirement(line)
            if req.marker and not any(req.marker.evaluate({**env, "extra": e}) for e in ({""} | set(extras))):
                continue
            dep = canonicalize_name(req.name)
            needed.setdefault(dep, set()).add(name)
            todo.append((dep, frozenset(req.extras)))
    return needed


def installed(name: str) -> bool:
    try:
        md.distribution(name)
    except md.PackageNotFoundError:
        return False
    return True


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
    missing = [name for name in pinned if not installed(name)]
    assert not missing, f"pinned but not installed (make setup): {missing}"
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


# --- requirements.in against requirements.txt ---------------------------------------------------------------------

def test_requirements_in_names_every_distribution_the_repository_imports():
    imported, unknown = imported_distributions(python_files("src", "tests", "tools", "benchmarks")
                                               + [ROOT / "conftest.py"])
    assert not unknown, f"imported, but no installed distribution provides it: {unknown}"
    missing = sorted(set(imported) - set(requirements_in()))
    assert not missing, f"imported by the repository, not in requirements.in: " + "; ".join(
        f"{d} ({', '.join(sorted(imported[d])[:3])})" for d in missing)


def test_every_direct_dependency_is_pinned():
    pinned = pins()
    for name, req in requirements_in().items():
        assert name in pinned, f"requirements.in: {req} is not pinned in requirements.txt (make lock)"
        assert req.specifier.contains(pinned[name][0], prereleases=True), \
            f"requirements.txt pins {name}=={pinned[name][0]}, outside requirements.in's {req}"


def unneeded_and_unpinned(pinned: dict) -> tuple[list[str], list[str]]:
    needed = needed_closure(requirements_in())
    return sorted(set(pinned) - set(needed)), sorted(f"{n} (needed by {', '.join(sorted(needed[n]))})"
                                                      for n in set(needed) - set(pinned))


def test_pins_are_exactly_what_the_direct_dependencies_need():
    unneeded, unpinned = unneeded_and_unpinned(pins())
    assert not unneeded, f"pinned, but no direct dependency needs them (make lock drops them): {unneeded}"
    assert not unpinned, f"needed, but not pinned (make lock): {unpinned}"


def test_the_installed_versions_are_the_pins():
    pinned = pins()
    missing = [n for n in pinned if not installed(n)]
    assert not missing, f"pinned but not installed (make setup): {missing}"
    wrong = [f"{n}: pinned {v}, installed {md.version(n)}" for n, (v, _) in pinned.items()
             if Version(md.version(n)).public != v.public]
    assert not wrong, f"the environment is not requirements.txt (make setup): {wrong}"


def test_every_pin_is_there_for_a_direct_dependency():
    """The "# via" annotations that pip-compile writes lead from every pin to requirements.in."""
    pinned = pins()
    for name, (_, via) in pinned.items():
        assert via, f"requirements.txt: {name} has no '# via' reason (a pin added by hand? make lock)"
    reached = {n for n, (_, via) in pinned.items() if "-r requirements.in" in via}
    grew = True
    while grew:
        new = {n for n, (_, via) in pinned.items() if n not in reached and reached.intersection(via)}
        reached |= new
        grew = bool(new)
    assert set(pinned) == reached, f"pins whose '# via' does not lead to requirements.in: {sorted(set(pinned) - reached)}"


def test_the_lock_has_no_cuda_packages():
    """torch is the CPU wheel: the CUDA build's packages (several GB) are not in the lock."""
    cuda = [n for n in pins() if n.startswith("nvidia-") or n == "triton"]
    assert not cuda, f"requirements.txt pins CUDA packages (torch resolved to its CUDA build): {cuda}"


@pytest.mark.parametrize("extra", ["pytest-timeout==2.4.0\n", "pytest-timeout==2.4.0\n    # via -r requirements.in\n"])
def test_a_planted_pin_is_caught(extra):
    """A pin that nothing needs: the closure check fails on it, annotated or not (a test that can fail)."""
    unneeded, _ = unneeded_and_unpinned(pins(REQUIREMENTS_TXT.read_text() + extra))
    assert unneeded == ["pytest-timeout"]
