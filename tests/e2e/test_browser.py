"""The built HTML book in a real browser (headless chromium): every page of the table of contents.

Each page is loaded once (from a local http.server over ``_build/html``) and then
checked the way a reader would notice problems: errors in the console, images
that do not load, math that is not typeset or has TeX errors, theorem blocks and
cross-references that did not resolve, raw MyST markup, tracebacks or warnings in
stored outputs, links to pages or anchors that do not exist.

Math. The book loads MathJax 3 from a CDN, and this machine may be offline. The
test answers that one request from a local copy of the same MathJax (the npm
package, unpacked by ``tools/e2e_setup.sh``), so the math is really typeset and
TeX errors and undefined macros are caught. Without that copy the test checks
that MathJax is configured and the TeX source is on the page, and skips the
typesetting part with a message. Every other request leaving 127.0.0.1 is
aborted, and console errors caused by those aborted requests are ignored.
"""

from __future__ import annotations

import html.parser
import re
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from e2e_support import (
    HTML_DIR,
    MATHJAX_DIR,
    SCREENSHOT_DIR,
    TOC_FILE,
    is_local,
    keep_offline,
    mathjax_available,
    part_openers,
    serve_directory,
    toc_entries,
)

PAGES = toc_entries()

#: Console messages from the theme/extensions that every reader gets with a fresh profile, whatever the book
#: contains. They are upstream issues, listed here so that anything else fails the test.
KNOWN_UPSTREAM = [
    # pydata-sphinx-theme 0.17: on a first visit localStorage has no mode, the theme logs this and uses "auto".
    re.compile(r"^Got invalid theme mode: \. Resetting to auto\.$"),
    # sphinx-thebe 0.3.1 under Sphinx 7 adds its inline configuration <script> twice; the second one throws.
    re.compile(r"^Identifier 'THEBE_JS_URL' has already been declared$"),
]

#: Numbered sphinx-proof / sphinx-exercise blocks and the word their title starts with.
TITLED_BLOCKS = ("theorem", "lemma", "definition", "corollary", "proposition", "conjecture", "assumption", "exercise")


def _screenshot_pages() -> set[str]:
    """The landing page, the foundation pages, the glossary and the first chapter of every part."""
    return ({PAGES[0], "book/notation", "book/selector", "book/glossary"} | set(part_openers())) & set(PAGES)


COLLECT = r"""
() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const skip = 'pre, code, script, style, mjx-container, .math, .highlight, .cell_input';
  const walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT);
  const prose = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.parentElement.closest(skip)) prose.push(n.textContent);
  }
  const maths = [...article.querySelectorAll('.math')];
  return {
    title: document.title,
    prose: prose.join(' '),
    images: [...document.images].map(i => ({src: i.currentSrc || i.src, width: i.naturalWidth, complete: i.complete})),
    math: {
      count: maths.length,
      source: maths.filter(e => /\\\(|\\\[|\\begin|[_^\\]/.test(e.textContent) || e.querySelector('mjx-container')).length,
      typeset: maths.filter(e => e.querySelector('mjx-container')).length,
      errors: [...article.querySelectorAll('mjx-merror')].map(e => e.getAttribute('data-mjx-error') || e.textContent),
      // MathJax shows an undefined macro as red text holding its name (an mtext in the assistive MathML).
      undefined: [...article.querySelectorAll('mjx-container mtext')].map(t => t.textContent).filter(t => /^\\[A-Za-z]+$/.test(t)),
      configured: !!(window.MathJax && (window.MathJax.tex || window.MathJax.config)),
      script: !![...document.scripts].find(s => /mathjax/i.test(s.src)),
    },
    blocks: [...article.querySelectorAll('div.proof, div.exercise, div.solution')].map(b => ({
      classes: b.className,
      title: (b.querySelector(':scope > .admonition-title') || {textContent: ''}).textContent.trim(),
      content: b.textContent.trim().length,
    })),
    xrefs: [...article.querySelectorAll('.xref')].map(x => ({classes: x.className, text: x.textContent.trim(), linked: !!x.closest('a[href]')})),
    outputs: [...article.querySelectorAll('.cell_output, .output')].map(o => ({classes: o.className, text: o.textContent})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
    dropdowns: [...article.querySelectorAll('.admonition.dropdown, .toggle')].map(d => ({
      classes: d.className, id: d.id,
      button: !!(d.querySelector(':scope > .admonition-title > button.toggle-button') || d.closest('details.toggle-details')),
    })),
  };
}
"""


