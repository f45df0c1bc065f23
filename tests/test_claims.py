"""onelayer.claims: the stored rows grouped into claims, the verdict classes, and the renderers of the pages."""

from __future__ import annotations

import html.parser
import re

import pytest

from onelayer import claims, findings


class _Links(html.parser.HTMLParser):
    """Every link target and the classes of every grid cell."""

    def __init__(self):
        super().__init__()
        self.links, self.cells = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a":
            self.links.append(attrs.get("href"))
            if "onelayer-cell" in (attrs.get("class") or ""):
                self.cells.append(attrs["class"])


def _row(**kw):
    row = {"claim": "Theorem 9 holds", "source": "[paper]", "reading": "-", "settings": "K = 6",
           "measurement": "3/4 = 0.750 [0.301, 0.954]", "verdict": "holds", "class": "holds", "chapter": "x",
           "doc": "walks/theorem31",
           "id": "walks/theorem31:theorem-3-1-item-3-v"}
    return {**row, **kw}


def test_stored_rows_group_into_one_claim_per_statement():
    rows, found = findings.load(), claims.load()
    assert sum(len(c.readings) for c in found) == len(rows)
    assert [r.id for c in found for r in c.readings] == sorted((r["id"] for r in rows), key=[r["id"] for r in rows].index)
    assert len({(r["doc"], r["claim"]) for r in rows}) == len(found)
    assert len({c.id for c in found}) == len(found)
    bias = next(c for c in found if c.id == "walks/qa:with-a-bias-term-task-1")
    assert len(bias.readings) == 9


def test_every_claim_has_a_paper_a_statement_and_a_class():
    for c in claims.load():
        assert c.paper in claims.PAPER_TITLES and c.statement
        assert c.cls in claims.CLASSES and c.words == claims.WORDS[c.cls]
        assert "->" not in c.statement and "||" not in c.statement, c.id  # MyST math, not ASCII
        if c.paper == "walks":
            assert all("[summary]" not in r.label for r in c.readings), c.id  # [summary] is the trees paper's


@pytest.mark.parametrize("classes, expected", [
    (["holds"], "holds"), (["exact", "holds"], "holds"), (["holds", "most"], "most"), (["fails", "fails"], "fails"),
    (["holds", "fails"], "partly"), (["undecided"], "undecided"), (["fails", "undecided", "holds"], "partly"),
])
def test_combine(classes, expected):
    assert claims.combine(classes) == expected


def test_grid_links_every_cell_to_the_claims_section_and_colours_it():
    found = claims.load("walks")
    parser = _Links()
    parser.feed(claims.grid_html(found, page="walks/index"))
    assert len(parser.cells) == sum(len(c.readings) for c in found)
    assert all(re.search(r"\bverdict-(exact|holds|most|partly|undecided|fails)\b", k) for k in parser.cells)
    expected = {f"{c.doc}.html#{claims.anchor(c.id)}" for c in found}
    assert {h.replace("../", "") if h.startswith("../") else "walks/" + h for h in parser.links} == expected
    parser = _Links()
    parser.feed(claims.grid_html(found, page="findings"))
    assert set(parser.links) == expected


def test_claim_markdown_escapes_row_text_and_refers_to_the_label():
    claim = claims.build([_row(measurement="a <script> `x` *y* |z| 3/4 = 0.750 [0.301, 0.954]")])[0]
    text = claims.claim_markdown(claim)
    assert "<script>" not in text and "`x`" not in text
    assert "{ref}`evidence <claim-theorem-3-1-item-3-v>`" in text
    assert 'class="onelayer-verdict verdict-holds"' in text and "<details>" in text


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="paper"):
        claims.load("moon")
    with pytest.raises(ValueError, match="claim_id"):
        claims.anchor("no-colon")
    with pytest.raises(ValueError, match="page"):
        claims.grid_html(claims.load("walks"), page="/abs")
    with pytest.raises(ValueError, match="STATEMENTS"):
        claims.build([_row(id="walks/x:unknown")])


def test_landing_page_grids_are_current():
    from onelayer.paths import data_path

    stored = data_path(claims.GRIDS).read_text(encoding="utf-8")
    assert stored == claims.grids_html(claims.load(), page="index", level=3) + "\n", \
        f"{claims.GRIDS} is stale: run '{findings.COMMAND}'"


