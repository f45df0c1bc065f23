"""The built HTML book in a real browser (headless chromium): every page of the table of contents.

Each page is loaded once (from a local http.server over ``_build/html``) and then
checked the way a reader would notice problems: errors in the console, images
that do not load, math that is not typeset or has TeX errors, theorem blocks and
cross-references that did not resolve, raw MyST markup, tracebacks or warnings in
stored outputs, links to pages or anchors that do not exist.

Offline. The book must work without a network: MathJax, fonts and scripts are
served from the build itself (``tools/book_html.py`` copies MathJax there from
the pinned wheel). Every request that would leave 127.0.0.1 is aborted and
recorded, and :func:`test_page_requests_nothing_from_another_host` fails on any.
So the math is typeset from the build's own copy, with the network blocked.

Accessibility. axe-core (the copy inside the pinned ``axe-playwright-python``
wheel, injected inline) runs on every page once MathJax is done; serious and
critical violations fail, images without alt text (``image-alt``) included: every figure
cell carries an ``alt`` in its ``mystnb.image`` metadata, widget figures get one from
:func:`onelayer.plots.describe_figure`, scrubber frames from their ``alt`` template.
Dark mode is checked on a page with figures: transparent PNGs get a light
background (book/_static/onelayer.css).

A summary per page (external requests, axe violations by impact) is printed at the
end of the run and written to ``_build/e2e/browser_report.json``.
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
    MATHJAX_SCRIPT,
    REPORT,
    SCREENSHOT_DIR,
    TOC_FILE,
    axe_script,
    is_local,
    keep_offline,
    part_openers,
    toc_entries,
)

PAGES = toc_entries()

#: Console messages from the theme/extensions to tolerate: none. The two every page had (issue 32) are fixed at
#: their cause: sphinx-thebe's inline script added twice by Sphinx 7 (tools/book_html.py) and pydata-sphinx-theme's
#: "Got invalid theme mode" on a first visit (html_context.default_mode in _config.yml).
KNOWN_UPSTREAM: list[re.Pattern] = []

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
      scripts: [...document.scripts].filter(s => /mathjax/i.test(s.src)).map(s => s.src),
      version: (window.MathJax && MathJax.version) || null,
    },
    blocks: [...article.querySelectorAll('div.proof, div.exercise, div.solution')].map(b => ({
      classes: b.className,
      title: (b.querySelector(':scope > .admonition-title') || {textContent: ''}).textContent.trim(),
      content: b.textContent.trim().length,
    })),
    xrefs: [...article.querySelectorAll('.xref')].map(x => ({classes: x.className, text: x.textContent.trim(), linked: !!x.closest('a[href]')})),
    outputs: [...article.querySelectorAll('.cell_output, .output')].map(o => ({classes: o.className, text: o.textContent})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    lang: document.documentElement.lang,
    // Images without an alt attribute, with where they are (for test_images_have_alt_text's report).
    no_alt: [...article.querySelectorAll('img:not([alt])')].map(i => {
      const section = i.closest('section');
      const heading = section && section.querySelector('h1, h2, h3, h4');
      return {widget: !!i.closest('.jupyter-widgets'), src: i.src.startsWith('data:') ? 'data:' + i.src.slice(5, 20) : i.src,
              section: heading ? heading.textContent.replace(/#$/, '').trim() : ''};
    }),
    widgets: [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')].map(v => ({
      rendered: !!v.parentElement.querySelector('.jupyter-widgets'),
      images: [...v.parentElement.querySelectorAll('img')].map(i => i.naturalWidth),
    })),
    // Every resource the page fetched (the Resource Timing API lists fonts and scripts loaded later too).
    resources: performance.getEntriesByType('resource').map(r => r.name),
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


#: axe-core rules whose violations count (all of axe's default WCAG 2.x A/AA and best-practice rules).
#: ``preload: false``: axe would re-fetch every stylesheet (for css-orientation-lock) and resolves the theme's
#: ``@import "../basic.css"`` against the page instead of the stylesheet, a 404 that is axe's own.
AXE_OPTIONS = {"resultTypes": ["violations"], "preload": False}
#: Rules left out of the serious/critical assertion (none: every image has alt text since issue 15).
AXE_EXCLUDED_FROM_ASSERT: set[str] = set()
BLOCKING = ("serious", "critical")

RUN_AXE = """
async (options) => {
  const results = await axe.run(document, options);
  return results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 240), summary: (n.failureSummary || '').slice(0, 300)})),
  }));
}
"""


def run_axe(page) -> list[dict]:
    """axe-core's violations on the page as it is now (the script is injected inline: no request)."""
    page.add_script_tag(content=axe_script())
    return page.evaluate(RUN_AXE, AXE_OPTIONS)


