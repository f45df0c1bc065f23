"""What a reader of the built book meets, read from the committed notebooks and pages (no execution, no build).

Each test collects every offender of the whole book and names the chapter and cell, so that one run says what
each chapter still has to change (issue 23):

* no stored ipywidget output without ``remove-output`` (in the HTML it renders from saved state and looks live but
  is not: a dead widget);
* exercises: no empty ``{solution}``; a code cell after an exercise only inside a gated ``solution-start`` /
  ``solution-end`` pair, and visible there; nothing but the solution between those two markers (no heading, no
  exercise);
* no page mentions a file readers do not have ("the spec", ``trees.md``, ``walks.md``);
* at most :data:`MAX_VISIBLE_CODE_CELLS` visible code cells per chapter (reader first: prose and figures carry the
  story; a solution's code, folded in its dropdown, does not count);
* in JupyterLab, the code the book hides is collapsed (``metadata.jupyter.source_hidden``, set by
  ``tools/lab_view.py``) and the code it shows is not;
* no printed line wider than :data:`MAX_PRINT_WIDTH` characters (the monospace column at 784 px), and every HTML
  table output is an ``onelayer.tables.Table`` (class ``onelayer-table``) or the findings table.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"

#: Visible code cells a chapter may have (cells without remove-input/remove-cell/hide-input/hide-cell).
MAX_VISIBLE_CODE_CELLS = 6
#: The widest printed line (characters) that fits the 784 px text column in the book's monospace font.
MAX_PRINT_WIDTH = 90
#: Tags that keep a cell's code from the reader's first view.
HIDING_TAGS = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
#: Mentions of files the readers do not have.
PRIVATE_FILES = re.compile(r"\bthe spec\b|\bour spec\b|\btrees\.md\b|\bwalks\.md\b", re.I)
#: HTML table classes a reader may meet: onelayer.tables.Table and the verdict grids of onelayer.claims.grid_html.
TABLE_CLASSES = {"onelayer-table", "onelayer-verdict-grid"}


@cache
def notebooks(book: Path = BOOK) -> tuple[Path, ...]:
    return tuple(sorted(p for p in book.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts))


@cache
def cells(path: Path) -> tuple[dict, ...]:
    return tuple(json.loads(path.read_text())["cells"])


def name(path: Path) -> str:
    """``walks/theorem31`` for ``book/walks/theorem31.ipynb`` (the document, relative to the nearest ``book``)."""
    parts = path.with_suffix("").parts
    return "/".join(parts[len(parts) - parts[::-1].index("book"):])


def source(cell: dict) -> str:
    return "".join(cell["source"])


def tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def where(path: Path, i: int, cell: dict) -> str:
    return f"{name(path)} cell {i} (id {cell.get('id', '?')})"


def is_chapter(path: Path) -> bool:
    """A chapter: a notebook other than a part's introduction (``index``, ``forward_index``) and the Findings page."""
    return not path.stem.endswith("index") and name(path) != "findings"


def report(offenders: list[str], what: str) -> str:
    by_chapter: dict[str, list[str]] = {}
    for line in offenders:
        by_chapter.setdefault(line.split(" ", 1)[0], []).append(line)
    summary = ", ".join(f"{chapter} ({len(lines)})" for chapter, lines in sorted(by_chapter.items()))
    return f"{len(offenders)} {what} in {summary}:\n" + "\n".join(offenders)


# --- ipywidgets -------------------------------------------------------------------------------------------------------


def widget_offenders(book: Path = BOOK) -> list[str]:
    out = []
    for path in notebooks(book):
        for i, cell in enumerate(cells(path)):
            if cell["cell_type"] != "code" or tags(cell) & {"remove-output", "remove-cell"}:
                continue
            if any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
                out.append(f"{where(path, i, cell)}: stores an ipywidget output without the remove-output tag")
    return out


def test_no_stored_widget_reaches_the_page():
    offenders = widget_offenders()
    assert not offenders, report(offenders, "dead widgets (tag the cell remove-output and say above it that "
                                            "JupyterLab opens the sliders; show the precomputed figure or player)")


