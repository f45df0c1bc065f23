"""onelayer.findings: every chapter's verdict rows, collected and stored for the Findings page (onelayer.claims renders them)."""

from __future__ import annotations

import os

import pytest

from onelayer import findings, registry


@pytest.fixture(scope="module")
def fresh():
    # The stored rows are checked against fresh ones on the reference path (make test). The portability lanes
    # (ONELAYER_JITTER, ONELAYER_BLAS=native: make test-portable) re-run every chapter under nbval and the chapter
    # modules' own verdict tests; collecting all 75 rows once more there would add about 40 s per lane and check
    # the same text.
    if os.environ.get("ONELAYER_JITTER") or os.environ.get("ONELAYER_BLAS") == "native":
        pytest.skip("stored findings are compared with fresh ones in make test (the reference path)")
    return findings.collect()


def test_stored_findings_are_the_chapters_rows(fresh):
    diffs = findings.differences(findings.load(), fresh)
    assert not diffs, f"book/data/findings.json is stale (run '{findings.COMMAND}'): " + "; ".join(diffs)


def test_every_chapter_module_with_verdicts_contributes_in_book_order(fresh):
    docs = [findings.chapter_doc(m) for m in registry.chapter_modules()]
    with_rows = {r["doc"] for r in fresh}
    assert with_rows and with_rows <= set(docs)
    order = findings.book_order()
    positions = [order.index(r["doc"]) for r in fresh]
    assert positions == sorted(positions)
    assert all(set(findings.KEYS) <= set(r) for r in fresh)


def test_part_filter_keeps_only_that_part():
    walks = findings.load("walks")
    assert walks and all(r["doc"].startswith("walks/") for r in walks)
    assert len(walks) + len(findings.load("trees")) <= len(findings.load())
    backward = findings.load("trees/backward")
    assert backward and all(r["doc"].startswith("trees/backward_") for r in backward)
    assert findings.load("forest") == []
    with pytest.raises(ValueError, match="prefix"):
        findings.load("/walks")
    with pytest.raises(ValueError, match="part"):
        findings.collect("forest")


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="module"):
        findings.chapter_doc("onelayer.walks.ring")
    with pytest.raises(TypeError, match="module"):
        findings.chapter_doc(3)


def test_differences_name_the_row_and_key():
    row = {k: "x" for k in (*findings.KEYS, "doc")}
    assert findings.differences([row], [row]) == []
    diffs = findings.differences([row], [{**row, "verdict": "fails"}])
    assert len(diffs) == 1 and "verdict" in diffs[0]
    assert "1 stored rows, 0 fresh ones" in findings.differences([row], [])


def test_row_ids_are_stable_and_unique_within_a_chapter():
    rows = [{"doc": "walks/x", "claim": "Theorem 4.1: for p=1, N=rK+1, any loss"},
            {"doc": "walks/x", "claim": "Theorem 4.1: for p=1, N=rK+1, any loss"},
            {"doc": "trees/y", "claim": "Theorem 4.1: for p=1, N=rK+1, any loss"}]
    assert findings.row_ids(rows) == ["walks/x:theorem-4-1-for-p-1", "walks/x:theorem-4-1-for-p-1-2",
                                      "trees/y:theorem-4-1-for-p-1"]
    with pytest.raises(ValueError, match="doc"):
        findings.row_ids([{"claim": "x"}])


def test_every_stored_row_carries_its_class():
    from onelayer import claims

    rows = findings.load()
    assert all(r.get("class") in claims.CLASSES for r in rows), \
        [r["id"] for r in rows if r.get("class") not in claims.CLASSES]


def test_theorem_map_reads_the_chapters_blocks():
    entries = findings.theorem_map()
    by_label = {e["label"]: e for e in entries}
    assert by_label["thm-walks-success"]["number"] == "Theorem 3.1"
    assert by_label["lem-walks-c5"]["number"] == "Lemmas C.4, C.5"
    assert by_label["thm-trees-forward-generalization"]["number"] == "Theorem 8"
    assert by_label["lem-walks-qa-symmetry"] == {**by_label["lem-walks-qa-symmetry"], "paper": "ours", "number": "-"}
    assert all(e["label"] for e in entries), "every theorem or lemma block has a :label: (the map links to it)"
    order = findings.book_order()
    assert [order.index(e["doc"]) for e in entries] == sorted(order.index(e["doc"]) for e in entries)
    table = findings.theorem_map_markdown(entries).splitlines()
    assert len(table) == len(entries) + 6 and "{prf:ref}`thm-walks-success`" in table[6]
    assert table[:2] == ["```{table}", ":class: onelayer-theorem-map"] and table[-1] == "```"
    with pytest.raises(ValueError, match="docs"):
        findings.theorem_map(["/abs"])


def test_findings_page_shows_the_current_theorem_map():
    import json

    from onelayer.paths import data_path

    cells = json.loads(data_path("findings.ipynb").read_text())["cells"]
    shown = ["".join(o["data"]["text/markdown"]) for c in cells if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]
    assert shown and shown[-1] == findings.theorem_map_markdown(findings.theorem_map()), \
        "book/findings.ipynb shows a stale theorem map: re-execute it (tools/execute.py book/findings.ipynb)"