def axe_counts(violations: list[dict]) -> dict[str, int]:
    """Number of violating elements by impact."""
    counts = {"critical": 0, "serious": 0, "moderate": 0, "minor": 0}
    for v in violations:
        counts[v["impact"] or "minor"] += len(v["nodes"])
    return counts


def record(entry: str, report: dict) -> None:
    REPORT[entry] = {
        "external_requests": len(report["external"]),
        "external": report["external"],
        "axe": axe_counts(report["axe"]),
        "axe_rules": sorted({f"{v['impact']}:{v['id']}" for v in report["axe"]}),
    }


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
        external: list[str] = []

        def on_console(msg):
            if msg.type != "error":
                return
            source = (msg.location or {}).get("url", "")
            if source and not is_local(source):
                return  # an aborted request to another host: test_page_requests_nothing_from_another_host fails on it
            if source.endswith("/favicon.ico") or any(p.match(msg.text) for p in KNOWN_UPSTREAM):
                return
            if msg.text.startswith("Failed to load resource: net::ERR_INTERNET_DISCONNECTED"):
                return  # same: the request is in `external`
            problems.append(f"console error: {msg.text} ({source})")

        def on_pageerror(err):
            if not any(p.match(err.message) for p in KNOWN_UPSTREAM):
                problems.append(f"uncaught exception: {err.message}\n{err.stack}")

        page.on("console", on_console)
        page.on("pageerror", on_pageerror)
        page.on("response", lambda r: r.status >= 400 and is_local(r.url) and not r.url.endswith("/favicon.ico")
                and problems.append(f"HTTP {r.status} for {r.url}"))
        keep_offline(page, external)
        try:
            page.goto(f"{site}/{entry}.html", wait_until="load")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            has_math = page.evaluate("() => document.querySelectorAll('.math').length > 0")
            mathjax_error = None
            if has_math:
                try:
                    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20_000)
                    page.evaluate("() => MathJax.startup.promise.then(() => true)")
                except Exception as exc:
                    mathjax_error = f"MathJax did not start from the build's copy ({MATHJAX_SCRIPT}): {exc}"
            widgets_drawn = """() => [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
                .every(v => v.parentElement.querySelector('.jupyter-widgets'))"""
            try:
                page.wait_for_function(widgets_drawn, timeout=20_000)
            except Exception:
                problems.append("stored widgets were not drawn within 20 s (_static/ipywidgets/embed.js)")
            page.evaluate("() => document.fonts.ready.then(() => true)")
            report = page.evaluate(COLLECT)
            report["problems"] = problems
            report["mathjax_error"] = mathjax_error
            if entry in shots:
                page.screenshot(path=str(SCREENSHOT_DIR / f"{entry.replace('/', '_')}.png"))
            report["axe"] = run_axe(page)
            report["external"] = sorted(set(external))
        finally:
            page.close()
        record(entry, report)
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
def test_page_requests_nothing_from_another_host(visit, entry):
    report = visit(entry)
    assert report["external"] == [], f"{len(report['external'])} request(s) to other hosts: {report['external']}"
    remote = [r for r in report["resources"] if not is_local(r)]
    assert not remote, f"resources fetched from other hosts: {remote}"


@pytest.mark.parametrize("entry", PAGES)
def test_math_is_typeset_without_errors(visit, site, entry):
    report = visit(entry)
    math = report["math"]
    raw_dollars = re.findall(r"\$[^$\n]{0,80}\\[A-Za-z]+[^$\n]{0,80}\$", report["prose"])
    assert not raw_dollars, f"dollar math left as text (not parsed as math): {raw_dollars[:3]}"
    if math["count"] == 0:
        return
    assert math["configured"] and math["scripts"], "the page has math but MathJax is not configured/loaded by the page"
    assert all(src.startswith(site + "/") and urldefrag(src)[0].split("?")[0].endswith(MATHJAX_SCRIPT)
               for src in math["scripts"]), \
        f"MathJax is not loaded from the build's {MATHJAX_SCRIPT}: {math['scripts']}"
    assert report["mathjax_error"] is None, report["mathjax_error"]
    assert math["typeset"] == math["count"], f"{math['count'] - math['typeset']} of {math['count']} math elements not typeset"
    assert not math["errors"], f"TeX errors: {math['errors'][:5]}"
    assert not math["undefined"], f"undefined TeX macros: {sorted(set(math['undefined']))}"
    leftovers = re.findall(r"\\\(.{0,40}|\\\[.{0,40}", report["prose"])
    assert not leftovers, f"TeX delimiters left in the text: {leftovers[:3]}"


