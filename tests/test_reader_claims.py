"""The landing page and the parts' introductions state no verdict that the findings table contradicts.

A sentence on those pages that states a verdict names the findings row it repeats with an HTML comment right after
it (invisible in the book)::

    In our runs Theorem 4.1 holds exactly. <!-- finding: walks/theorem41:theorem-4-1-for-p-1 -->

(several rows: ``<!-- finding: ID, ID -->``; the ids are ``onelayer.findings.row_ids``, stored with each row as ``id``
in ``book/data/findings.json``). The test fails

* when a marked sentence's verdict words (holds, fails, disagrees, partly, undecided...:
  ``onelayer.findings.sentence_verdicts``) are not the verdict classes of the rows it names
  (``onelayer.findings.verdict_class``),
* when a marker names a row that does not exist, and
* when a sentence without a marker uses a verdict word (:data:`UNMARKED_WORDS`).

It also checks that the landing page tells offline readers how to get search snippets.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from onelayer import findings

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose verdicts must agree with the findings table: the landing page and the parts' introductions.
PAGES = ("book/index.md", "book/walks/index.ipynb", "book/trees/index.ipynb", "book/trees/forward_index.ipynb")
#: A verdict stated without a marker (the verdict words of the issue, and their forms).
UNMARKED_WORDS = re.compile(r"\b(?:reproduc(?:e|es|ed|ing)|hold|holds|fail|fails|failed|disagree[sd]?|"
                            r"confirm(?:s|ed)?|contradict(?:s|ed)?|partly|undecided)\b", re.I)
MARKER = re.compile(r"<!--\s*finding:\s*(?P<ids>[^>]*?)\s*-->")
_PLACEHOLDER = "\x00{}\x00"


def page_text(page: str, root: Path = ROOT) -> str:
    """The page's prose: a markdown file, or the markdown cells of a notebook (without remove-cell ones)."""
    path = root / page
    if path.suffix == ".md":
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


def claim_offenders(page: str, rows: list[dict], root: Path = ROOT) -> list[str]:
    by_id = dict(zip(findings.row_ids(rows), rows))
    out = []
    for sentence, ids in sentences(page_text(page, root)):
        short = sentence if len(sentence) < 160 else sentence[:157] + "..."
        if not ids:
            words = sorted({w.lower() for w in UNMARKED_WORDS.findall(sentence)})
            if words:
                out.append(f"{page}: states a verdict ({', '.join(words)}) without naming its findings row "
                           f"(<!-- finding: ID -->): {short!r}")
            continue
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            out.append(f"{page}: names findings rows that do not exist: {unknown}: {short!r}")
            continue
        expected = {findings.verdict_class(by_id[i]["verdict"]) for i in ids}
        if None in expected:
            vague = [i for i in ids if findings.verdict_class(by_id[i]["verdict"]) is None]
            out.append(f"{page}: names rows whose verdict states no class (holds/fails/partly/undecided): {vague}")
            continue
        stated = findings.sentence_verdicts(sentence)
        if stated and stated != expected:
            out.append(f"{page}: the sentence says {sorted(stated)}, its findings rows say {sorted(expected)} "
                       f"({', '.join(ids)}): {short!r}")
    return out


@pytest.mark.parametrize("page", PAGES)
def test_page_states_only_the_verdicts_of_the_findings(page):
    offenders = claim_offenders(page, findings.load())
    assert not offenders, f"{len(offenders)} sentences of {page} disagree with or do not name the findings:\n" + \
        "\n".join(offenders)


def test_stored_rows_carry_their_ids():
    rows = findings.load()
    assert [r.get("id") for r in rows] == findings.row_ids(rows), f"stale ids: run '{findings.COMMAND}'"
    assert len(set(findings.row_ids(rows))) == len(rows)


def test_landing_page_says_how_to_search_offline():
    text = (ROOT / "book/index.md").read_text()
    assert re.search(r"^#+ Reading offline", text, flags=re.M), "book/index.md lacks its 'Reading offline' note"
    assert "python -m http.server -d _build/html" in text


# --- the check itself -------------------------------------------------------------------------------------------------

ROWS = [{"doc": "walks/x", "claim": "Theorem 9 holds", "verdict": "holds exactly"},
        {"doc": "walks/x", "claim": "Figure 2 appears", "verdict": "not reproduced under any reading"},
        {"doc": "walks/x", "claim": "Figure 2 appears", "verdict": "partly: in some runs"}]


def _offenders(tmp_path, text):
    (tmp_path / "book").mkdir(exist_ok=True)
    (tmp_path / "book" / "index.md").write_text(text)
    return claim_offenders("book/index.md", ROWS, root=tmp_path)


def test_claim_check_catches_what_it_should(tmp_path):
    ok = ("# Title\n\nTheorem 9 holds in our runs. <!-- finding: walks/x:theorem-9-holds -->\n"
          "Figure 2 is not reproduced <!-- finding: walks/x:figure-2-appears --> and we say why.\n\n"
          "* Figure 2 appears partly. <!-- finding: walks/x:figure-2-appears-2 -->\n\n"
          "```bash\nmake test  # fails when a cell fails\n```\n\nA plain sentence about $x$ and a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert _offenders(tmp_path, ok) == []
    bad = ("Theorem 9 fails. <!-- finding: walks/x:theorem-9-holds -->\n"
           "Figure 2 holds. <!-- finding: walks/x:nothing -->\nOur runs confirm the paper.\n")
    found = _offenders(tmp_path, bad)
    assert len(found) == 3
    assert "says ['fails']" in found[0] and "do not exist" in found[1] and "confirm" in found[2]
    assert findings.sentence_verdicts("our runs do not reproduce it") == {"fails"}
    assert findings.verdict_class("Task 1 fails in every run; Task 2 holds") == "partly"