def widget_call_offenders(book: Path = BOOK) -> list[str]:
    """A cell that opens a widget shows nothing on the page (its output is removed), so its code would stand there with
    no output (issue 32): it is removed whole, and the markdown cell before it names the call and says it needs a
    kernel."""
    out = []
    for path in notebooks(book):
        cs = cells(path)
        for i, cell in enumerate(cs):
            if cell["cell_type"] != "code" or not any(WIDGET_MIME in o.get("data", {}) for o in cell.get("outputs", [])):
                continue
            if not ({"remove-input", "remove-cell"} & tags(cell)):
                out.append(f"{where(path, i, cell)}: its code shows on the page with no output (tag it remove-input)")
            call = source(cell).strip().splitlines()[0].split("=")[-1].strip()
            note = source(cs[i - 1]) if i and cs[i - 1]["cell_type"] == "markdown" else ""
            if "JupyterLab" not in note or f"`{call}`" not in note:
                out.append(f"{where(path, i, cell)}: the cell before does not say that JupyterLab's `{call}` opens it")
    return out


def test_widget_cells_are_left_out_with_a_note():
    offenders = widget_call_offenders()
    assert not offenders, report(offenders, "widget cells shown without output or without their note")


# --- exercises ----------------------------------------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[\w-]+)\}(?P<arg>.*)$")
_HEADING = re.compile(r"^#{1,6} ")


