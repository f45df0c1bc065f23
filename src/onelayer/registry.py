"""The registry of reproducible figures and tables (``python -m onelayer``).

Every figure or table that the book shows and that a reader may want to
regenerate outside a notebook is registered here under a short name. The
command line lists them (``python -m onelayer list``) and writes them
(``python -m onelayer make NAME --out DIR``): ``DIR/NAME.png`` for the figure,
``DIR/NAME.json`` for the numbers behind it and ``DIR/NAME.csv`` when the
numbers include a table.

**Adding a figure.** Decorate a function ``fn(quick: bool)`` that returns ``(figure, numbers)``::

    from onelayer.registry import register

    @register("walks-accuracy-vs-steps", "Test accuracy of GD from zero for p = 0.5, 0.7, 1")
    def accuracy_vs_steps(quick: bool):
        steps = 20 if quick else 200          # quick: seconds, for tests and CI
        hist = ...                            # call the package, not a notebook
        fig, ax = new_figure()
        ...
        return fig, {"p": [0.5, 0.7, 1.0],
                     "table": [{"step": t, "accuracy": a} for t, a in ...]}

The contract:

* ``name`` is lower-case words joined by ``-`` and starts with its part
  (``selector-``, ``walks-``, ``trees-``); ``description`` is one line.
* ``quick=True`` must finish in a few seconds (fewer steps, coarser grids);
  ``quick=False`` reproduces what the chapter shows.
* ``figure`` is a matplotlib :class:`~matplotlib.figure.Figure`, or ``None`` for
  a table only. It is drawn inside :func:`onelayer.plots.book_style` after
  :func:`onelayer.seeding.setup` with seed 0, and closed after saving.
* ``numbers`` is a dict of JSON-able values (numbers, strings, bools, lists,
  dicts; NumPy scalars and arrays are converted). Non-finite floats are written
  as the strings ``"nan"``, ``"inf"``, ``"-inf"``. An entry ``"table"`` holding
  a list of rows (dicts with the same keys) is also written as ``NAME.csv``.

**The numbers are regression-tested.** The quick-mode numbers of every registered
figure are stored in ``tests/data/figure_numbers/NAME.json``;
``tests/test_registry.py`` makes each figure in quick mode and compares its
``numbers`` with them (floats within relative 1e-6 / absolute 1e-12, everything
else equal; the few looser entries, such as wall-clock timings, are listed with
their reason in ``tools/figure_numbers.py`` and in the stored file). A new
figure, or an intended change in what one shows, needs its numbers (re)written:
``python -m tools.figure_numbers --update [NAME ...]`` (from the repository root); without ``--update`` the
command prints the differences.

**Where the functions live.** In the chapter modules of :mod:`onelayer.chapters`, one per chapter, which the
notebooks call too: :func:`discover` imports every module of that package, so registering a figure there needs no
other change: every figure the command line makes is a function a chapter's notebook calls.
"""

from __future__ import annotations

import difflib
import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import store

__all__ = [
    "FigureSpec",
    "Made",
    "UnknownFigureError",
    "CHAPTERS_PACKAGE",
    "register",
    "chapter_modules",
    "discover",
    "available",
    "get",
    "close_matches",
    "make",
]

#: The package of chapter modules: :func:`discover` imports every module in it (see :mod:`onelayer.chapters`).
CHAPTERS_PACKAGE = "onelayer.chapters"

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class FigureSpec:
    """One registered figure or table: its name, one-line description and function."""

    name: str
    description: str
    fn: Callable[[bool], tuple]
    module: str


@dataclass(frozen=True)
class Made:
    """What :func:`make` wrote: the files and the time the function took (seconds)."""

    name: str
    paths: tuple[Path, ...]
    seconds: float


class UnknownFigureError(ValueError):
    """Raised for a name that is not registered; ``matches`` holds close names."""

    def __init__(self, name: str, matches: list[str]):
        self.name = name
        self.matches = matches
        hint = f"; did you mean {', '.join(matches)}?" if matches else ""
        super().__init__(f"unknown figure {name!r}{hint} ('python -m onelayer list' shows them all)")


_REGISTRY: dict[str, FigureSpec] = {}


