"""The landing page and the parts' introductions name the claims whose verdicts they repeat, and those claims exist.

A sentence on those pages that repeats a verdict names the claim (or one reading of it) with an HTML comment right
after it (invisible in the book)::

    In our runs Theorem 4.1 holds exactly. <!-- finding: walks/theorem41:theorem-4-1-for-p-1 -->

(several: ``<!-- finding: ID, ID -->``; the ids are a claim's ``onelayer.claims.Claim.id`` or a reading's
``Reading.id``, both stable ids of ``book/data/findings.json``). The verdict words themselves are no longer read back
from the prose: the pages show each verdict as :mod:`onelayer.claims` renders it (the grids), and this test fails
when a marker names a claim that does not exist. It also checks that the landing page tells offline readers how to
get search snippets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from onelayer import claims, findings

ROOT = Path(__file__).resolve().parents[1]
#: The pages that name claims: the landing page, its generated sentences and the parts' introductions.
PAGES = ("book/index.md", "book/data/claims_sentences.txt", "book/walks/index.ipynb", "book/trees/index.ipynb",
         "book/trees/forward_index.ipynb")
MARKER = re.compile(r"<!--\s*finding:\s*(?P<ids>[^>]*?)\s*-->")
_PLACEHOLDER = "\x00{}\x00"


def page_text(page: str, root: Path = ROOT) -> str:
    """The page's prose: a markdown file, or the markdown cells of a notebook (without remove-cell ones)."""
    path = root / page
    if path.suffix in (".md", ".txt"):
        return path.read_text()
    cells = json.loads(path.read_text())["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
                       and "remove-cell" not in c.get("metadata", {}).get("tags", []))


def sentences(text: str) -> list[tuple[str, list[str]]]:
    """(sentence, ids of the findings it names) for every sentence of prose: code blocks, directive options, math
    and other HTML comments left out; a marker belongs to the sentence it follows."""
    text = re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", " ", text, flags=re.M | re.S)  # fenced code
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$", " math ", text, flags=re.S)
    markers: list[list[str]] = []

    def keep(m):
        markers.append([i.strip() for i in m.group("ids").split(",") if i.strip()])
        return _PLACEHOLDER.format(len(markers) - 1)

    text = MARKER.sub(keep, text)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"^\s*:[\w-]+:.*$", " ", text, flags=re.M)  # directive options
    pieces: list[str] = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[*-]|\d+\.) )|\n(?=\|)|\n(?=#)", text):
        pieces += re.split(r"(?<=[.!?])\s+(?=[A-Z*_{(\[\x00])", " ".join(block.split()))
    out: list[tuple[str, list[str]]] = []
    for piece in pieces:
        lead = re.match("^(?:\x00\\d+\x00\\s*)+", piece)
        if lead and out:  # markers after the previous sentence's full stop belong to it
            out[-1][1].extend(i for k in re.findall("\x00(\\d+)\x00", lead.group(0)) for i in markers[int(k)])
            piece = piece[lead.end():]
        ids = [i for k in re.findall("\x00(\\d+)\x00", piece) for i in markers[int(k)]]
        bare = re.sub("\x00\\d+\x00", " ", piece).strip()
        if bare:
            out.append((bare, ids))
    return out


def known_ids(found: list) -> set[str]:
    """Every id a marker may name: each claim's and each of its readings'."""
    return {c.id for c in found} | {r.id for c in found for r in c.readings}


def marker_offenders(page: str, found: list, root: Path = ROOT) -> list[str]:
    """The markers of ``page`` that name no claim or reading of ``found``."""
    known = known_ids(found)
    out = []
    for sentence, ids in sentences(page_text(page, root)):
        unknown = [i for i in ids if i not in known]
        if unknown:
            short = sentence if len(sentence) < 160 else sentence[:157] + "..."
            out.append(f"{page}: names claims that do not exist: {unknown}: {short!r}")
    return out


@pytest.mark.parametrize("page", PAGES)
def test_page_names_only_existing_claims(page):
    offenders = marker_offenders(page, claims.load())
    assert not offenders, f"{len(offenders)} markers of {page} name no claim:\n" + "\n".join(offenders)


def test_every_claim_has_its_anchor_in_its_chapter():
    """Each claim's label (``(claim-<slug>)=``, the target of the grids' links) sits in its chapter's markdown."""
    missing = []
    for c in claims.load():
        if f"({claims.anchor(c.id)})=" not in page_text(f"book/{c.doc}.ipynb"):
            missing.append(f"{c.id}: no ({claims.anchor(c.id)})= in book/{c.doc}.ipynb (tools/claim_labels.py)")
    assert not missing, "\n".join(missing)


def test_stored_rows_carry_their_ids():
    rows = findings.load()
    assert [r.get("id") for r in rows] == findings.row_ids(rows), f"stale ids: run '{findings.COMMAND}'"
    assert len(set(findings.row_ids(rows))) == len(rows)


def test_landing_page_says_how_to_search_offline():
    text = (ROOT / "book/index.md").read_text()
    assert re.search(r"^#+ Reading offline", text, flags=re.M), "book/index.md lacks its 'Reading offline' note"
    assert "python -m http.server -d _build/html" in text


# --- the check itself -------------------------------------------------------------------------------------------------

def test_marker_check_catches_unknown_ids(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "index.md").write_text(
        "# Title\n\nTheorem 4.1 holds exactly. <!-- finding: walks/theorem41:theorem-4-1-for-p-1 -->\n"
        "Figure 2 holds. <!-- finding: walks/x:nothing -->\n")
    found = marker_offenders("book/index.md", claims.load(), root=tmp_path)
    assert len(found) == 1 and "walks/x:nothing" in found[0]