class _IdParser(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("id", "name") and value:
                self.ids.add(value)


@cache
def _ids_of(path: Path) -> frozenset[str]:
    parser = _IdParser()
    parser.feed(path.read_text(errors="replace"))
    return frozenset(parser.ids)


@pytest.fixture(scope="module")
def site(browser_context):
    index = HTML_DIR / "index.html"
    if not index.exists():
        pytest.skip(f"no built book at {HTML_DIR}: run 'make book' first (or set ONELAYER_E2E_HTML)")
    with serve_directory(HTML_DIR) as base:
        yield base


@pytest.fixture(scope="module")
def visit(browser_context, site):
    """``visit(entry)`` loads a page once and returns what the checks need (cached per page)."""
    reports: dict[str, dict] = {}
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    shots = _screenshot_pages()

    def _visit(entry: str) -> dict:
        if entry in reports:
            return reports[entry]
        path = HTML_DIR / f"{entry}.html"
        if not path.exists():
            pytest.fail(f"{entry} is in {TOC_FILE.name} but {path} was not built")
        page = browser_context.new_page()
        problems: list[str] = []

        def on_console(msg):
            if msg.type != "error":
                return
            source = (msg.location or {}).get("url", "")
            if source and not is_local(source):
                return  # a CDN request that keep_offline() aborted
            if source.endswith("/favicon.ico") or any(p.match(msg.text) for p in KNOWN_UPSTREAM):
                return
            problems.append(f"console error: {msg.text} ({source})")

        def on_pageerror(err):
            if not any(p.match(err.message) for p in KNOWN_UPSTREAM):
                problems.append(f"uncaught exception: {err.message}\n{err.stack}")

        page.on("console", on_console)
        page.on("pageerror", on_pageerror)
        page.on("response", lambda r: r.status >= 400 and is_local(r.url) and not r.url.endswith("/favicon.ico")
                and problems.append(f"HTTP {r.status} for {r.url}"))
        keep_offline(page)
        try:
            page.goto(f"{site}/{entry}.html", wait_until="load")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            typeset = mathjax_available() and page.evaluate("() => document.querySelectorAll('.math').length > 0")
            mathjax_error = None
            if typeset:
                try:
                    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000)
                    page.evaluate("() => MathJax.startup.promise.then(() => true)")
                except Exception as exc:  # the page loads MathJax from a URL keep_offline() does not serve
                    mathjax_error = f"MathJax did not start from the local copy in {MATHJAX_DIR}: {exc}"
            report = page.evaluate(COLLECT)
            report["problems"] = problems
            report["mathjax_error"] = mathjax_error
            report["typeset_checked"] = bool(typeset) or report["math"]["count"] == 0
            if entry in shots:
                page.screenshot(path=str(SCREENSHOT_DIR / f"{entry.replace('/', '_')}.png"))
        finally:
            page.close()
        reports[entry] = report
        return report

    return _visit


@pytest.mark.parametrize("entry", PAGES)
def test_page_loads_without_console_errors(visit, entry):
    report = visit(entry)
    assert report["title"], "page has no title"
    assert not report["problems"], "\n".join(report["problems"])


@pytest.mark.parametrize("entry", PAGES)
def test_every_image_loads(visit, entry):
    broken = [img["src"] for img in visit(entry)["images"] if not (img["complete"] and img["width"] > 0)]
    assert not broken, f"images that did not load: {broken}"


@pytest.mark.parametrize("entry", PAGES)
def test_math_is_typeset_without_errors(visit, entry):
    report = visit(entry)
    math = report["math"]
    raw_dollars = re.findall(r"\$[^$\n]{0,80}\\[A-Za-z]+[^$\n]{0,80}\$", report["prose"])
    assert not raw_dollars, f"dollar math left as text (not parsed as math): {raw_dollars[:3]}"
    if math["count"] == 0:
        return
    assert math["configured"] and math["script"], "the page has math but MathJax is not configured/loaded by the page"
    assert report["mathjax_error"] is None, report["mathjax_error"]
    if not report["typeset_checked"]:
        assert math["source"] == math["count"], "a .math element without TeX source"
        pytest.skip("MathJax 3 not available locally (run tools/e2e_setup.sh, needs npm): TeX source and configuration checked, typesetting not")
    assert math["typeset"] == math["count"], f"{math['count'] - math['typeset']} of {math['count']} math elements not typeset"
    assert not math["errors"], f"TeX errors: {math['errors'][:5]}"
    assert not math["undefined"], f"undefined TeX macros: {sorted(set(math['undefined']))}"
    leftovers = re.findall(r"\\\(.{0,40}|\\\[.{0,40}", report["prose"])
    assert not leftovers, f"TeX delimiters left in the text: {leftovers[:3]}"


