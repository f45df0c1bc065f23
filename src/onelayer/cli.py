"""The command line: ``python -m onelayer`` (or the ``onelayer`` script).

::

    python -m onelayer list                          # every figure/table, one line each
    python -m onelayer make NAME [NAME ...] --out DIR [--quick]
    python -m onelayer make --all --out DIR [--quick]

``make`` writes ``DIR/NAME.png``, ``DIR/NAME.json`` (the numbers) and, for
tables, ``DIR/NAME.csv``; see :mod:`onelayer.registry` for the registry and how
to add a figure. Exit codes: 0 on success, 1 if a figure failed while running,
2 for a usage error (unknown name, bad option).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence

__all__ = ["build_parser", "main"]

PROG = "python -m onelayer"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with the ``list`` and ``make`` subcommands."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Reproduce the figures and tables of the onelayer book from the command line.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"onelayer {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    sub.required = True

    p_list = sub.add_parser("list", help="list every reproducible figure and table", description="List every reproducible figure and table with a one-line description.")
    p_list.add_argument("--json", action="store_true", help="print the list as JSON (name -> description)")
    p_list.set_defaults(subparser=p_list)

    p_make = sub.add_parser(
        "make",
        help="write figures/tables (PNG + JSON numbers, CSV for tables)",
        description="Run figures by name and write DIR/NAME.png, DIR/NAME.json and, for tables, DIR/NAME.csv.",
    )
    p_make.add_argument("names", nargs="*", metavar="NAME", help="names shown by 'list'")
    p_make.add_argument("--all", action="store_true", help="make every registered figure")
    p_make.add_argument("--out", required=True, metavar="DIR", help="output directory (created if needed)")
    p_make.add_argument("--quick", action="store_true", help="fast variants (fewer steps, coarser grids), for tests")
    p_make.set_defaults(subparser=p_make)
    return parser


def _discover_or_exit() -> dict:
    from . import registry

    try:
        return registry.available()
    except Exception as exc:  # a part's figure module failed to import: say which
        print(f"{PROG}: error: could not load the figure modules: {type(exc).__name__}: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc


def _list(args) -> int:
    specs = _discover_or_exit()
    if args.json:
        print(json.dumps({name: spec.description for name, spec in specs.items()}, indent=2))
        return 0
    width = max((len(n) for n in specs), default=0)
    for name, spec in specs.items():
        print(f"{name:<{width}}  {spec.description}")
    return 0


def _make(args, parser: argparse.ArgumentParser) -> int:
    from . import registry

    specs = _discover_or_exit()
    if args.all and args.names:
        parser.error("give either NAME ... or --all, not both")
    if not args.all and not args.names:
        parser.error(f"name at least one figure, or use --all ('{PROG} list' shows the names)")
    names = list(specs) if args.all else list(dict.fromkeys(args.names))
    unknown = [n for n in names if n not in specs]
    if unknown:
        lines = []
        for n in unknown:
            matches = registry.close_matches(n)
            hint = f" (did you mean: {', '.join(matches)}?)" if matches else ""
            lines.append(f"unknown figure {n!r}{hint}")
        parser.error("; ".join(lines) + f". '{PROG} list' shows all {len(specs)} names")

    failed = []
    for name in names:
        try:
            made = registry.make(name, args.out, quick=args.quick)
        except Exception:
            failed.append(name)
            print(f"{name}: FAILED\n{traceback.format_exc()}", file=sys.stderr)
            continue
        files = ", ".join(str(p) for p in made.paths)
        print(f"{name}: {files} ({made.seconds:.1f} s)")
    if failed:
        print(f"{PROG}: error: {len(failed)} of {len(names)} failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Usage errors exit with code 2 (raised as ``SystemExit`` by argparse).
    """
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "list":
        return _list(args)
    return _make(args, args.subparser)
