"""Every figure of the chapters is one registered figure: its caption links to its numbers and names its command.

Usage: python -m tools.figure_captions [--apply] [NOTEBOOK ...]   (default: every notebook with a figure or scrubber)

:data:`FIGURES` maps each chapter cell that outputs a PNG figure (notebook path and cell id) to the
name under which :mod:`onelayer.registry` makes the same figure (``python -m onelayer make NAME``). It is derived:
for a chapter with a module in :mod:`onelayer.chapters`, a figure cell belongs to the registered function of that
module it calls (:func:`derived_figures`).
:func:`caption` writes that cell's caption from the registry: the figure's one-line description,
``{download}`` links to ``book/numbers/NAME.json`` (and ``NAME.csv`` for a table), the full-mode
numbers the CLI writes (``tools/book_numbers.py``, ``make numbers``), and the command that
regenerates them. ``--apply`` sets ``metadata.mystnb.figure`` (``caption`` and ``name``; myst-nb then
wraps the image in a figure with that caption) in the notebooks and rewrites only those whose
metadata changes, in the layout Jupyter saves (one-space indent, sorted keys); outputs and sources
are left alone. Without ``--apply`` the command lists the cells whose caption is missing or differs and
exits 1 if there are any. ``tests/test_hygiene.py`` checks the same for every chapter.

Scrubbers (:mod:`onelayer.scrubber`, the precomputed-frames players) are HTML outputs, which myst-nb does not
wrap in a figure. :data:`SCRUBBERS` maps each scrubber cell to the name under which the registry writes the
numbers of every frame: ``NAME-frames`` for the scrubber ``NAME`` (derived from the stored output,
:func:`derived_scrubbers`). Their caption is a markdown cell right
after the scrubber cell, marked ``metadata.onelayer.caption_for = <the scrubber cell's id>``: a
``{container}`` of class ``onelayer-scrubber-caption`` (id ``player-NAME``) holding the same text as a figure's
caption (:func:`scrubber_caption_source`). ``--apply`` inserts or updates these cells (a new cell gets an id
derived from the scrubber cell's) and removes caption cells whose scrubber is gone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

from tools import book_numbers

ROOT = Path(__file__).resolve().parents[1]
APPLY_COMMAND = "python -m tools.figure_captions --apply"



def chapter_module(rel: str) -> str:
    """The chapter module a notebook mirrors: ``book/walks/ring.ipynb`` -> ``onelayer.chapters.walks.ring``."""
    path = Path(rel)
    if path.suffix != ".ipynb" or not path.parts or path.parts[0] != "book":
        raise ValueError(f"rel must be a notebook under book/ (e.g. 'book/walks/ring.ipynb'), got {rel!r}")
    return ".".join(("onelayer", "chapters", *path.with_suffix("").parts[1:]))


def _notebooks() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def derived_figures(rel: str, notebook: dict | None = None) -> dict[str, str]:
    """{cell id: name} for each PNG figure cell of a chapter that has a module: the registered function of that
    module the cell calls (``selector.error_vs_lambda()`` -> ``selector-error-vs-lambda``). ``{}`` without a module."""
    import importlib.util

    from onelayer import registry

    module = chapter_module(rel)
    try:
        if importlib.util.find_spec(module) is None:
            return {}
    except ModuleNotFoundError:  # the part's package of chapter modules does not exist yet
        return {}
    specs = [spec for spec in registry.available().values() if spec.module == module]
    notebook = notebook if notebook is not None else json.loads((ROOT / rel).read_text())
    found = {}
    for _, cell in figure_cells(notebook):
        source = "".join(cell.get("source", ""))
        called = [spec.name for spec in specs if re.search(rf"\b{re.escape(spec.fn.__name__)}\(", source)]
        if len(called) == 1:
            found[cell.get("id")] = called[0]
    return found


def derived_scrubbers(notebook: dict) -> dict[str, str]:
    """{cell id: name} for each scrubber cell: the registered numbers of a scrubber ``NAME`` are ``NAME-frames``."""
    return {cell.get("id"): f"{scrubber_name(cell)}-frames" for _, cell in scrubber_cells(notebook)}


def _maps() -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    figures, scrubbers = {}, {}
    for rel in _notebooks():
        notebook = json.loads((ROOT / rel).read_text())
        cells = derived_figures(rel, notebook)
        if cells:
            figures[rel] = cells
        if found := derived_scrubbers(notebook):
            scrubbers[rel] = found
    return figures, scrubbers


_MAPS: tuple | None = None


def figures_map() -> dict[str, dict[str, str]]:
    """notebook -> {cell id: registered figure name}, for every PNG figure cell of the book (derived on first use)."""
    global _MAPS
    if _MAPS is None:
        _MAPS = _maps()
    return _MAPS[0]


def scrubbers_map() -> dict[str, dict[str, str]]:
    """notebook -> {scrubber cell id: registered name of its frames' numbers} (derived on first use)."""
    figures_map()
    return _MAPS[1]


def __getattr__(name: str):
    """``FIGURES`` is :func:`figures_map`, ``SCRUBBERS`` is :func:`scrubbers_map`."""
    if name == "FIGURES":
        return figures_map()
    if name == "SCRUBBERS":
        return scrubbers_map()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Class of the container that holds a scrubber's caption (styled in book/_static/onelayer.css).
SCRUBBER_CAPTION_CLASS = "onelayer-scrubber-caption"
_SCRUBBER_NAME = re.compile(r'data-scrubber="([^"]+)"')

_MARKUP = re.compile(r"([\\`*_\[\]<>{}$|#~^])")


def escape(text: str) -> str:
    """``text`` with the characters MyST would read as markup backslash-escaped (a description is plain text)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _MARKUP.sub(r"\\\1", text)


def command(name: str) -> str:
    """The command that regenerates the figure ``name`` and its numbers."""
    return f"python -m onelayer make {name} --out DIR"


def figure_label(name: str) -> str:
    """The figure's label (``mystnb.figure.name``), for ``{numref}`` and links: ``fig-NAME``."""
    return f"fig-{name}"


def _description(name: str) -> str:
    """The registry's description of ``name``, escaped for MyST."""
    from onelayer import registry

    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    return escape(registry.get(name).description)  # UnknownFigureError (a ValueError) for an unregistered name


def caption(name: str) -> str:
    """The caption of the chapter figure made by ``name``: description, links to its numbers, the command."""
    return f"{_description(name)}. {numbers_text(name)}; regenerate them and the figure with `{command(name)}`."


def numbers_text(name: str) -> str:
    """``Numbers: {download}`NAME.json <...>` [and ...csv]``, the links of a caption to the numbers of ``name``."""
    files = [f"{{download}}`{name}{suffix} <{book_numbers.link(name, suffix)}>`"
             for suffix in (".json", ".csv") if suffix == ".json" or book_numbers.numbers_path(name, ".csv").exists()]
    return f"Numbers: {' and '.join(files)}"


def player_label(name: str) -> str:
    """The id of a scrubber's caption container (for links): ``player-NAME``."""
    return f"player-{name}"


def scrubber_caption_source(name: str) -> str:
    """The markdown of the caption cell after the scrubber whose frames' numbers are registered as ``name``."""
    text = _description(name)
    return (f":::{{container}} {SCRUBBER_CAPTION_CLASS}\n:name: {player_label(name)}\n\n"
            f"{text}. {numbers_text(name)} (every frame's setting and what it plots); "
            f"regenerate them with `{command(name)}`.\n:::")


def scrubber_name(cell: dict) -> str | None:
    """The ``name`` of the scrubber a code cell outputs (``data-scrubber`` of its HTML), or ``None``."""
    if not isinstance(cell, dict):
        raise TypeError(f"cell must be a notebook cell (a dict), got {type(cell).__name__}")
    if cell.get("cell_type") != "code":
        return None
    for output in cell.get("outputs", []):
        html = output.get("data", {}).get("text/html")
        found = _SCRUBBER_NAME.search("".join(html) if isinstance(html, list) else html or "")
        if found:
            return found.group(1)
    return None


def scrubber_cells(notebook: dict) -> list[tuple[int, dict]]:
    """``(index, cell)`` of every code cell of ``notebook`` (a parsed .ipynb) that outputs a scrubber."""
    if not isinstance(notebook, dict) or "cells" not in notebook:
        raise TypeError("notebook must be a parsed .ipynb (a dict with 'cells')")
    return [(i, c) for i, c in enumerate(notebook["cells"]) if scrubber_name(c) is not None]


def caption_for(cell: dict) -> str | None:
    """The id of the scrubber cell whose caption ``cell`` is (``metadata.onelayer.caption_for``), or ``None``."""
    return cell.get("metadata", {}).get("onelayer", {}).get("caption_for")


def _source_lines(text: str) -> list[str]:
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + [lines[-1]]


def _scrubber_problems(rel: str, nb: dict) -> list[str]:
    mapping = scrubbers_map().get(rel, {})
    cells = nb["cells"]
    found = []
    ids = {c.get("id"): i for i, c in scrubber_cells(nb)}
    for cell_id in mapping:
        if cell_id not in ids:
            found.append(f"{rel}: SCRUBBERS names cell {cell_id}, which outputs no scrubber here")
    for cell_id, i in ids.items():
        name = mapping.get(cell_id)
        if name is None:
            found.append(f"{rel} cell {i} (id {cell_id}): a scrubber cell not in tools/figure_captions.py SCRUBBERS")
            continue
        if name != f"{scrubber_name(cells[i])}-frames":
            found.append(f"{rel} cell {i}: SCRUBBERS names {name}, the scrubber is {scrubber_name(cells[i])!r} "
                         f"(its numbers are registered as NAME-frames)")
        after = cells[i + 1] if i + 1 < len(cells) else {}
        if caption_for(after) != cell_id:
            found.append(f"{rel} cell {i} ({name}): no caption cell after it; {APPLY_COMMAND} {rel}")
        elif after.get("cell_type") != "markdown" or "".join(after.get("source", [])) != scrubber_caption_source(name):
            found.append(f"{rel} cell {i + 1} ({name}): caption out of date; {APPLY_COMMAND} {rel}")
    for i, cell in enumerate(cells):
        target = caption_for(cell)
        if target is not None and (i == 0 or cells[i - 1].get("id") != target or target not in mapping):
            found.append(f"{rel} cell {i}: a caption cell for {target}, which is not the scrubber cell before it; "
                         f"{APPLY_COMMAND} {rel}")
    return found


def _apply_scrubbers(rel: str, nb: dict) -> None:
    old_ids = {caption_for(c): c.get("id") for c in nb["cells"] if caption_for(c) is not None}
    nb["cells"] = [c for c in nb["cells"] if caption_for(c) is None]
    taken = {c.get("id") for c in nb["cells"]}
    for cell_id, name in scrubbers_map().get(rel, {}).items():
        index = next((i for i, c in scrubber_cells(nb) if c.get("id") == cell_id), None)
        if index is None:
            raise ValueError(f"{rel}: SCRUBBERS names cell {cell_id}, which outputs no scrubber here")
        new_id = old_ids.get(cell_id)
        if new_id is None or new_id in taken:
            digest = hashlib.sha1(f"caption of {cell_id}".encode()).hexdigest()
            new_id = next(digest[k:k + 8] for k in range(0, 33) if digest[k:k + 8] not in taken)
        taken.add(new_id)
        nb["cells"].insert(index + 1, {"cell_type": "markdown", "id": new_id, "metadata": {"onelayer": {"caption_for": cell_id}},
                                       "source": _source_lines(scrubber_caption_source(name))})


def figure_cells(notebook: dict) -> list[tuple[int, dict]]:
    """``(index, cell)`` of every code cell of ``notebook`` (a parsed .ipynb) that outputs a PNG image."""
    if not isinstance(notebook, dict) or "cells" not in notebook:
        raise TypeError("notebook must be a parsed .ipynb (a dict with 'cells')")
    return [(i, c) for i, c in enumerate(notebook["cells"]) if c.get("cell_type") == "code"
            and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]


def problems(path: Path) -> list[str]:
    """What is missing or out of date in the figure captions of one notebook (empty: nothing)."""
    rel = str(Path(path).resolve().relative_to(ROOT))
    mapping = figures_map().get(rel, {})
    nb = json.loads(Path(path).read_text())
    found = _scrubber_problems(rel, nb)
    cells = figure_cells(nb)
    ids = {c.get("id") for _, c in cells}
    for cell_id in mapping:
        if cell_id not in ids:
            found.append(f"{rel}: FIGURES names cell {cell_id}, which outputs no PNG figure here")
    for i, cell in cells:
        name = mapping.get(cell.get("id"))
        if name is None:
            found.append(f"{rel} cell {i} (id {cell.get('id')}): a figure cell not in tools/figure_captions.py FIGURES")
            continue
        want = {"caption": caption(name), "name": figure_label(name)}
        have = cell["metadata"].get("mystnb", {}).get("figure")
        if have != want:
            found.append(f"{rel} cell {i} ({name}): caption {'missing' if have is None else 'out of date'}; {APPLY_COMMAND} {rel}")
    return found


def apply(path: Path) -> bool:
    """Write the captions of :data:`FIGURES` into one notebook's cell metadata; ``True`` if the file changed."""
    path = Path(path)
    rel = str(path.resolve().relative_to(ROOT))
    if rel not in figures_map() and rel not in scrubbers_map():
        raise ValueError(f"path must be a notebook listed in FIGURES or SCRUBBERS, got {rel}")
    text = path.read_text()
    nb = json.loads(text)
    _apply_scrubbers(rel, nb)
    for _, cell in figure_cells(nb):
        name = figures_map().get(rel, {}).get(cell.get("id"))
        if name is not None:
            cell["metadata"].setdefault("mystnb", {})["figure"] = {"caption": caption(name), "name": figure_label(name)}
    new = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if new != text:
        path.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.figure_captions", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="notebooks (default: every one in FIGURES, SCRUBBERS)")
    parser.add_argument("--apply", action="store_true", help="write the captions into the notebooks")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.notebooks] or [ROOT / rel for rel in {**figures_map(), **scrubbers_map()}]
    found = []
    for path in paths:
        if args.apply:
            print(f"{'updated' if apply(path) else 'unchanged'} {path}")
        else:
            found += problems(path)
    print("\n".join(found) if found else ("" if args.apply else f"every figure in {len(paths)} notebook(s) has its caption"))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
