"""The book's findings: every chapter's verdict rows, collected and rendered as one HTML table.

Each chapter module of :mod:`onelayer.chapters` defines ``verdict_rows()`` (keys :data:`KEYS`; the claims and their
rules are in :mod:`onelayer.verdicts`); nothing here types a verdict. :func:`collect` imports the chapter modules
(the same walk as the figure registry), calls each one's ``verdict_rows()`` in the book's order and adds the key
``doc`` (the chapter's document, e.g. ``walks/theorem31``).
:mod:`onelayer.claims` groups the rows into claims and renders them (the Findings page, the parts' grids).

Collecting runs every chapter's deciding experiments (about a minute on one core), too long to repeat on every page
that shows a verdict: :func:`write` stores the rows in ``book/data/findings.json`` (``python -m onelayer
findings``, or ``make findings``), the Findings page and the parts' introductions render :func:`load`, and
``tests/test_findings.py`` collects them afresh and fails when the stored rows differ (the command to run is in the
message).

Each row has a stable ``id`` (:func:`row_ids`, ``<doc>:<slug of the claim>``) and a verdict ``class`` that the module
derives from its numbers (:mod:`onelayer.claims`); ``verdict`` is the module's account in words. A sentence of the
landing page or of a part's introduction that repeats a verdict names its claim with ``<!-- finding: ID -->``, and
``tests/test_reader_claims.py`` checks that the claim exists. :func:`theorem_map` reads the chapters' theorem and lemma
blocks (the papers' numbers and the book's labels) for the Findings page's map.

This module is book machinery: it imports chapter modules by name at call time, as the registry does; the papers'
packages never import it.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .paths import REPOSITORY_DATA, data_path
from .registry import CHAPTERS_PACKAGE, chapter_modules
from .store import read_json, to_jsonable, write_json

__all__ = ["KEYS", "STORED", "KIND", "COMMAND", "chapter_doc", "chapter_title",
           "book_order", "collect", "row_ids", "write", "load", "differences",
           "theorem_map", "theorem_map_markdown"]

#: The stored rows, inside the data directory; their kind; the command that rewrites them.
STORED = "data/findings.json"
KIND = "onelayer-findings"
COMMAND = "python -m onelayer findings"

#: The keys of a verdict row (``verdict_rows()`` of a chapter module).
KEYS = ("claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter")


def chapter_doc(module: str) -> str:
    """The document a chapter module mirrors: ``onelayer.chapters.walks.ring`` -> ``walks/ring``."""
    if not isinstance(module, str):
        raise TypeError(f"module must be a str, not {type(module).__name__}")
    prefix = CHAPTERS_PACKAGE + "."
    if not module.startswith(prefix) or len(module) == len(prefix):
        raise ValueError(f"module must be a chapter module ({prefix}...), got {module!r}")
    return module[len(prefix):].replace(".", "/")


def chapter_title(doc: str) -> str:
    """The first ``# `` heading of ``book/<doc>.ipynb`` (the chapter's title), or ``doc`` if the notebook is absent."""
    try:
        nb = json.loads(data_path(f"{doc}.ipynb").read_text())
    except FileNotFoundError:
        return doc
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return doc


def book_order() -> list[str]:
    """The chapters' documents in the order of ``_toc.yml`` (``walks/ring``, ...); empty if it cannot be read."""
    toc = REPOSITORY_DATA.parent / "_toc.yml"
    if not toc.exists():
        return []
    return [m.group(1) for m in re.finditer(r"^\s*- file: book/(\S+)\s*$", toc.read_text(), flags=re.M)]


def collect(part: str | None = None) -> list[dict]:
    """Every chapter's ``verdict_rows()`` (in the book's order), each row with its ``doc`` added.

    ``part``: ``"walks"`` or ``"trees"`` for one part's chapters (a chapter outside both parts, such as ``scaling``,
    is included only when ``part`` is None). A row without the keys :data:`KEYS` raises ``ValueError``. Each row
    also gets its stable ``id`` (:func:`row_ids`), by which a page's sentence names the verdict it repeats.
    """
    if part is not None and part not in ("walks", "trees"):
        raise ValueError(f"part must be None, 'walks' or 'trees', got {part!r}")
    order = {doc: i for i, doc in enumerate(book_order())}
    docs = sorted((chapter_doc(m) for m in chapter_modules()), key=lambda d: (order.get(d, len(order)), d))
    rows = []
    for doc in docs:
        if part is not None and not doc.startswith(part + "/"):
            continue
        module = importlib.import_module(f"{CHAPTERS_PACKAGE}.{doc.replace('/', '.')}")
        if not hasattr(module, "verdict_rows"):
            continue
        for row in module.verdict_rows():
            missing = [k for k in KEYS if k not in row]
            if missing:
                raise ValueError(f"a verdict row of {module.__name__} lacks {missing}: {row.get('claim')!r}")
            rows.append({**row, "doc": doc})
    for row, row_id in zip(rows, row_ids(rows)):
        row["id"] = row_id
    return rows


def write(rows: Sequence[Mapping] | None = None, path=None) -> Path:
    """Store ``rows`` (default: :func:`collect`) in :data:`STORED` (or ``path``); return the path written."""
    rows = collect() if rows is None else [dict(r) for r in rows]
    return write_json(data_path(STORED) if path is None else path, {"command": COMMAND, "rows": rows}, kind=KIND)