def _directives(text: str) -> list[tuple[str, str, str]]:
    """(name, argument, body) of each top-level fenced directive in a markdown cell (body without option lines)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence, body, j = m.group("fence"), [], i + 1
        while j < len(lines) and lines[j].strip() != fence:
            body.append(lines[j])
            j += 1
        text_lines = [b for b in body if not re.match(r"^\s*:[\w-]+:", b)]
        out.append((m.group("name"), m.group("arg").strip(), "\n".join(text_lines).strip()))
        i = j + 1
    return out


def shows_nothing(cell: dict) -> bool:
    """A code cell the page does not show: removed, or hidden input with only glue records (or nothing) as output."""
    if tags(cell) & {"remove-cell"}:
        return True
    if not tags(cell) & {"remove-input"}:
        return False
    return bool(tags(cell) & {"remove-output"}) or all(
        all(key.startswith("application/papermill.record/") for key in o.get("data", {}))
        and o.get("output_type") == "display_data" for o in cell.get("outputs", []))


def exercise_offenders(path: Path) -> list[str]:
    """Empty solutions, code outside a gated solution after an exercise, and non-solution content inside one."""
    out = []
    after_exercise = None  # where the last exercise is, while no heading has closed its section
    gated = None  # the open solution-start
    for i, cell in enumerate(cells(path)):
        here = where(path, i, cell)
        if cell["cell_type"] == "markdown":
            text = source(cell)
            found = _directives(text)
            names = [n for n, _, _ in found]
            if gated is not None:
                if "solution-end" in names:
                    gated = None
                    continue
                if any(_HEADING.match(line) for line in text.splitlines()):
                    out.append(f"{here}: a heading inside the gated solution opened at {gated} (close it first)")
                if {"exercise", "exercise-start", "solution", "solution-start"} & set(names):
                    out.append(f"{here}: an exercise or another solution inside the gated solution opened at {gated}")
                continue
            for n, arg, body in found:
                if n in ("exercise", "exercise-start"):
                    after_exercise = here
                elif n == "solution" and not body:
                    out.append(f"{here}: the solution {arg or '(no label)'} is empty")
                elif n == "solution-start":
                    gated = here
                elif n == "solution-end":
                    out.append(f"{here}: solution-end without a solution-start")
            if gated is None and after_exercise and any(_HEADING.match(line) for line in text.splitlines()) \
                    and not names:
                after_exercise = None
        elif cell["cell_type"] == "code" and gated is not None and tags(cell) & {"remove-input", "remove-cell"}:
            out.append(f"{here}: the solution's code is hidden (remove-input/remove-cell) inside the gated solution "
                       f"opened at {gated}: the reader opening the solution wants to see it")
        elif cell["cell_type"] == "code" and gated is None and after_exercise is not None \
                and source(cell).strip() and not shows_nothing(cell):
            out.append(f"{here}: a code cell after the exercise at {after_exercise} is not inside a gated "
                       "solution (solution-start ... solution-end), so it gives the answer away")
    if gated is not None:
        out.append(f"{name(path)}: the gated solution opened at {gated} has no solution-end")
    return out


def test_exercises_keep_their_solutions_gated_and_non_empty():
    offenders = [line for path in notebooks() for line in exercise_offenders(path)]
    assert not offenders, report(offenders, "exercise problems")


# --- files the reader does not have -------------------------------------------------------------------------------------


def private_file_offenders(book: Path = BOOK) -> list[str]:
    out = []
    for path in notebooks(book):
        for i, cell in enumerate(cells(path)):
            texts = [source(cell)] + ["".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                                      + "".join(o.get("data", {}).get("text/markdown", ""))
                                      for o in cell.get("outputs", [])]
            for text in texts:
                for m in PRIVATE_FILES.finditer(text):
                    out.append(f"{where(path, i, cell)}: mentions {m.group(0)!r}")
    for path in sorted(book.rglob("*.md")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in PRIVATE_FILES.finditer(line):
                out.append(f"{name(path)} line {n}: mentions {m.group(0)!r}")
    return out


def test_no_page_mentions_files_readers_do_not_have():
    offenders = private_file_offenders()
    assert not offenders, report(offenders, "mentions of files readers do not have (cite the paper, the OpenReview "
                                            "discussion or a summary from book/references.bib instead)")


#: Narration of the book's own history, which a reader has no use for (issue 32): "The first version of this chapter
#: counted ...", "An earlier version computed ...".
REVISION_HISTORY = re.compile(r"\b(first|earlier|previous|older|old) version\b|\bthis chapter (used to|previously)\b"
                              r"|\bwe (reran|re-ran|changed|fixed)\b|\bthe new runs\b", re.I)


def revision_history_offenders(book: Path = BOOK) -> list[str]:
    out = []
    for path in notebooks(book):
        for i, cell in enumerate(cells(path)):
            if cell["cell_type"] == "markdown":
                out += [f"{where(path, i, cell)}: {m.group(0)!r}" for m in REVISION_HISTORY.finditer(source(cell))]
    for path in sorted(book.rglob("*.md")):
        out += [f"{path.relative_to(book)}: {m.group(0)!r}" for m in REVISION_HISTORY.finditer(path.read_text())]
    return out


def test_no_revision_history_in_reader_text():
    offenders = revision_history_offenders()
    assert not offenders, report(offenders, "passages about earlier versions of the book (say what holds now)")


# --- visible code -------------------------------------------------------------------------------------------------------


def in_gated_solutions(path: Path) -> set[int]:
    """Indices of the cells between a ``solution-start`` and its ``solution-end`` (folded in a dropdown)."""
    inside, out = False, set()
    for i, cell in enumerate(cells(path)):
        names = [n for n, _, _ in _directives(source(cell))] if cell["cell_type"] == "markdown" else []
        if "solution-start" in names:
            inside = True
        elif "solution-end" in names:
            inside = False
        elif inside:
            out.add(i)
    return out


def visible_code_cells(path: Path) -> list[int]:
    """Code cells a reader sees unfolded: not tagged remove/hide, and not inside a gated (dropdown) solution."""
    folded = in_gated_solutions(path)
    return [i for i, c in enumerate(cells(path))
            if c["cell_type"] == "code" and source(c).strip() and not tags(c) & HIDING_TAGS and i not in folded]


def visible_counts(book: Path = BOOK) -> dict[str, int]:
    return {name(p): len(visible_code_cells(p)) for p in notebooks(book) if is_chapter(p)}


def test_chapters_show_few_code_cells():
    counts = visible_counts()
    over = {chapter: n for chapter, n in counts.items() if n > MAX_VISIBLE_CODE_CELLS}
    table = ", ".join(f"{chapter} {n}" for chapter, n in sorted(counts.items()))
    assert not over, (f"{len(over)} chapters show more than {MAX_VISIBLE_CODE_CELLS} code cells (tag bookkeeping cells "
                      f"remove-input, secondary ones hide-input): " + ", ".join(f"{c} {n}" for c, n in sorted(over.items()))
                      + f"\nall visible counts: {table}")


def test_every_notebook_collapses_in_lab_what_the_book_hides():
    import nbformat

    from tools import lab_view

    offenders = [f"{name(p)}: cells {bad}" for p in notebooks()
                 if (bad := lab_view.mismatches(nbformat.read(p, as_version=4)))]
    assert not offenders, ("cells shown in one of the book and JupyterLab and hidden in the other (run python "
                           "tools/lab_view.py): " + "; ".join(offenders))


def test_lab_view_collapses_exactly_the_code_the_book_hides():
    """tools/lab_view.py on planted cells: a hidden cell without the flag and a shown cell with it are both found, and
    apply() mends both (test_every_notebook_collapses_in_lab_what_the_book_hides checks the book's notebooks)."""
    import nbformat

    from tools import lab_view

    assert lab_view.HIDDEN_IN_BOOK == HIDING_TAGS
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("x", metadata={"jupyter": {"source_hidden": True}}),
        nbformat.v4.new_code_cell("y = 2", metadata={"tags": ["remove-input"], "jupyter": {"source_hidden": True}}),
        nbformat.v4.new_markdown_cell("text", metadata={"tags": ["remove-cell"]}),
    ])
    assert lab_view.mismatches(nb) == [0, 1]
    assert lab_view.apply(nb) == 2 and lab_view.mismatches(nb) == []
    assert "jupyter" not in nb.cells[1].metadata


