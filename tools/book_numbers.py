"""The numbers behind the book's figures: ``book/numbers/NAME.json`` (and ``NAME.csv``), as the CLI writes them.

Usage: python -m tools.book_numbers [--update] [--all] [NAME ...]   (``make numbers`` runs ``--update``)

Every registered figure or table (:mod:`onelayer.registry`) has its full-mode numbers committed in
``book/numbers/``: the ``NAME.json`` (and, for a table, ``NAME.csv``) that
``python -m onelayer make NAME --out DIR`` writes, copied there without the PNG. Each figure's caption
in the chapters links to them with ``{download}``, so they travel with the HTML book
(``tools/figure_captions.py`` writes the captions).

``--update`` makes the named figures (default: all) in full mode through the CLI into a scratch
directory and copies their JSON/CSV here; without names it also removes files of names no longer
registered. Without ``--update`` the command regenerates the named figures (default: every figure
not in :data:`NOT_REGENERATED`; ``--all``: every figure) and compares them with the committed files:
the numbers with the tolerance of ``tools/figure_numbers.py`` (REL/ABS and its LOOSER entries), the
CSV text exactly up to the same float tolerance, and the header fields (``schema_version``, ``kind``,
``name``, ``description``, ``quick``). ``tests/test_book_numbers.py`` runs the same comparison for every
figure whose full mode is cheap, and checks the header of every committed file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

from tools import figure_numbers

ROOT = Path(__file__).resolve().parents[1]
NUMBERS_DIR = ROOT / "book" / "numbers"
UPDATE_COMMAND = "python -m tools.book_numbers --update"
#: Where the chapters' ``{download}`` links point (a path from the source directory, the repository root).
LINK_PREFIX = "/book/numbers/"

_SLOW = "full mode takes {s} s on one loaded core (measured {when}); its quick mode is checked by tests/test_registry.py"
_MEASURED = "2026-05, 2 busy cores"
_SCRUB_MEASURED = "2026-11, 2 busy cores"
#: Figures the tests do not regenerate in full mode, with the reason. Everything else is regenerated
#: and compared by tests/test_book_numbers.py (about 40 s in all on a loaded core); ``python -m tools.book_numbers --all``
#: compares these too.
NOT_REGENERATED: dict[str, str] = {
    "walks-roundoff-machine": "shows the machine's own round-off (float32 and float64 without an injected error): "
                              "another CPU moves the escape steps, so the chapter's cell is nbval-ignore-output too",
    "walks-sensitivity": "its float32 rows are the machine's own round-off (as the chapter says); "
                         + _SLOW.format(s=7.1, when=_MEASURED),
    "trees-generalization-embeddings": _SLOW.format(s=7.3, when=_MEASURED),
    "trees-forward-accuracy-by-type": _SLOW.format(s=6.7, when=_MEASURED) + " (the tracked training run it shares with "
                                      "trees-forward-scalars, -roles and -rescaling)",
    "trees-forward-scalars": "shares the 6.7 s training run of trees-forward-accuracy-by-type",
    "trees-forward-roles": "shares the 6.7 s training run of trees-forward-accuracy-by-type",
    "trees-forward-rescaling": "shares the 6.7 s training run of trees-forward-accuracy-by-type",
    "walks-fig10": _SLOW.format(s=4.2, when=_MEASURED),
    "walks-scaling": _SLOW.format(s=9, when=_SCRUB_MEASURED) + " (20 seeds per size)",
    "trees-h-entries": _SLOW.format(s=4.1, when=_MEASURED),
    "trees-loss-rate": _SLOW.format(s=4.1, when=_MEASURED),
    "trees-generalization": _SLOW.format(s=3.6, when=_MEASURED),
    "walks-value-direction": _SLOW.format(s=7.1, when=_MEASURED),
    "trees-forward-attention-steps-frames": _SLOW.format(s=12, when=_SCRUB_MEASURED) + " (the tracked training run of "
                                            "trees-forward-accuracy-by-type, with snapshots)",
    "walks-lab-p-eta-frames": _SLOW.format(s=3.1, when=_SCRUB_MEASURED) + " (12 lab runs; walks-lab-default, which is "
                              "regenerated, draws through the same lab_figure)",
    "walks-qa-explorer-frames": _SLOW.format(s=7, when=_SCRUB_MEASURED) + " (18 training runs of 100 steps)",
    "walks-t41-escape-frames": _SLOW.format(s=3.1, when=_SCRUB_MEASURED) + " (the escape run of walks-fig5-sin-positions, "
                               "which is regenerated)",
}


#: Entries compared more loosely in full mode than tools/figure_numbers.LOOSER says (which is written for the
#: quick mode's layout), in its format: figure name -> {path pattern: (rel, abs, reason)}.
FULL_LOOSER: dict[str, dict[str, tuple[float | None, float | None, str]]] = {
    "trees-scaling": {f"numbers.fits[{i}].{key}": (None, None, figure_numbers._WALL + " (full mode: fits[12], fits[13] "
                                                                                     "are the 'time: ...' series)")
                      for i in (12, 13) for key in ("slope", "r2")},
}


def looser(name: str) -> dict:
    """The entries of ``name`` compared more loosely (tools/figure_numbers.py's and :data:`FULL_LOOSER`)."""
    out = dict(figure_numbers.tolerances(name)["looser"])
    out.update({pattern: {"rel": rel, "abs": abs_, "why": why} for pattern, (rel, abs_, why) in FULL_LOOSER.get(name, {}).items()})
    return out


def numbers_path(name: str, suffix: str = ".json") -> Path:
    return NUMBERS_DIR / f"{name}{suffix}"


def link(name: str, suffix: str = ".json") -> str:
    """The target of a chapter's ``{download}`` link to the numbers of ``name``."""
    return f"{LINK_PREFIX}{name}{suffix}"


def make_full(names: list[str], out_dir: Path) -> None:
    """``python -m onelayer make NAME ... --out out_dir`` (full mode), through the CLI itself; raise if it fails."""
    from onelayer import cli

    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        code = cli.main(["make", *names, "--out", str(out_dir)])
    if code != 0:
        raise RuntimeError(f"python -m onelayer make {' '.join(names)} failed (exit {code}):\n{log.getvalue()}")


def header_problems(name: str) -> list[str]:
    """What is wrong with the committed files of ``name`` apart from the numbers (empty: nothing)."""
    from onelayer import registry, store

    path = numbers_path(name)
    if not path.exists():
        return [f"{path.name} is missing; write it with: {UPDATE_COMMAND} {name}"]
    try:
        record = store.read_json(path, kind="figure")
    except store.SchemaError as exc:
        return [f"{exc}; rewrite it with: {UPDATE_COMMAND} {name}"]
    problems = []
    spec = registry.available().get(name)
    expected = {"name": name, "quick": False, "description": spec.description if spec else None}
    for key, value in expected.items():
        if record.get(key) != value:
            problems.append(f"{path.name}: {key} is {record.get(key)!r}, expected {value!r}")
    has_table = "table" in record.get("numbers", {})
    csv = numbers_path(name, ".csv")
    if has_table != csv.exists():
        problems.append(f"{csv.name} {'is missing' if has_table else 'exists but the numbers hold no table'}")
    elif has_table:
        try:
            store.read_csv(csv, kind=f"figure-table {name}")
        except store.SchemaError as exc:
            problems.append(str(exc))
    return problems


def _csv_cells(path: Path) -> list[list[str]]:
    return [line.split(",") for line in path.read_text().splitlines()]


def _cell_differs(a: str, b: str, rel: float, abs_: float) -> bool:
    if a == b:
        return False
    try:
        x, y = float(a), float(b)
    except ValueError:
        return True
    return not math.isclose(x, y, rel_tol=rel, abs_tol=abs_)


def compare(name: str, fresh_dir: Path) -> list[str]:
    """Differences between the committed numbers of ``name`` and those made into ``fresh_dir`` (empty: agree)."""
    problems = header_problems(name)
    if problems:
        return problems
    stored = json.loads(numbers_path(name).read_text())
    fresh = json.loads((fresh_dir / f"{name}.json").read_text())
    loose = looser(name)
    diffs = list(figure_numbers.mismatches(stored["numbers"], fresh["numbers"], looser=loose))
    if numbers_path(name, ".csv").exists() and not diffs and not loose:
        # The CSV is the table of the JSON; compare its text too (a change in how it is written shows here).
        a, b = _csv_cells(numbers_path(name, ".csv")), _csv_cells(fresh_dir / f"{name}.csv")
        if len(a) != len(b) or any(len(r) != len(s) or any(_cell_differs(x, y, figure_numbers.REL, figure_numbers.ABS)
                                                           for x, y in zip(r, s)) for r, s in zip(a, b)):
            diffs.append(f"{name}.csv differs from the one the CLI writes now")
    return diffs


def write(names: list[str]) -> list[Path]:
    """Make ``names`` in full mode through the CLI and copy their JSON/CSV into :data:`NUMBERS_DIR`."""
    NUMBERS_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        make_full(names, Path(tmp))
        for name in names:
            numbers_path(name, ".csv").unlink(missing_ok=True)  # a figure may have stopped being a table
            for suffix in (".json", ".csv"):
                made = Path(tmp) / f"{name}{suffix}"
                if made.exists():
                    written.append(Path(shutil.copyfile(made, numbers_path(name, suffix))))
    return written


def stale() -> list[Path]:
    """Committed files whose name is not registered."""
    from onelayer import registry

    registered = set(registry.available())
    return sorted(p for p in NUMBERS_DIR.glob("*.*") if p.suffix in (".json", ".csv") and p.stem not in registered)


def main(argv: list[str] | None = None) -> int:
    from onelayer import registry

    parser = argparse.ArgumentParser(prog="python -m tools.book_numbers", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="registered figures (default: see --all)")
    parser.add_argument("--update", action="store_true", help="write book/numbers/ instead of comparing")
    parser.add_argument("--all", action="store_true", help="compare every figure, also those in NOT_REGENERATED")
    args = parser.parse_args(argv)
    specs = registry.available()
    unknown = [n for n in args.names if n not in specs]
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(unknown)} ('python -m onelayer list' shows them)")
    if args.update:
        from onelayer.paths import OutputFolderError, writable_folder

        try:
            writable_folder(NUMBERS_DIR)
        except OutputFolderError as exc:
            parser.exit(2, f"{parser.prog}: error: {exc}\n")
        names = args.names or list(specs)
        for path in write(names):
            print(f"wrote {path.relative_to(ROOT)}")
        if not args.names:
            for path in stale():
                path.unlink()
                print(f"removed stale {path.relative_to(ROOT)}")
        return 0
    names = args.names or [n for n in specs if args.all or n not in NOT_REGENERATED]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        make_full(names, Path(tmp))
        for name in names:
            diffs = compare(name, Path(tmp))
            failed += bool(diffs)
            print(f"{'DIFF' if diffs else 'ok  '} {name}" + "".join(f"\n     {d}" for d in diffs[:5]))
    for path in stale():
        failed += 1
        print(f"STALE {path.relative_to(ROOT)}: no registered figure of that name")
    print(f"{len(names) - failed} of {len(names)} agree" if not failed else f"{failed} problem(s); if intended: {UPDATE_COMMAND} [NAME ...]")
    return 1 if failed else 0


if __name__ == "__main__":
    figure_numbers.one_thread()
    sys.exit(main())