def register(name: str, description: str):
    """Decorator: register ``fn(quick) -> (figure or None, numbers)`` under ``name``.

    Parameters
    ----------
    name:
        Lower-case words joined by ``-`` (for example ``"walks-accuracy-vs-steps"``),
        unique across the book.
    description:
        One line shown by ``python -m onelayer list``.

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"name must be lower-case words joined by '-' (e.g. 'walks-accuracy'), got {name!r}")
    if not isinstance(description, str) or not description.strip() or "\n" in description.strip():
        raise ValueError(f"description of {name!r} must be one non-empty line, got {description!r}")

    def decorator(fn):
        if not callable(fn):
            raise TypeError(f"register({name!r}) must decorate a function, got {type(fn).__name__}")
        module = getattr(fn, "__module__", "?")
        old = _REGISTRY.get(name)
        # Re-registering the same function (a module imported twice or reloaded) is fine.
        if old is not None and (old.module, old.fn.__qualname__) != (module, fn.__qualname__):
            raise ValueError(f"figure name {name!r} is already registered by {old.module}.{old.fn.__qualname__}")
        _REGISTRY[name] = FigureSpec(name, description.strip(), fn, module)
        return fn

    return decorator


def chapter_modules() -> list[str]:
    """Every module of :data:`CHAPTERS_PACKAGE` (``onelayer.chapters.selector``, ``onelayer.chapters.walks.ring``, ...)."""
    package = importlib.import_module(CHAPTERS_PACKAGE)
    return sorted(info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{CHAPTERS_PACKAGE}.")
                  if not info.ispkg)


def discover() -> list[str]:
    """Import every chapter module (:func:`onelayer.registry.chapter_modules`) and return their names.

    A chapter module that fails to import raises, so a broken figure module is never silently ignored.
    """
    imported = []
    for module in chapter_modules():
        importlib.import_module(module)
        imported.append(module)
    return imported


def available() -> dict[str, FigureSpec]:
    """Every registered figure (after :func:`discover`), sorted by name."""
    discover()
    return dict(sorted(_REGISTRY.items()))


def close_matches(name: str, n: int = 3) -> list[str]:
    """Registered names that look like ``name`` (for error messages)."""
    names = list(available())
    found = difflib.get_close_matches(str(name), names, n=n, cutoff=0.6)
    found += [m for m in names if str(name) and str(name) in m and m not in found]
    return found[:n]


def get(name: str) -> FigureSpec:
    """The :class:`FigureSpec` registered as ``name``; :class:`UnknownFigureError` otherwise."""
    specs = available()
    if name not in specs:
        raise UnknownFigureError(name, close_matches(name))
    return specs[name]


def _table_rows(name: str, table) -> list[dict]:
    if not isinstance(table, (list, tuple)) or not table or not all(isinstance(r, Mapping) for r in table):
        raise TypeError(f"numbers['table'] of {name!r} must be a non-empty list of rows (dicts)")
    columns = list(table[0])
    for row in table:
        if list(row) != columns:
            raise ValueError(f"rows of numbers['table'] of {name!r} must all have the columns {columns}, got {list(row)}")
    return [store.to_jsonable(dict(row)) for row in table]


def make(name: str, out_dir, *, quick: bool = False) -> Made:
    """Run the figure ``name`` and write ``NAME.png``, ``NAME.json`` (and ``NAME.csv``) into ``out_dir``.

    Parameters
    ----------
    name:
        A registered name (see :func:`available`).
    out_dir:
        Directory for the files; created if needed.
    quick:
        Ask the function for its fast variant (for tests and CI).

    Returns
    -------
    Made
        The files written and the seconds the function took.
    """
    import matplotlib.pyplot as plt

    from . import __version__
    from .plots import book_style
    from .seeding import setup
    from .validation import check_bool

    quick = check_bool("quick", quick)
    spec = get(name)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"out_dir must be a directory, got the file {out}")
    out.mkdir(parents=True, exist_ok=True)

    with book_style():
        setup(0)
        start = time.perf_counter()
        result = spec.fn(quick)
        seconds = time.perf_counter() - start
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], Mapping)):
            raise TypeError(f"figure {name!r} must return (figure or None, dict of numbers), got {type(result).__name__}")
        fig, numbers = result
        paths = []
        try:
            if fig is not None:
                if not hasattr(fig, "savefig"):
                    raise TypeError(f"figure {name!r} returned a {type(fig).__name__}, not a matplotlib Figure or None")
                png = out / f"{name}.png"
                fig.savefig(png)
                paths.append(png)
        finally:
            if fig is not None and hasattr(fig, "savefig"):
                plt.close(fig)

    record = {
        "name": name,
        "description": spec.description,
        "quick": quick,
        "onelayer_version": __version__,
        "numbers": store.to_jsonable(dict(numbers)),
    }
    paths.append(store.write_json(out / f"{name}.json", record, kind="figure", indent=2))
    if "table" in numbers:
        paths.append(store.write_csv(out / f"{name}.csv", _table_rows(name, numbers["table"]), kind=f"figure-table {name}"))
    return Made(name, tuple(paths), seconds)