def test_findings_page_shows_the_current_claims():
    import json

    from onelayer.paths import data_path

    cells = json.loads(data_path("findings.ipynb").read_text())["cells"]
    outputs = [o["data"] for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    html_out = ["".join(d["text/html"]) for d in outputs if "text/html" in d]
    markdown = ["".join(d["text/markdown"]) for d in outputs if "text/markdown" in d]
    stale = "book/findings.ipynb shows stale claims: re-execute it (make execute NB=book/findings.ipynb)"
    assert html_out[0] == claims.grids_html(claims.load(), page="findings"), stale
    assert markdown[:3] == [claims.paper_markdown(claims.load(p), page="findings") for p in ("walks", "trees", "book")], \
        stale


@pytest.mark.parametrize("doc, paper, prefix", [("walks/index", "walks", ""), ("trees/index", "trees", ""),
                                                ("trees/forward_index", "trees", "trees/forward")])
def test_part_introductions_show_their_papers_current_grid(doc, paper, prefix):
    import json

    from onelayer.paths import data_path

    cells = json.loads(data_path(f"{doc}.ipynb").read_text())["cells"]
    html_out = ["".join(o["data"]["text/html"]) for c in cells if c["cell_type"] == "code"
                for o in c.get("outputs", []) if "text/html" in o.get("data", {})]
    mine = [c for c in claims.load(paper) if c.doc.startswith(prefix)]
    assert claims.grid_html(mine, page=doc) in html_out, f"book/{doc}.ipynb shows a stale grid: re-execute it"


def test_rate_class_reads_the_interval():
    from onelayer.rates import rate

    assert claims.rate_class(rate(20, 20)) == "holds"
    assert claims.rate_class(rate(392, 400)) == "most"
    assert claims.rate_class(rate(0, 40)) == "fails"
    assert claims.rate_class(rate(2, 40)) == "fails"
    assert claims.rate_class(rate(10, 20)) == "undecided"
    assert claims.exact_class(True) == "exact" and claims.exact_class(False) == "fails"
    assert claims.reading_class(_row(verdict="whatever the words", **{"class": "most"})) == "most"
    with pytest.raises(TypeError, match="r must"):
        claims.rate_class(0.5)
    with pytest.raises(ValueError, match="class must"):
        claims.reading_class(_row(**{"class": "green"}))
    with pytest.raises(ValueError, match="no class"):
        claims.reading_class({k: v for k, v in _row().items() if k != "class"})


def test_rated_stores_the_rates_that_decide_the_class():
    from onelayer.rates import rate

    row = claims.rated({"a": rate(20, 20), "b": rate(30, 40)})
    assert row["class"] == "most" and "checks" not in row
    assert [(d["label"], d["k"], d["n"]) for d in row["rates"]] == [("a", 20, 20), ("b", 30, 40)]
    assert claims.rated({"a": rate(20, 20)}, checks=["fails"])["class"] == "partly"
    reading = claims.build([_row(**claims.rated({"a": rate(3, 4)}, checks=["exact"]))])[0].readings[0]
    assert reading.rates == (("a", rate(3, 4)),) and reading.checks == ("exact",)
    with pytest.raises(ValueError, match="rates"):
        claims.rated({})
    with pytest.raises(TypeError, match="rates\\['a'\\]"):
        claims.rated({"a": 0.5})


def test_every_stored_rate_decides_its_rows_class():
    """A row with rates (claims.rated) has the class rate_class gives them (combined with its exact checks), and its
    stored interval is the Wilson interval of its k/n; the readings carry the same rates."""
    from onelayer.rates import rate

    rows = findings.load()
    rated_rows = [r for r in rows if "rates" in r]
    assert len(rated_rows) >= 40
    for row in rated_rows:
        assert row["rates"], row["id"]
        for d in row["rates"]:
            r = rate(d["k"], d["n"])
            assert d["label"] and (d["low"], d["high"]) == pytest.approx((r.low, r.high), abs=1e-15), row["id"]
        expected = claims.combine([claims.rate_class(r) for _, r in claims.row_rates(row)] + row.get("checks", []))
        assert row["class"] == expected, row["id"]
    by_id = {r.id: r for c in claims.load() for r in c.readings}
    assert all(by_id[row["id"]].rates == claims.row_rates(row) for row in rated_rows)


def test_chapter_modules_class_rates_only_through_rated():
    """A chapter or verdicts module that classes a verdict by rates of runs goes through claims.rated (which stores
    the rates in the row), never through rate_class directly."""
    from pathlib import Path

    root = Path(claims.__file__).parent
    files = sorted((root / "chapters").rglob("*.py")) + sorted((root / "verdicts").rglob("*.py"))
    assert len(files) > 25
    offenders = [str(p.relative_to(root)) for p in files if re.search(r"\brate_class\(", p.read_text())]
    assert offenders == []


def test_figure_colours_are_the_grid_colours():
    from onelayer.paths import data_path

    css = data_path("_static/onelayer.css").read_text()
    found = dict(re.findall(r"\.onelayer-cell\.verdict-(\w+) \{ background: (#[0-9a-f]{6}); \}", css))
    assert found == claims.COLOURS


def test_forest_lines_show_each_rated_readings_weakest_rate():
    found = claims.load("walks")
    lines = claims.forest_lines(found)
    readings = [r for c in found for r in c.readings if r.rates]
    assert len(lines) == len(readings)
    for line, r in zip(lines, readings):
        label, x = claims.key_rate(r)
        assert (line["rate"], line["k"], line["n"], line["cls"]) == (label, x.k, x.n, r.cls)
        assert x.low == min(y.low for _, y in r.rates)
        assert len(line["label"]) <= 34 and line["colour"] == claims.COLOURS[r.cls]
    with pytest.raises(ValueError, match="limit"):
        claims.forest_lines(found, limit=3)


def test_landing_page_sentences_are_current_and_generated():
    from onelayer.paths import data_path

    stored = data_path(claims.SENTENCES).read_text(encoding="utf-8")
    assert stored == claims.landing_markdown(), f"{claims.SENTENCES} is stale: run '{findings.COMMAND}'"
    by_id = {c.id: c for c in claims.load()}
    for (ids, *_), line in zip(claims.LANDING, stored.splitlines()):
        cls = claims.combine(by_id[i].cls for i in ids)
        assert f"verdict-{cls}\">{claims.LETTERS[cls]} {claims.WORDS[cls]}</span>" in line
    index = data_path("index.md").read_text()
    assert "```{include} data/claims_sentences.txt" in index
    with pytest.raises(ValueError, match="LANDING"):
        claims.landing_markdown([])
