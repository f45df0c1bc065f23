"""Every figure of the chapters is one registered figure: its caption links to its numbers and names its command.

Usage: python -m tools.figure_captions [--apply] [NOTEBOOK ...]   (default: every notebook in :data:`FIGURES`)

:data:`FIGURES` maps each chapter cell that outputs a PNG figure (notebook path and cell id) to the
name under which :mod:`onelayer.registry` makes the same figure (``python -m onelayer make NAME``).
:func:`caption` writes that cell's caption from the registry: the figure's one-line description,
``{download}`` links to ``book/numbers/NAME.json`` (and ``NAME.csv`` for a table), the full-mode
numbers the CLI writes (``tools/book_numbers.py``, ``make numbers``), and the command that
regenerates them. ``--apply`` sets ``metadata.mystnb.figure`` (``caption`` and ``name``; myst-nb then
wraps the image in a figure with that caption) in the notebooks and rewrites only those whose
metadata changes, in the layout Jupyter saves (one-space indent, sorted keys); outputs and sources
are left alone. Without ``--apply`` the command lists the cells whose caption is missing or differs and
exits 1 if there are any. ``tests/test_hygiene.py`` checks the same for every chapter.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tools import book_numbers

ROOT = Path(__file__).resolve().parents[1]
APPLY_COMMAND = "python -m tools.figure_captions --apply"

#: notebook (from the repository root) -> {cell id: registered figure name}, in the order of the cells.
FIGURES: dict[str, dict[str, str]] = {
    "book/selector.ipynb": {"f008a46d": "selector-error-vs-lambda", "1e53a094": "selector-default-state"},
    "book/walks/ring.ipynb": {"46124df3": "walks-transition-matrices", "75d8af85": "walks-mixing",
                              "89d51977": "walks-ring-explorer-default"},
    "book/walks/theorem31.ipynb": {"750ffb60": "walks-lemma-c1", "7453a3fe": "walks-parent-log-odds", "eed68364": "walks-fig4",
                                   "d570cf91": "walks-fig8", "444f905a": "walks-value-direction"},
    "book/walks/theorem41.ipynb": {"a350d7ab": "walks-fig5", "a91f85d6": "walks-fig5-sin-positions", "9a09a284": "walks-sensitivity",
                                   "df0ef1e0": "walks-roundoff-machine", "a443de33": "walks-roundoff-escape",
                                   "1c1904c0": "walks-perturbation-escape", "07badab5": "walks-fig9"},
    "book/walks/lab.ipynb": {"2087dbee": "walks-lab-default"},
    "book/walks/qa.ipynb": {"ebf39fcf": "walks-fig7", "c7e9c97b": "walks-fig10", "e53f135b": "walks-qa-explorer-default"},
    "book/walks/variations.ipynb": {"b6c3cf96": "walks-variations-scaling", "ef69037d": "walks-variations-lag",
                                    "06bcf5f6": "walks-variations-chain", "0055fb69": "walks-variations-doubly-stochastic",
                                    "ae1e2ea4": "walks-variations-chain-explorer"},
    "book/walks/random_init.ipynb": {"7c7c5eaa": "walks-fig6", "dc7bff9d": "walks-random-init-ordering", "f3b635ae": "walks-fig13",
                                     "e3bc3b07": "walks-fig6-closest-reading", "42c39c00": "walks-fig11", "5eda3a10": "walks-fig12",
                                     "c9d8ff2d": "walks-random-init-explorer-default"},
    "book/trees/backward_data.ipynb": {"8b055f4b": "trees-train-test-trees", "3de6c4e2": "trees-worked-example",
                                       "8ffb365b": "trees-token-matrix", "ea90aa29": "trees-sample-chain-default"},
    "book/trees/backward_construction.ipynb": {"5cd13907": "trees-loss-vs-lambda", "8e0c2baf": "trees-construction-attention",
                                               "8fdc502d": "trees-construction-attention-default"},
    "book/trees/backward_training.ipynb": {"bfdb55e3": "trees-h-entries", "3a472ed9": "trees-phases", "65e262a9": "trees-loss-rate"},
    "book/trees/backward_generalization.ipynb": {"c35af55c": "trees-generalization", "c9c7f7ab": "trees-generalization-embeddings"},
    "book/trees/forward_construction.ipynb": {"df307a4c": "trees-forward-attention", "991552d1": "trees-forward-scale-sweep",
                                              "de30d4eb": "trees-forward-attention-default"},
    "book/trees/forward_training.ipynb": {"14f559de": "trees-forward-scalars", "7cdfe1bf": "trees-forward-accuracy-by-type",
                                          "64a110c3": "trees-forward-roles", "cd2ed8fb": "trees-forward-rescaling"},
    "book/trees/forward_limits.ipynb": {"1d413d71": "trees-forward-loss-table", "376940a2": "trees-heads-depth",
                                       "90c9cdf6": "trees-forward-seeds"},
    "book/trees/lab.ipynb": {"6e81e7b4": "trees-lab-default"},
    "book/scaling.ipynb": {"1aaa5b0e": "walks-scaling", "c479ec3c": "walks-scaling-critical-m", "9d10e984": "trees-scaling"},
}

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


def caption(name: str) -> str:
    """The caption of the chapter figure made by ``name``: description, links to its numbers, the command."""
    from onelayer import registry

    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}")
    spec = registry.get(name)  # UnknownFigureError (a ValueError) for an unregistered name
    files = [f"{{download}}`{name}{suffix} <{book_numbers.link(name, suffix)}>`"
             for suffix in (".json", ".csv") if suffix == ".json" or book_numbers.numbers_path(name, ".csv").exists()]
    return (f"{escape(spec.description)}. Numbers: {' and '.join(files)}; "
            f"regenerate them and the figure with `{command(name)}`.")


def figure_cells(notebook: dict) -> list[tuple[int, dict]]:
    """``(index, cell)`` of every code cell of ``notebook`` (a parsed .ipynb) that outputs a PNG image."""
    if not isinstance(notebook, dict) or "cells" not in notebook:
        raise TypeError("notebook must be a parsed .ipynb (a dict with 'cells')")
    return [(i, c) for i, c in enumerate(notebook["cells"]) if c.get("cell_type") == "code"
            and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))]


def problems(path: Path) -> list[str]:
    """What is missing or out of date in the figure captions of one notebook (empty: nothing)."""
    rel = str(Path(path).resolve().relative_to(ROOT))
    mapping = FIGURES.get(rel, {})
    found = []
    cells = figure_cells(json.loads(Path(path).read_text()))
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
    if rel not in FIGURES:
        raise ValueError(f"path must be a notebook listed in FIGURES, got {rel}")
    text = path.read_text()
    nb = json.loads(text)
    for _, cell in figure_cells(nb):
        name = FIGURES[rel].get(cell.get("id"))
        if name is not None:
            cell["metadata"].setdefault("mystnb", {})["figure"] = {"caption": caption(name), "name": figure_label(name)}
    new = json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    if new != text:
        path.write_text(new)
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.figure_captions", description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="notebooks (default: every one in FIGURES)")
    parser.add_argument("--apply", action="store_true", help="write the captions into the notebooks")
    args = parser.parse_args(argv)
    paths = [Path(p) for p in args.notebooks] or [ROOT / rel for rel in FIGURES]
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
