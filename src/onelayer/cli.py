"""The command line: ``python -m onelayer`` (or the ``onelayer`` script).

One program, one subcommand per job::

    python -m onelayer list                          # every figure/table, one line each
    python -m onelayer make NAME [NAME ...] --out DIR [--quick]
    python -m onelayer make --all --out DIR [--quick]
    python -m onelayer study --list                  # the studies (onelayer.studies.registry)
    python -m onelayer study NAME [--jobs N] [--quick] [--only KEY_PREFIX ...] [--dask ADDRESS|local] [--restart]
    python -m onelayer study verify NAME [--sample K] [--seed S]
    python -m onelayer study verify --all --cheapest [--max-seconds S]   # each study's cheapest member
    python -m onelayer bench [--quick] [--only NAME]  # benchmarks (from a repository checkout)
    python -m onelayer findings [--check]            # every chapter's verdict rows -> book/data/findings.json
    python -m onelayer info                          # version and data directory

``make`` writes ``DIR/NAME.png``, ``DIR/NAME.json`` (the numbers) and, for
tables, ``DIR/NAME.csv``; see :mod:`onelayer.registry` for the registry and how
to add a figure. ``study`` runs one of the stored studies (:mod:`onelayer.studies.registry`) and writes
its JSON file, by default into the data directory. Every JSON and CSV file is
written through :mod:`onelayer.store` (with a schema version).

``--data-dir DIR`` (before the subcommand) or the environment variable
``ONELAYER_DATA`` sets the data directory (default: the repository's ``book``
folder; see :mod:`onelayer.paths`). Exit codes: 0 on success, 1 if a figure or
study failed while running (or a study's verify found a difference), 2 for a usage error (unknown name, bad
option, an output folder that cannot be created or written: one line naming it and why).
"""

from __future__ import annotations

import argparse
import json
import os
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
    parser.add_argument("--data-dir", metavar="DIR", help="data directory for stored studies (default: $ONELAYER_DATA, else the repository's book/)")
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

    p_study = sub.add_parser(
        "study",
        help="run a study (members in parallel, resumable) or verify a stored one",
        description="Run the members of a study that are not done yet (each written as it finishes, so a re-run "
        "resumes) and store the study, or ('study verify NAME') recompute a sample of its stored members. "
        "See onelayer.studies.runner.",
    )
    p_study.add_argument("--list", action="store_true", help="list the studies: name, members, stored file")
    p_study.add_argument("name", nargs="?", metavar="NAME", help="a name shown by 'study --list', or 'verify'")
    p_study.add_argument("target", nargs="?", metavar="VERIFY_NAME", help=argparse.SUPPRESS)
    p_study.add_argument("--jobs", default="1", metavar="N", help="worker processes (default 1: in this process); "
                         "with --dask local, the LocalCluster's workers")
    p_study.add_argument("--quick", action="store_true", help="the study's quick settings (stored as NAME.quick.json)")
    p_study.add_argument("--only", nargs="+", metavar="KEY_PREFIX", help="run only members whose key starts so")
    p_study.add_argument("--dask", metavar="ADDRESS", help="run on the Dask scheduler at ADDRESS (tcp://host:8786), "
                         "or 'local' for a LocalCluster of --jobs worker processes")
    p_study.add_argument("--out", metavar="FILE", help="the stored file (default: the study's, in the data directory)")
    p_study.add_argument("--restart", action="store_true", help="discard the member records of an earlier run")
    p_study.add_argument("--sample", default="3", metavar="K", help="verify: members to recompute (default 3, "
                         "always including the cheapest)")
    p_study.add_argument("--seed", default="0", metavar="S", help="verify: seed of the sample (default 0)")
    p_study.add_argument("--all", action="store_true", help="verify: every study (with --cheapest)")
    p_study.add_argument("--cheapest", action="store_true", help="verify: only each study's cheapest member, by its "
                         "recorded seconds (else its cost hint); one line per study and a total")
    p_study.add_argument("--max-seconds", metavar="S", help="verify --cheapest: skip a study whose cheapest member "
                         "is recorded above S seconds (selected by the stored seconds; nothing is timed out)")
    p_study.set_defaults(subparser=p_study)

    p_bench = sub.add_parser(
        "bench",
        help="benchmarks against plain reference implementations (repository checkout only)",
        description="Run benchmarks/ (ratios against plain reference implementations); options as 'python -m benchmarks'.",
        add_help=False,
    )
    p_bench.add_argument("options", nargs=argparse.REMAINDER, help="options of the benchmarks (--quick, --only NAME, --out DIR)")
    p_bench.set_defaults(subparser=p_bench)

    p_findings = sub.add_parser(
        "findings", help="collect every chapter's verdict rows into the stored findings",
        description="Run every chapter module's verdict_rows() and write them to data/findings.json in the data "
                    "directory (the Findings page and the parts' introductions show them). With --check, write "
                    "nothing and exit 1 if the stored rows differ from fresh ones.")
    p_findings.add_argument("--check", action="store_true", help="compare with the stored rows instead of writing")
    p_findings.set_defaults(subparser=p_findings)

    p_info = sub.add_parser("info", help="version and data directory", description="Print the version and the data directory in use.")
    p_info.set_defaults(subparser=p_info)
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

    _check_output_folder(args.out)
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