# --- printed text and tables --------------------------------------------------------------------------------------------

_TABLE_TAG = re.compile(r"<table\b[^>]*>", re.I)
_CLASS = re.compile(r"""class\s*=\s*["']([^"']*)["']""", re.I)


def output_offenders(book: Path = BOOK) -> list[str]:
    out = []
    for path in notebooks(book):
        for i, cell in enumerate(cells(path)):
            if cell["cell_type"] != "code" or tags(cell) & {"remove-output", "remove-cell"}:
                continue
            for o in cell.get("outputs", []):
                if o.get("output_type") == "stream" and o.get("name") == "stdout":
                    widest = max((len(line) for line in "".join(o["text"]).splitlines()), default=0)
                    if widest > MAX_PRINT_WIDTH:
                        out.append(f"{where(path, i, cell)}: prints a line of {widest} characters "
                                   f"(> {MAX_PRINT_WIDTH}: use show_table or glue the numbers into the prose)")
                html = "".join(o.get("data", {}).get("text/html", ""))
                for tag in _TABLE_TAG.findall(html):
                    found = _CLASS.search(tag)
                    classes = set(found.group(1).split()) if found else set()
                    if not classes & TABLE_CLASSES:
                        out.append(f"{where(path, i, cell)}: an HTML table of class {' '.join(sorted(classes)) or '(none)'}"
                                   " (show it with onelayer.chapter.show_table)")
                        break
    return out


def test_printed_lines_fit_the_column_and_tables_are_the_books():
    offenders = output_offenders()
    assert not offenders, report(offenders, "wide printouts or foreign tables")


# --- the checks themselves ----------------------------------------------------------------------------------------------


def _nb(tmp_path, cell_list, stem="chapter") -> Path:
    path = tmp_path / "book" / "part" / f"{stem}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cell_list, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def _md(text, **meta):
    return {"cell_type": "markdown", "id": "m", "metadata": meta, "source": [text]}


def _code(text="x = 1", tag_list=(), outputs=()):
    return {"cell_type": "code", "id": "c", "metadata": {"tags": list(tag_list)}, "source": [text],
            "outputs": list(outputs), "execution_count": None}


def test_exercise_check_catches_what_it_should(tmp_path):
    ok = _nb(tmp_path, [
        _md(":::{exercise}\n:label: ex-a\nDo it.\n:::"),
        _md(":::{solution-start} ex-a\n:class: dropdown\n:::\nThe answer."),
        _code(),
        _md(":::{solution-end}\n:::"),
        _md(":::{exercise}\n:label: ex-b\nAgain.\n:::\n\n:::{solution} ex-b\n:class: dropdown\nTwo.\n:::"),
        _code(tag_list=["remove-input"], outputs=[{"output_type": "display_data", "metadata": {},
                                                    "data": {"application/papermill.record/text/plain": "1"}}]),
        _md("## Key takeaways"),
        _code(),
    ])
    assert exercise_offenders(ok) == []
    bad = _nb(tmp_path, [
        _md(":::{exercise}\n:label: ex-a\nDo it.\n:::\n\n:::{solution} ex-a\n:class: dropdown\n:::"),
        _code(),
        _md(":::{solution-start} ex-a\n:::"),
        _code(tag_list=["remove-input"]),
        _md("## Key takeaways"),
    ], stem="bad")
    found = exercise_offenders(bad)
    assert any("is empty" in f for f in found)
    assert any("not inside a gated" in f for f in found)
    assert any("a heading inside" in f for f in found)
    assert any("no solution-end" in f for f in found)
    assert any("code is hidden" in f for f in found)