@pytest.mark.parametrize("entry", PAGES)
def test_no_stored_widget_reaches_the_page(visit, entry):
    """A stored ipywidget draws from saved state and looks live but is not: its cell is tagged remove-output and a
    precomputed figure or player shows the same thing (issue 23; tests/test_reader_book.py names the cells)."""
    widgets = visit(entry)["widgets"]
    assert not widgets, f"{len(widgets)} stored widget view(s) on the page (tag their cells remove-output)"


def test_math_heavy_page_is_typeset_offline_from_the_build(visit, site):
    """The page with the most math, network blocked: MathJax 3.2.2 and its fonts come from the build."""
    assert (HTML_DIR / MATHJAX_SCRIPT).is_file(), f"{MATHJAX_SCRIPT} is not in the build (tools/book_html.py)"
    counts = {entry: visit(entry)["math"]["count"] for entry in PAGES}
    entry = max(counts, key=counts.get)
    report = visit(entry)
    assert report["math"]["count"] >= 20, f"no math-heavy page? {counts}"
    assert report["external"] == [], report["external"]
    assert report["math"]["version"] == "3.2.2", report["math"]["version"]
    assert report["math"]["typeset"] == report["math"]["count"] > 0
    fonts = [r for r in report["resources"] if r.endswith(".woff")]
    assert fonts and all(f.startswith(f"{site}/_static/mathjax/output/chtml/fonts/") for f in fonts), fonts
    assert "\\(" not in report["prose"] and "\\[" not in report["prose"], f"raw TeX on {entry}"


@pytest.mark.parametrize("entry", PAGES)
def test_no_serious_or_critical_accessibility_violations(visit, entry):
    report = visit(entry)
    blocking = [
        f"{v['impact']} {v['id']} ({v['help']}): " + "; ".join(f"{n['target']}: {n['html'][:120]}" for n in v["nodes"][:4])
        for v in report["axe"]
        if v["impact"] in BLOCKING and v["id"] not in AXE_EXCLUDED_FROM_ASSERT
    ]
    assert report["lang"], "<html> has no lang"
    assert not blocking, "axe-core:\n" + "\n".join(blocking)


def test_images_have_alt_text(visit):
    """No image without alt text on any page; a failure names the page, the section and the image."""
    missing = []
    for entry in PAGES:
        report = visit(entry)
        flagged = sum(len(v["nodes"]) for v in report["axe"] if v["id"] == "image-alt")
        where = [f"{entry} § {i['section']!r}: {'figure inside a stored widget (Output)' if i['widget'] else i['src']}"
                 for i in report["no_alt"]]
        missing += where or ([f"{entry}: {flagged} image(s)"] if flagged else [])
    assert not missing, f"{len(missing)} images without alt text:\n" + "\n".join(missing)


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


#: A page with figures (matplotlib PNGs) and a widget's figure.
DARK_MODE_PAGE = "book/selector"

DARK_PROBE = """
() => {
  const article = document.querySelector('article.bd-article');
  const images = [...article.querySelectorAll('img')].filter(i => i.naturalWidth > 0);
  const opaque = (img) => {  // does the PNG cover its box, or does the page show through?
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const data = ctx.getImageData(0, 0, c.width, c.height).data;
    for (let k = 3; k < data.length; k += 4 * 97) if (data[k] < 255) return false;
    return true;
  };
  return {
    theme: document.documentElement.dataset.theme,
    page: getComputedStyle(document.body).backgroundColor,
    images: images.map(i => ({src: i.src.slice(-60), background: getComputedStyle(i).backgroundColor, opaque: opaque(i)})),
  };
}
"""


def _rgb(css: str) -> tuple[float, ...]:
    values = [float(v) for v in re.findall(r"[\d.]+", css)]
    return tuple(values[:3]) + ((values[3],) if len(values) > 3 else (1.0,))


