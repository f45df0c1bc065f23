"""Stored quick-mode numbers of every registered figure, and the comparison against them.

Usage: python -m tools.figure_numbers [--update] [NAME ...]   (default: every registered figure)

Plain mode makes each figure in quick mode (``onelayer.registry.make(name, dir, quick=True)``),
compares its ``numbers`` with ``tests/data/figure_numbers/NAME.json`` and prints the first
mismatches; it exits 1 if any figure differs, has no stored reference, or a stored file names
no registered figure. ``--update`` writes the references instead (and, without names, removes
stale ones). ``tests/test_registry.py`` runs the same comparison for every figure.

Tolerance: floats agree when ``|a - b| <= max(REL * max(|a|, |b|), ABS)`` with :data:`REL` and
:data:`ABS`; ints, bools, strings (including ``"nan"``, ``"inf"``) and ``None`` must be equal;
keys, list lengths and value types must match. :data:`LOOSER` lists the few entries compared
more loosely, each with its reason; the reference files repeat them under ``"tolerance"``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DIR = ROOT / "tests" / "data" / "figure_numbers"
UPDATE_COMMAND = "python -m tools.figure_numbers --update"

#: Relative and absolute tolerance of every float. Measured on one machine between torch's AVX-512
#: and non-vectorised kernels (ATEN_CPU_CAPABILITY=default), NumPy without its AVX2/AVX-512 loops and
#: OpenBLAS on another core type, the entries not listed in LOOSER differ by at most 2e-10 relative
#: (values above 1e-12) and 1e-16 absolute (values that are round-off around 0). REL = 1e-6 leaves
#: four orders of magnitude for other CPUs and still catches any change in what a figure shows.
REL, ABS = 1e-6, 1e-12

#: figure name -> {path pattern: (rel, abs, reason)}: entries compared more loosely than REL/ABS.
#: A pattern is a path as in the messages ("numbers.table[3].x") in which ``*`` matches anything.
#: ``(None, None)``: the value (or the whole subtree) is not compared, only its presence.
_WALL = "wall-clock time of this machine, not a computed quantity: only its presence is checked"
_ESCAPE = ("escape from the symmetric state (Theorem 4.1) seeded by a Gram error of 1e-9 on sinusoidal positions: it "
           "amplifies the machine's own round-off (~1e-13 on Gram entries). Measured on quick runs: 1-ulp changes of the "
           "computed sines move these floats by up to 5e-7 relative, a change of 1e-16 in q^(0) by up to 1e-3 at the "
           "escape step; 1e-3 still shows a different seed, error size or escape step")
LOOSER: dict[str, dict[str, tuple[float | None, float | None, str]]] = {
    "walks-scaling": {
        "numbers.slopes.seconds_per_step vs *": (None, None, _WALL),
        "numbers.cost_model": (None, None, _WALL + " (a fit to the step times)"),
        "numbers.table[*].ms/step": (None, None, _WALL),
    },
    "trees-scaling": {
        f"numbers.fits[{i}].{key}": (None, None, _WALL + " (fits[4], fits[5]: the 'time: ...' series)")
        for i in (4, 5) for key in ("slope", "r2")
    },
    "walks-fig5-sin-positions": {"numbers.*": (1e-3, 1e-12, _ESCAPE)},
    **{name: {"numbers.runs.1000 walks, sin positions*": (1e-3, 1e-12, _ESCAPE + " (the run with sin positions)")}
       for name in ("walks-fig5", "walks-fig9")},
    "walks-t41-escape-frames": {"numbers.frames*": (1e-3, 1e-12, _ESCAPE + " (every frame of the chapter's player)")},
    "walks-sensitivity": {"numbers.*": (1e-3, 1e-12, _ESCAPE + " (every row: sinusoidal positions with the seeded Gram error)")},
    "walks-roundoff-machine": {
        f"numbers.table[{i}]": (None, None, "round-off alone, no injected error: the escape is the machine's own rounding "
                                            "(the chapter's cell is nbval-ignore-output); table[1], exact positions in "
                                            "float64, is compared")
        for i in (0, 2, 3)},
}


def reference_path(name: str) -> Path:
    return REFERENCE_DIR / f"{name}.json"


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def tolerances(name: str) -> dict:
    """The tolerance record of ``name``, as written into its reference file."""
    looser = {pattern: {"rel": rel, "abs": abs_, "why": why} for pattern, (rel, abs_, why) in LOOSER.get(name, {}).items()}
    return {"rel": REL, "abs": ABS, "looser": looser}


def _matches(pattern: str, path: str) -> bool:
    """``pattern`` is a path in which ``*`` stands for any characters; everything else is literal."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), path) is not None


def _tolerance_at(path: str, looser: dict, default: tuple[float, float]) -> tuple[float | None, float | None]:
    for pattern, tol in looser.items():
        if _matches(pattern, path):
            return tol["rel"], tol["abs"]
    return default


def _kind(value) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "int" if isinstance(value, int) else "float"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "str"
    return "null" if value is None else type(value).__name__


