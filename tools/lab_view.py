"""What a JupyterLab reader sees of a chapter: the bookkeeping cells' code collapsed, as the HTML book hides it.

The HTML book hides the code of the cells tagged ``hide-input`` or ``hide-cell`` (a "show" toggle), ``remove-input``
or ``remove-cell`` (no code at all); JupyterLab reads none of these tags. It reads ``metadata.jupyter.source_hidden``: a collapsed input, one click to
open. This tool sets that flag on exactly the cells the book hides and clears it elsewhere, so a Lab reader meets
the same code as a book reader: the papers' functions and the short cells that run them, with the printing, glue
and table plumbing folded away (their outputs stay visible).

Usage: python tools/lab_view.py [--check] book/part/chapter.ipynb [...]   (no notebook: every notebook in book/)

``tools/execute.py`` applies it to every notebook it executes; ``--check`` exits 1 naming the cells that differ
(``tests/test_reader_book.py`` runs the same check).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

#: The tags whose code the HTML book does not show.
HIDDEN_IN_BOOK = frozenset({"hide-input", "remove-input", "hide-cell", "remove-cell"})
ROOT = Path(__file__).resolve().parents[1]


def hidden_in_book(cell) -> bool:
    """Whether the HTML book hides this code cell's input."""
    return cell.get("cell_type") == "code" and bool(HIDDEN_IN_BOOK & set(cell.get("metadata", {}).get("tags", [])))


def collapsed_in_lab(cell) -> bool:
    """Whether JupyterLab opens this cell with its input collapsed."""
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden", False))


def apply(nb) -> int:
    """Collapse in Lab exactly the inputs the book hides (in place); returns the number of cells changed."""
    changed = 0
    for cell in nb.cells:
        want = hidden_in_book(cell)
        if want == collapsed_in_lab(cell):
            continue
        changed += 1
        meta = cell.setdefault("metadata", {})
        if want:
            meta.setdefault("jupyter", {})["source_hidden"] = True
        else:
            meta["jupyter"].pop("source_hidden", None)
            if not meta["jupyter"]:
                del meta["jupyter"]
    return changed


def mismatches(nb) -> list[int]:
    """Indices of the cells whose Lab view differs from the book's."""
    return [i for i, cell in enumerate(nb.cells) if hidden_in_book(cell) != collapsed_in_lab(cell)]


def notebooks() -> list[Path]:
    return sorted(p for p in (ROOT / "book").rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [Path(a) for a in argv if a != "--check"] or notebooks()
    status = 0
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        if check:
            bad = mismatches(nb)
            if bad:
                status = 1
                print(f"{path}: cells {bad} are shown in one of the book and JupyterLab and hidden in the other "
                      f"(run python tools/lab_view.py {path})")
        elif apply(nb):
            nbformat.write(nb, path)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