def load(prefix: str | None = None, path=None) -> list[dict]:
    """The stored rows as :func:`collect` made them; with ``prefix``, those of the chapters whose document starts with
    it (``"walks"``, ``"trees"``, ``"trees/backward"``: the rows a part's introduction shows)."""
    if prefix is not None and (not isinstance(prefix, str) or not prefix.strip("/") or prefix.startswith("/")):
        raise ValueError(f"prefix must be None or a document prefix such as 'walks' or 'trees/backward', got {prefix!r}")
    rows = read_json(data_path(STORED) if path is None else path, kind=KIND)["rows"]
    return [r for r in rows if prefix is None or r["doc"].startswith(prefix)]


def differences(stored: Sequence[Mapping], fresh: Sequence[Mapping]) -> list[str]:
    """What differs between stored and fresh rows (compared as JSON, as stored): one line per differing row."""
    a, b = (json.loads(json.dumps(to_jsonable(list(rows)))) for rows in (stored, fresh))
    out = [f"row {i} ({(x or y).get('doc')}: {(x or y).get('claim')!r}): "
           + ", ".join(k for k in sorted(set(x) | set(y)) if x.get(k) != y.get(k))
           for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(a) != len(b):
        out.append(f"{len(a)} stored rows, {len(b)} fresh ones")
    return out


# --- stable row ids and verdict classes (what a page's sentence may repeat) -------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def row_ids(rows: Sequence[Mapping]) -> list[str]:
    """A stable id per row: ``<doc>:<slug>``, the slug being the first six words of the claim (``walks/theorem41:
    theorem-4-1-for-p-1-n``); a claim repeated within a chapter (one row per reading) gets ``-2``, ``-3``... in order.

    A page that repeats a verdict marks its sentence with ``<!-- finding: ID -->`` (``tests/test_reader_claims.py``).
    """
    out, seen = [], {}
    for row in rows:
        if "doc" not in row or "claim" not in row:
            raise ValueError("every row needs its 'doc' and 'claim' (rows from collect())")
        slug = "-".join(_WORD.findall(str(row["claim"]).lower())[:6]) or "row"
        base = f"{row['doc']}:{slug}"
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


# --- the theorem map: the papers' numbered results and the book's blocks that state them ------------------------------

_BLOCK = re.compile(r"^(?P<fence>`{3,}|:{3,})\{prf:(?P<kind>theorem|lemma|proposition|corollary)\}[ \t]*(?P<title>.*)\n"
                    r"(?P<options>(?:[ \t]*:[\w-]+:.*\n)*)", re.M)
_PAPER_NUMBER = re.compile(r"\b(?:Theorems?|Lemmas?|Propositions?|Corollar(?:y|ies))\s+(?:[A-Z]\.)?\d+(?:\.\d+)?"
                           r"(?:\s*(?:,|and|-)\s*(?:[A-Z]\.)?\d+(?:\.\d+)?)*")
#: The paper each part of the book follows: how the map names it, and its bibliography key (cited by the page).
PAPERS = {"walks": ("Shi & Cao (walks)", "shi2025randomwalks"), "trees": ("Yang et al. (trees)", "yang2025multihead")}


def theorem_map(docs: Sequence[str] | None = None) -> list[dict]:
    """Every ``{prf:theorem}``/``{prf:lemma}`` block of the chapters' notebooks, in the book's order.

    One dict per block: ``doc``, ``kind``, ``label``, ``title``, ``number`` (the paper's numbering as the title gives
    it, e.g. ``"Theorem 3.1"``, ``"Lemmas C.4, C.5"``; ``"-"`` when the title names none: a statement of ours) and
    ``paper`` (the part's paper when the title names its number, else ``"ours"``). Read from the notebooks' markdown,
    never typed; ``docs`` defaults to :func:`book_order`.
    """
    docs = book_order() if docs is None else list(docs)
    out = []
    for doc in docs:
        if not isinstance(doc, str) or not doc or doc.startswith("/"):
            raise ValueError(f"docs must be document paths such as 'walks/theorem31', got {doc!r}")
        path = data_path(f"{doc}.ipynb")
        if not path.exists():
            continue
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for m in _BLOCK.finditer("".join(cell["source"])):
                label = re.search(r":label:\s*(\S+)", m.group("options"))
                title = m.group("title").strip()
                number = _PAPER_NUMBER.search(title)
                part = doc.split("/", 1)[0]
                out.append({
                    "doc": doc, "kind": m.group("kind"), "label": label.group(1) if label else None, "title": title,
                    "paper": PAPERS[part][0] if number and part in PAPERS else "ours",
                    "number": number.group(0) if number else "-",
                })
    return out


def theorem_map_markdown(entries: Sequence[Mapping]) -> str:
    """``entries`` (:func:`theorem_map`) as a MyST table (class ``onelayer-theorem-map``): the paper, the paper's number, the book's block (a
    ``{prf:ref}`` to its label, which renders with the book's own number and title) and the chapter (``{doc}``).
    Paths are relative to a page at the book's top level (the Findings page). A block without a label is named
    by its title."""
    lines = ["```{table}", ":class: onelayer-theorem-map", "",
             "| paper | the paper's number | in this book | chapter |", "|---|---|---|---|"]
    for e in entries:
        block = f"{{prf:ref}}`{e['label']}`" if e.get("label") else e["title"]
        cells = [e["paper"], e["number"], block, f"{{doc}}`{e['doc']}`"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines + ["```"])