def _study_usage(message: str) -> int:
    print(f"{PROG} study: error: {message}", file=sys.stderr)
    return 2


def _count(text: str, low: int) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= low else None


def _study(args, argv: Sequence[str] | None) -> int:
    """``study``: usage errors are one line on stderr (exit 2)."""
    from .studies import registry, runner
    from .paths import data_path

    if args.list:
        if args.name:
            return _study_usage("give either --list or NAME, not both")
        for name, study in registry.studies().items():
            print(f"{name}  {len(study.member_list(study.settings))} members  {data_path(study.stored)}  {study.description}")
        return 0
    verifying = args.name == "verify"
    name = args.target if verifying else args.name
    if (args.all or args.cheapest or args.max_seconds is not None) and not verifying:
        return _study_usage("--all, --cheapest and --max-seconds are options of 'study verify'")
    if verifying and args.all:
        if name:
            return _study_usage("give either --all or NAME, not both")
        if not args.cheapest:
            return _study_usage("'study verify --all' needs --cheapest (each study's cheapest member)")
        return _verify_cheapest(list(registry.studies().values()), args.max_seconds)
    if not name or (args.target and not verifying):
        return _study_usage(f"name one study ('{PROG} study --list' shows them), or 'study verify NAME'")
    try:
        study = registry.get(name)
    except ValueError as exc:
        return _study_usage(str(exc))
    if verifying:
        sample, seed = _count(args.sample, 1), _count(args.seed, 0)
        if sample is None or seed is None:
            return _study_usage(f"--sample must be an integer >= 1 and --seed >= 0, got {args.sample!r} and {args.seed!r}")
        if args.cheapest:
            return _verify_cheapest([study], args.max_seconds, path=args.out, quick=args.quick)
        try:
            return 0 if runner.verify(study, sample=sample, seed=seed, path=args.out, quick=args.quick) else 1
        except (FileNotFoundError, ValueError) as exc:
            print(f"{PROG} study verify: error: {exc}", file=sys.stderr)
            return 1
    jobs = _count(args.jobs, 1)
    if jobs is None:
        return _study_usage(f"--jobs must be an integer >= 1, got {args.jobs!r}")
    if args.dask is not None and not args.dask.strip():
        return _study_usage("--dask must be a scheduler address (tcp://host:8786) or 'local'")
    from pathlib import Path

    _check_output_folder(Path(args.out).parent if args.out else data_path(study.stored).parent)
    try:
        report = runner.run(study, jobs=jobs, quick=args.quick, only=args.only or (), dask=args.dask, out=args.out,
                            restart=args.restart, argv=list(sys.argv[1:] if argv is None else argv))
    except ValueError as exc:
        return _study_usage(str(exc))
    except runner.StudyError as exc:
        print(f"{PROG} study: error: {exc}", file=sys.stderr)
        return 1
    done = f"{report.computed} computed, {report.reused} reused, {report.total} members"
    if report.path is None:
        print(f"{name}: {done}; {report.missing} still missing (records in {report.members_dir}), "
              f"so the stored file is not assembled yet ({report.seconds:.1f} s)")
    else:
        print(f"{name}: {done} -> {report.path} ({report.seconds:.1f} s)")
    return 0


