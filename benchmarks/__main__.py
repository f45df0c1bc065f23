"""Run the benchmarks: ``python -m benchmarks [--quick] [--only NAME ...] [--out DIR]``.

Discovers ``benchmarks/bench_<name>.py``, runs each module's ``run(quick)``,
prints one table (ours vs reference: ms per step, speed-up, peak MB, memory
ratio) and writes ``latest.json`` and ``latest.md`` to ``benchmarks/results``
(or ``--out``). A module that is missing, fails to import, raises or returns
malformed rows is reported and the others still run; the exit code is then 1.

With ``--only`` the results of the other modules already in ``latest.json``
are kept (each module's entry says when it was measured and whether in quick
mode); a run without ``--only`` replaces the file.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from benchmarks.harness import check_row, machine  # noqa: E402

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
#: Modules the book expects; one that does not exist is reported as missing.
EXPECTED = ("core", "sweeps", "walks", "trees_backward", "trees_forward")
#: When both peaks are below this (MB) they are within allocator noise: no memory ratio is shown.
MEMORY_FLOOR_MB = 0.1

HEADER = (
    "benchmark",
    "configuration",
    "ours (ms/step)",
    "reference (ms/step)",
    "speed-up",
    "ours peak (MB)",
    "reference peak (MB)",
    "memory ratio",
)


@dataclass
class ModuleResult:
    """The outcome of one benchmark module."""

    name: str
    status: str  # "ok", "failed" or "missing"
    seconds: float = 0.0
    quick: bool = False
    created: str = ""
    rows: list[dict] = field(default_factory=list)
    error: str = ""


def discover(directory: Path = HERE) -> list[str]:
    """Names of the expected modules and of every ``bench_<name>.py`` present, in that order."""
    present = sorted(p.stem[len("bench_"):] for p in directory.glob("bench_*.py"))
    return list(EXPECTED) + [n for n in present if n not in EXPECTED]


def load(name: str):
    """Import ``benchmarks.bench_<name>``."""
    return importlib.import_module(f"benchmarks.bench_{name}")


def run_module(name: str, quick: bool, loader: Callable[[str], object] | None = None) -> ModuleResult:
    """Import (with ``loader``, default :func:`load`) and run one module; never raises (failures are recorded)."""
    created = _dt.datetime.now().isoformat(timespec="seconds")
    start = time.perf_counter()
    result = ModuleResult(name=name, status="failed", quick=quick, created=created)
    try:
        module = (loader or load)(name)
    except ModuleNotFoundError as exc:
        if exc.name == f"benchmarks.bench_{name}":
            result.status, result.error = "missing", f"no module benchmarks/bench_{name}.py"
        else:
            result.error = traceback.format_exc()
        return result
    except Exception:
        result.error = traceback.format_exc()
        return result
    run = getattr(module, "run", None)
    if not callable(run):
        result.error = f"benchmarks/bench_{name}.py has no function run(quick: bool = False) -> list[dict]"
        return result
    try:
        import onelayer

        onelayer.setup(0)
        rows = run(quick=quick)
        if not isinstance(rows, list) or not rows:
            raise TypeError(f"run() must return a non-empty list of row dicts, got {rows!r:.80}")
        result.rows = [check_row(dict(row)) for row in rows]
        result.status = "ok"
    except Exception:
        result.error = traceback.format_exc()
    finally:
        result.seconds = round(time.perf_counter() - start, 2)
    return result


def config_text(config) -> str:
    """A row's configuration as table text (a mapping becomes ``key=value, ...``)."""
    if isinstance(config, Mapping):
        return ", ".join(f"{k}={v}" for k, v in config.items())
    return str(config)


def _num(value, fmt: str, scale: float = 1.0, suffix: str = "") -> str:
    return "–" if value is None else f"{value * scale:{fmt}}{suffix}"


def _memory_ratio(row: dict) -> float | None:
    ours, ref = row.get("ours_peak_mb"), row.get("reference_peak_mb")
    if ours is None or ref is None or ours <= 0 or max(ours, ref) < MEMORY_FLOOR_MB:
        return None
    return ref / ours