def _luminance(rgb) -> float:
    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_dark_mode_gives_transparent_figures_a_light_background(browser_context, site):
    """A reader whose system is in dark mode: the theme switches to dark, the figures stay readable."""
    page = browser_context.new_page()
    external: list[str] = []
    keep_offline(page, external)
    page.emulate_media(color_scheme="dark")  # the theme's default mode is "auto": it follows the system
    try:
        page.goto(f"{site}/{DARK_MODE_PAGE}.html", wait_until="load")
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        probe = page.evaluate(DARK_PROBE)
        page.screenshot(path=str(SCREENSHOT_DIR / f"{DARK_MODE_PAGE.replace('/', '_')}_dark.png"))
        violations = run_axe(page)
    finally:
        page.close()
    assert probe["theme"] == "dark", probe["theme"]
    assert _luminance(_rgb(probe["page"])) < 0.1, f"the page is not dark: {probe['page']}"
    # Today's figures are saved with a white facecolor (opaque); a figure saved with a transparent one
    # (matplotlib-inline's default) would show the dark page through it. Every image must have a light
    # opaque background behind it, so that either kind stays readable.
    assert probe["images"], f"no image on {DARK_MODE_PAGE}"
    for image in probe["images"]:
        rgba = _rgb(image["background"])
        assert rgba[3] == 1.0 and _luminance(rgba) > 0.9, f"{image['src']}: background {image['background']} in dark mode"
    blocking = [f"{v['impact']} {v['id']}: {[n['target'] for n in v['nodes'][:3]]}" for v in violations
                if v["impact"] in BLOCKING and v["id"] not in AXE_EXCLUDED_FROM_ASSERT]
    assert not blocking, "axe-core in dark mode:\n" + "\n".join(blocking)
    assert external == [], external


#: The page whose sidebar buttons are clicked (any chapter: every page has the same header).
TOGGLE_PAGE = "book/findings"

TOGGLE_PROBE = """() => {
  const visible = (el) => !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const dialog = document.getElementById("pst-primary-sidebar-modal");
  const secondaryDialog = document.getElementById("pst-secondary-sidebar-modal");
  const sidebar = document.getElementById("pst-primary-sidebar");
  return {
    primaryDialogOpen: !!dialog && dialog.open,
    secondaryDialogOpen: !!secondaryDialog && secondaryDialog.open,
    sidebarHidden: !!sidebar && sidebar.classList.contains("pst-sidebar-hidden"),
    sidebarVisible: visible(sidebar) || (!!dialog && dialog.open),
    links: document.querySelectorAll("dialog[open] nav.bd-docs-nav a.reference.internal").length,
  };
}"""


def _visible_button(page, selector):
    buttons = [b for b in page.query_selector_all(selector) if b.is_visible()]
    assert buttons, f"no visible {selector} button"
    return buttons[0]


@pytest.mark.parametrize("width", [400, 900, 1400])
def test_visible_sidebar_buttons_work(browser_context, site, width):
    """A reader clicks the visible "Site navigation" button: at 400 and 900 px the chapter list opens (as a dialog),
    at 1400 px the sidebar collapses and comes back; the visible "On this page" button opens the contents where the
    layout hides them."""
    page = browser_context.new_page()
    keep_offline(page)
    page.set_viewport_size({"width": width, "height": 900})
    try:
        page.goto(f"{site}/{TOGGLE_PAGE}.html", wait_until="load")
        before = page.evaluate(TOGGLE_PROBE)
        _visible_button(page, ".primary-toggle").click()
        after = page.evaluate(TOGGLE_PROBE)
        if width < 992:
            assert not before["primaryDialogOpen"] and after["primaryDialogOpen"], (before, after)
            assert after["links"] > 10, "the opened dialog holds no chapter list"
            page.keyboard.press("Escape")
            assert not page.evaluate(TOGGLE_PROBE)["primaryDialogOpen"]
        else:
            assert not before["sidebarHidden"] and after["sidebarHidden"], (before, after)
            _visible_button(page, ".primary-toggle").click()
            assert not page.evaluate(TOGGLE_PROBE)["sidebarHidden"]
        secondary = [b for b in page.query_selector_all(".secondary-toggle") if b.is_visible()]
        if secondary:  # shown where the layout folds the contents away
            secondary[0].click()
            assert page.evaluate(TOGGLE_PROBE)["secondaryDialogOpen"], f"'On this page' did nothing at {width} px"
    finally:
        page.close()