def mismatches(expected, actual, path: str = "numbers", *, rel: float = REL, abs: float = ABS, looser: dict | None = None) -> Iterator[str]:
    """Yield one line per difference between two JSON trees, each naming its path.

    ``expected`` is the stored value, ``actual`` the fresh one; a line reads
    ``"numbers.table[3].accuracy: 0.52 (stored) vs 0.55 (now)"``. Floats are
    compared with ``rel``/``abs`` unless a pattern of ``looser`` (as in
    :func:`tolerances`) matches the path.
    """
    looser = looser or {}
    tol = _tolerance_at(path, looser, (rel, abs))
    if tol[0] is None:  # not compared (see LOOSER)
        return
    kind_e, kind_a = _kind(expected), _kind(actual)
    if kind_e != kind_a:
        yield f"{path}: {expected!r} ({kind_e}, stored) vs {actual!r} ({kind_a}, now)"
    elif kind_e == "dict":
        for key in expected:
            if key not in actual:
                yield f"{path}.{key}: stored but missing now"
            else:
                yield from mismatches(expected[key], actual[key], f"{path}.{key}", rel=rel, abs=abs, looser=looser)
        for key in actual:
            if key not in expected:
                yield f"{path}.{key}: new, not in the stored numbers"
    elif kind_e == "list":
        if len(expected) != len(actual):
            yield f"{path}: length {len(expected)} (stored) vs {len(actual)} (now)"
        for i, (e, a) in enumerate(zip(expected, actual)):
            yield from mismatches(e, a, f"{path}[{i}]", rel=rel, abs=abs, looser=looser)
    elif kind_e == "float":
        if not math.isclose(expected, actual, rel_tol=tol[0], abs_tol=tol[1]):
            yield f"{path}: {expected!r} (stored) vs {actual!r} (now), beyond rel {tol[0]:g} abs {tol[1]:g}"
    elif expected != actual:
        yield f"{path}: {expected!r} (stored) vs {actual!r} (now)"


def check(name: str, numbers: dict) -> list[str]:
    """Differences between fresh ``numbers`` of ``name`` and its stored reference (empty: agree)."""
    path = reference_path(name)
    if not path.exists():
        return [f"no stored numbers for {name!r} ({_shown(path)}); write them with: {UPDATE_COMMAND} {name}"]
    stored = json.loads(path.read_text())
    return list(mismatches(stored["numbers"], numbers, looser=tolerances(name)["looser"]))


def stale() -> list[str]:
    """Names of stored reference files that no registered figure matches."""
    from onelayer import registry

    registered = set(registry.available())
    return sorted(p.stem for p in REFERENCE_DIR.glob("*.json") if p.stem not in registered)


def quick_numbers(name: str, out_dir: Path) -> dict:
    """Make ``name`` in quick mode into ``out_dir``; the numbers as the CLI wrote them."""
    from onelayer import registry

    registry.make(name, out_dir, quick=True)
    return json.loads((Path(out_dir) / f"{name}.json").read_text())["numbers"]


def write_reference(name: str, numbers: dict) -> Path:
    REFERENCE_DIR.mkdir(parents=True, exist_ok=True)
    record = {"name": name, "quick": True, "tolerance": tolerances(name), "numbers": numbers}
    path = reference_path(name)
    path.write_text(json.dumps(record, indent=1, allow_nan=False) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    from onelayer import registry

    parser = argparse.ArgumentParser(prog="python -m tools.figure_numbers", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="registered figures (default: all)")
    parser.add_argument("--update", action="store_true", help="write the stored numbers instead of comparing")
    args = parser.parse_args(argv)
    names = args.names or list(registry.available())
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            numbers = quick_numbers(registry.get(name).name, Path(tmp))
            if args.update:
                print(f"wrote {_shown(write_reference(name, numbers))}")
                continue
            diffs = check(name, numbers)
            failed += bool(diffs)
            print(f"{'DIFF' if diffs else 'ok  '} {name}" + "".join(f"\n     {d}" for d in diffs[:5]))
            if len(diffs) > 5:
                print(f"     ... and {len(diffs) - 5} more")
    if not args.names:
        for name in stale():
            if args.update:
                reference_path(name).unlink()
                print(f"removed stale {_shown(reference_path(name))}")
            else:
                failed += 1
                print(f"STALE {_shown(reference_path(name))}: no registered figure of that name")
    if not args.update:
        print(f"{len(names) - failed} of {len(names)} agree" if not failed else f"{failed} problem(s); if intended: {UPDATE_COMMAND} [NAME ...]")
    return 1 if failed else 0


def one_thread() -> None:
    """One BLAS/OpenMP thread unless the environment says otherwise (as the Makefile and tests/conftest.py)."""
    import os

    for var, value in (("OMP_NUM_THREADS", "1"), ("MKL_NUM_THREADS", "1")):
        os.environ.setdefault(var, value)


if __name__ == "__main__":
    one_thread()
    sys.exit(main())