def _bench(args) -> int:
    from .paths import REPOSITORY_DATA

    root = REPOSITORY_DATA.parent
    if not (root / "benchmarks" / "__main__.py").exists():
        print(f"{PROG}: error: the benchmarks are part of the repository checkout, not of the installed package "
              f"(no {root / 'benchmarks'})", file=sys.stderr)
        return 2
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from benchmarks.__main__ import main as bench_main

    return bench_main(args.options)


def _findings(args) -> int:
    from . import findings
    from .paths import data_path

    if not args.check:
        _check_output_folder(data_path(findings.STORED).parent)
    rows = findings.collect()
    if args.check:
        diffs = findings.differences(findings.load(), rows)
        if diffs:
            print(f"{PROG}: the stored findings differ from fresh ones; run '{findings.COMMAND}':\n  " + "\n  ".join(diffs),
                  file=sys.stderr)
            return 1
        print(f"{len(rows)} verdict rows agree with the stored ones")
        return 0
    path = findings.write(rows)
    print(f"{len(rows)} verdict rows -> {path}")
    from . import claims

    print(f"the landing page's verdict grids -> {claims.write_grids()}")
    print(f"the landing page's verdict sentences -> {claims.write_sentences()}")
    return 0


class _OutputFolderExit(Exception):
    """Raised by :func:`_check_output_folder`; :func:`main` prints its one line and exits 2."""


def _check_output_folder(folder) -> None:
    """Stop before any work when ``folder`` cannot be created or written (one line: the path and the reason)."""
    from .paths import OutputFolderError, writable_folder

    try:
        writable_folder(folder)
    except OutputFolderError as exc:
        raise _OutputFolderExit(str(exc)) from None


def _verify_cheapest(studies, max_seconds: str | None, path=None, quick: bool = False) -> int:
    """``study verify [--all] --cheapest``: one line per study (ok / skipped / FAILED) and a total; exit 1 if any
    failed (a skipped study is not a failure)."""
    import time

    from .studies import runner

    limit = None
    if max_seconds is not None:
        try:
            limit = float(max_seconds)
        except ValueError:
            limit = None
        if limit is None or not limit > 0:
            return _study_usage(f"--max-seconds must be a number > 0, got {max_seconds!r}")
    counts = {"ok": 0, "skipped": 0, "FAILED": 0}
    start = time.perf_counter()
    for study in studies:
        try:
            status, line = runner.verify_cheapest(study, max_seconds=limit, path=path, quick=quick)
        except (FileNotFoundError, ValueError) as exc:
            status, line = "FAILED", f"FAILED  {study.name}: {exc}"
        counts[status] += 1
        print(line, flush=True)
    print(f"total: {counts['ok']} ok, {counts['skipped']} skipped, {counts['FAILED']} FAILED of {len(studies)} "
          f"studies in {time.perf_counter() - start:.0f} s" + (f" (cheapest members recorded above {limit:g} s "
                                                                "skipped)" if limit is not None else ""))
    return 1 if counts["FAILED"] else 0


def _info() -> int:
    from . import __version__
    from .paths import ENV_VAR, data_dir

    where = data_dir()
    print(f"onelayer {__version__}")
    print(f"data directory: {where} ({'from $' + ENV_VAR if os.environ.get(ENV_VAR, '').strip() else 'the repository default'})"
          f"{'' if where.is_dir() else ' (does not exist yet)'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Usage errors exit with code 2 (raised as ``SystemExit`` by argparse).
    """
    import matplotlib

    matplotlib.use("Agg")  # files only: never open a window
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # options that belong to the benchmarks are handed on; elsewhere they are errors
        if args.command != "bench":
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.options = [*extra, *args.options]
    if args.data_dir is not None:
        if not args.data_dir.strip():
            parser.error("--data-dir must not be empty")
        from .paths import ENV_VAR

        os.environ[ENV_VAR] = args.data_dir  # read at call time by onelayer.paths, also by the study modules
    try:
        if args.command == "list":
            return _list(args)
        if args.command == "study":
            return _study(args, argv)
        if args.command == "bench":
            return _bench(args)
        if args.command == "info":
            return _info()
        if args.command == "findings":
            return _findings(args)
        return _make(args, args.subparser)
    except _OutputFolderExit as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