def test_output_checks_catch_what_they_should(tmp_path):
    _nb(tmp_path, [
        _code(outputs=[{"output_type": "stream", "name": "stdout", "text": ["x" * 91 + "\n"]}]),
        _code(outputs=[{"output_type": "display_data", "data": {"text/html": ['<table class="dataframe">'],
                                                                 WIDGET_MIME: {"model_id": "1"}}, "metadata": {}}]),
        _code(tag_list=["remove-output"], outputs=[{"output_type": "display_data", "data": {WIDGET_MIME: {}}}]),
        _code(outputs=[{"output_type": "display_data", "data": {"text/html": ['<table class="onelayer-table x">']}}]),
        _md("As the spec says, see walks.md."),
    ])
    book = tmp_path / "book"
    assert len(widget_offenders(book)) == 1
    found = output_offenders(book)
    assert len(found) == 2 and "91 characters" in found[0] and "dataframe" in found[1]
    assert len(private_file_offenders(book)) == 2
    assert visible_counts(book) == {"part/chapter": 4}
    gated = _nb(tmp_path, [_md(":::{solution-start} ex-a\n:::"), _code(), _md(":::{solution-end}\n:::"), _code()],
                stem="gated")
    assert visible_code_cells(gated) == [3]


# --- stored images: scrubber frames and figures -------------------------------------------------------------------------

#: Figures are saved with a tight bounding box, which may grow a MAX_WIDTH figure by a label that sticks out.
TIGHT_BBOX_SLACK = 1.03
_DATA_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def png_info(data: bytes) -> tuple[int, int, float | None]:
    """(width px, height px, dpi from the pHYs chunk or None) of PNG bytes."""
    import struct

    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    at = data.find(b"pHYs")
    dpi = None
    if at > 0:
        x, _, unit = struct.unpack(">IIB", data[at + 4:at + 13])
        dpi = x * 0.0254 if unit == 1 else None
    return width, height, dpi


def image_offenders(book: Path = BOOK) -> list[str]:
    """Scrubber frames saved below FRAME_DPI or players over MAX_BYTES; figure PNGs wider than MAX_WIDTH at their dpi."""
    import base64
    import math

    from onelayer import plots, scrubber

    out = []
    for path in notebooks(book):
        for i, cell in enumerate(cells(path)):
            if cell["cell_type"] != "code" or tags(cell) & {"remove-output", "remove-cell"}:
                continue
            for o in cell.get("outputs", []):
                data = o.get("data", {})
                html = "".join(data.get("text/html", ""))
                if 'class="onelayer-scrubber"' in html:
                    dpis = {round(png_info(base64.b64decode(m))[2] or 0) for m in _DATA_PNG.findall(html)}
                    if dpis and min(dpis) < scrubber.FRAME_DPI:
                        out.append(f"{where(path, i, cell)}: scrubber frames at {min(dpis)} dpi "
                                   f"(< FRAME_DPI = {scrubber.FRAME_DPI})")
                    if len(html.encode()) > scrubber.MAX_BYTES:
                        out.append(f"{where(path, i, cell)}: scrubber of {len(html.encode()) / 1e6:.1f} MB "
                                   f"(> MAX_BYTES = {scrubber.MAX_BYTES / 1e6:.1f} MB)")
                if "image/png" in data:
                    width, _, dpi = png_info(base64.b64decode("".join(data["image/png"])))
                    dpi = dpi or plots.BOOK_STYLE["savefig.dpi"]
                    if width > math.ceil(plots.MAX_WIDTH * TIGHT_BBOX_SLACK * dpi):
                        out.append(f"{where(path, i, cell)}: a figure {width / dpi:.2f} in wide at {dpi:.0f} dpi "
                                   f"(> MAX_WIDTH = {plots.MAX_WIDTH} in)")
    return out


def test_stored_images_are_legible():
    offenders = image_offenders()
    assert not offenders, report(offenders, "stored images too small or too wide (re-execute the chapter)")