def table_lines(results: Sequence[ModuleResult]) -> list[str]:
    """The results as a Markdown table (one line per row) plus one line per failed module."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "|".join("---" for _ in HEADER) + "|"]
    for res in results:
        if res.name == BOOK:
            continue
        for row in res.rows:
            cells = (
                row["name"] + (" (quick)" if res.quick else ""),
                config_text(row["config"]),
                _num(row["ours_s"], ".4g", 1e3),
                _num(row["reference_s"], ".4g", 1e3),
                _num(row["ratio"], ".3g", suffix="×"),
                _num(row["ours_peak_mb"], ".3g"),
                _num(row["reference_peak_mb"], ".3g"),
                _num(_memory_ratio(row), ".3g", suffix="×"),
            )
            lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    if not any(res.rows for res in results if res.name != BOOK):
        lines = []  # the book's table alone
    for res in results:
        if res.name == BOOK and res.rows:
            lines += ["", *book_lines(res)] if lines else book_lines(res)
    problems = [r for r in results if r.status != "ok"]
    if problems:
        lines.append("")
        for res in problems:
            last = res.error.strip().splitlines()[-1] if res.error.strip() else res.status
            lines.append(f"- `bench_{res.name}`: **{res.status}**: {last}")
    return lines


#: The module whose rows are chapter times against their budgets (``bench_book``), shown as a table of their own.
BOOK = "book"


def book_lines(res: ModuleResult) -> list[str]:
    """``bench_book``'s rows: each notebook's seconds against its budget (headroom = budget / seconds)."""
    first = res.rows[0]
    load = first.get("load_average")
    lines = [
        f"Book execution{' (quick)' if res.quick else ''}: seconds under nbval on {first.get('cpu') or 'this machine'}"
        + (f", load average {load[0]:g} at the end of the run" if load else "")
        + f" (from `{Path(first.get('source', 'runtime.json')).name}`); headroom is budget / seconds, above 1 within "
        "budget. Measured, not judged: `make test` passes or fails on outputs only.",
        "",
        "| notebook | seconds | budget (s) | headroom |",
        "|---|---|---|---|",
    ]
    for row in res.rows:
        flag = "" if row.get("within_budget", True) else " (over)"
        lines.append(f"| {row['config']} | {row['ours_s']:.1f} | {row['reference_s']:g} | {row['ratio']:.2f}×{flag} |")
    return lines


def markdown(results: Sequence[ModuleResult], info: dict) -> str:
    """The Markdown the book's runtime appendix includes."""
    dates = sorted({r.created[:10] for r in results if r.created})
    load = info.get("load_average")
    intro = (
        f"Measured with `python -m benchmarks` ({', '.join(dates) or 'no date'}) on {info.get('cpu_count')} CPUs, "
        f"Python {info.get('python')}, torch {info.get('torch')}, {info.get('torch_threads')} torch thread(s)"
        + (f", load average {load[0]}" if load else "")
        + ". Times are the best of several runs, in milliseconds per step; speed-up is reference time / our time; "
        "peak memory is the rise of the resident set size during one call, in a child process; "
        f"memory ratio is reference peak / our peak (– where both peaks are below {MEMORY_FLOOR_MB} MB, "
        "which is within allocator noise, or were not measured)."
    )
    return intro + "\n\n" + "\n".join(table_lines(results)) + "\n"


def write(results: Sequence[ModuleResult], out: Path, *, merge: bool) -> tuple[Path, Path]:
    """Write ``latest.json`` and ``latest.md`` to ``out`` (merging with the old JSON if asked)."""
    out.mkdir(parents=True, exist_ok=True)
    path_json, path_md = out / "latest.json", out / "latest.md"
    modules: dict[str, dict] = {}
    if merge and path_json.exists():
        try:
            modules = json.loads(path_json.read_text()).get("modules", {})
        except (json.JSONDecodeError, AttributeError):
            modules = {}
    for res in results:
        modules[res.name] = asdict(res)
    info = machine()
    payload = {
        "created": _dt.datetime.now().isoformat(timespec="seconds"),
        "machine": info,
        "columns": {
            "ours_s": "seconds per step, ours (best of repeats)",
            "reference_s": "seconds per step, reference",
            "ratio": "reference_s / ours_s (speed-up of ours)",
            "ours_peak_mb": "peak extra RSS of one call of ours, MB",
            "reference_peak_mb": "peak extra RSS of one call of the reference, MB",
        },
        "modules": modules,
    }
    path_json.write_text(json.dumps(payload, indent=1) + "\n")
    order = discover()
    merged = [ModuleResult(**m) for m in sorted(modules.values(), key=lambda m: _position(order, m["name"]))]
    path_md.write_text(markdown(merged, info))
    return path_json, path_md


def _position(order: list[str], name: str) -> tuple[int, str]:
    return (order.index(name) if name in order else len(order), name)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (seconds, for testing)")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run only bench_NAME (repeatable; 'core' or 'bench_core')")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"results directory (default {RESULTS})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 all ran, 1 some failed or missing, 2 usage error)."""
    parser = _parser()
    args = parser.parse_args(argv)
    from onelayer.paths import OutputFolderError, writable_folder

    try:
        writable_folder(args.out)
    except OutputFolderError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    names = discover()
    if args.only:
        wanted = [n[len("bench_"):] if n.startswith("bench_") else n for n in args.only]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            print(f"unknown benchmark(s) {unknown}; available: {names}", file=sys.stderr)
            return 2
        names = list(dict.fromkeys(wanted))
    results = []
    for name in names:
        print(f"running bench_{name}{' (quick)' if args.quick else ''} ...", flush=True)
        res = run_module(name, args.quick)
        print(f"  {res.status} in {res.seconds:.1f} s", flush=True)
        if res.status == "failed":
            print(res.error, file=sys.stderr)
        results.append(res)
    print()
    print("\n".join(table_lines(results)))
    path_json, path_md = write(results, args.out, merge=bool(args.only))
    print(f"\nwrote {path_json} and {path_md}")
    return 0 if all(r.status == "ok" for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