@pytest.mark.parametrize("entry", PAGES)
def test_theorem_blocks_and_cross_references_resolve(visit, entry):
    report = visit(entry)
    for block in report["blocks"]:
        kinds = [k for k in TITLED_BLOCKS if re.search(rf"\b{k}\b", block["classes"])]
        assert block["content"] > 0, f"empty block {block['classes']}"
        if kinds:
            assert block["title"].lower().startswith(kinds[0]), f"{kinds[0]} block without its title: {block}"
        assert "???" not in block["title"], f"unresolved number in {block['title']!r}"
    unresolved = [
        x for x in report["xrefs"]
        if not x["linked"] and (re.search(r"\bstd\b|\bprf\b|\bcite\b", x["classes"]) or x["text"].startswith("onelayer"))
    ]
    assert not unresolved, f"cross-references without a target: {unresolved[:5]}"
    assert "???" not in report["prose"], "an unresolved reference shows as '???'"
    raw = re.findall(r"\{(?:prf:\w+|term|doc|ref|numref|eq|cite(?::\w+)?|glue(?::\w+)?|py:\w+)\}`[^`]*`|:::\{\w|```\{\w", report["prose"])
    assert not raw, f"MyST markup shown as text: {raw[:5]}"


@pytest.mark.parametrize("entry", PAGES)
def test_dropdowns_have_toggle_buttons(visit, entry):
    # sphinx-togglebutton adds a button to each dropdown; if its script stops on one block, the
    # blocks after it stay open (solutions shown before the reader asks).
    missing = [f"{d['classes']} (id {d['id']!r})" for d in visit(entry)["dropdowns"] if not d["button"]]
    assert not missing, f"dropdowns without a toggle button: {missing}"


@pytest.mark.parametrize("entry", PAGES)
def test_no_stored_output_shows_a_traceback_or_warning(visit, entry):
    for out in visit(entry)["outputs"]:
        assert "traceback" not in out["classes"].split(), f"error output: {out['text'][:300]}"
        assert "Traceback (most recent call last)" not in out["text"], out["text"][:500]
        warning = re.search(r"\b[A-Z]\w*Warning: .{0,120}", out["text"])
        assert not warning, f"a Python warning is shown to readers: {warning.group(0)}"


@pytest.mark.parametrize("entry", PAGES)
def test_internal_links_resolve(visit, site, entry):
    bad = []
    for href in sorted(set(visit(entry)["links"])):
        if not href.startswith(site):
            continue
        url, fragment = urldefrag(href)
        target = HTML_DIR / unquote(urlparse(url).path).lstrip("/")
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            bad.append(f"{href}: no such file")
        elif fragment and target.suffix == ".html" and unquote(fragment) not in _ids_of(target):
            bad.append(f"{href}: no anchor #{fragment}")
    assert not bad, "broken links:\n" + "\n".join(bad)


def test_navigation_lists_every_page(visit, browser_context, site):
    page = browser_context.new_page()
    keep_offline(page)
    try:
        page.goto(f"{site}/{PAGES[0]}.html", wait_until="load")
        hrefs = page.eval_on_selector_all("nav.bd-docs-nav a.reference.internal", "els => els.map(a => a.href)")
    finally:
        page.close()
    listed = {urldefrag(h)[0].removeprefix(site + "/").removesuffix(".html") for h in hrefs}
    missing = [entry for entry in PAGES[1:] if entry not in listed]
    assert not missing, f"pages of the table of contents missing from the sidebar: {missing}"


def test_screenshots_were_saved(visit):
    for entry in sorted(_screenshot_pages()):
        visit(entry)
        shot = SCREENSHOT_DIR / f"{entry.replace('/', '_')}.png"
        assert shot.stat().st_size > 10_000, f"screenshot of {entry} is missing or blank"
