"""The built book as a reader sees it at a desktop width (1400 px) and a phone width (400 px) (issue 23).

On every page of the table of contents, at both widths:

* no table is wider than its container (``scrollWidth <= clientWidth + 1`` for every table and the output area
  holding it): a reader would have to scroll sideways to read it;
* every shown image's text is at least :data:`MIN_TEXT_PX` pixels high: the rendered scale (``clientWidth /
  naturalWidth``) times the size of the figure's text in the PNG (``FONT_SIZE / 72 * dpi``, the dpi read from the PNG's
  pHYs chunk, else ``savefig.dpi`` for figures and ``FRAME_DPI`` for scrubber frames);
* no stored ipywidget (no ``.jupyter-widgets``, no widget-view script) and no blank gap where a removed one was (a
  cell with no text and no picture that still takes up height).

Screenshots (kept, not compared) go to ``_build/e2e/screenshots/``: the landing page, the Findings page and two chapters
at both widths, one scrubber frame, and the navigation opened at 400 px. Search: served over http, Sphinx search
shows snippets; the landing page's "Reading offline" note says how to get them.
"""

from __future__ import annotations

import base64
import struct
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from e2e_support import HTML_DIR, keep_offline, toc_entries

from onelayer import plots, scrubber

PAGES = toc_entries()
WIDTHS = (1400, 400)
#: The smallest text, in CSS pixels, a figure may show.
MIN_TEXT_PX = 9.0
#: Where this file's screenshots go.
SHOTS = HTML_DIR.parent / "e2e" / "screenshots"
#: Pages photographed at both widths.
SHOT_PAGES = ("book/index", "book/findings", "book/walks/theorem31", "book/trees/forward_cot", "book/trees/forward_heads",
              "book/trees/forward_robustness")
#: The page whose first scrubber frame is photographed.
SCRUBBER_PAGE = "book/walks/theorem31"

MEASURE = r"""
() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const describe = (el) => {
    const section = el.closest('section');
    const heading = section && section.querySelector('h1, h2, h3, h4');
    return heading ? heading.textContent.replace(/#$/, '').trim().slice(0, 60) : '';
  };
  const wide = [];
  for (const table of article.querySelectorAll('table')) {
    // the table itself, its parent (a scroll container, if the theme wraps it in one) and the output area holding it
    const boxes = [table, table.parentElement, table.closest('.cell_output, .output')].filter(Boolean);
    for (const box of boxes) {
      if (box.scrollWidth > box.clientWidth + 1) {
        const what = box === table ? 'table' : box === table.parentElement ? 'the box around table' : 'the output of table';
        wide.push({what: what + '.' + (table.className || '(no class)').split(' ').join('.'),
                   scroll: box.scrollWidth, client: box.clientWidth, section: describe(table)});
        break;
      }
    }
  }
  const images = [...article.querySelectorAll('img')].filter(i => i.clientWidth > 0 && i.naturalWidth > 0).map(i => ({
    src: i.currentSrc || i.src, client: i.clientWidth, natural: i.naturalWidth,
    frame: !!i.closest('.onelayer-scrubber'), section: describe(i),
  }));
  const widgets = document.querySelectorAll('.jupyter-widgets, script[type="application/vnd.jupyter.widget-view+json"]').length;
  const gaps = [...article.querySelectorAll('div.cell')].filter(c => {
    if (c.offsetHeight <= 8) return false;
    if (c.textContent.trim()) return false;
    return !c.querySelector('img, svg, canvas, iframe, video, mjx-container');
  }).map(c => ({height: c.offsetHeight, section: describe(c), id: c.id}));
  // Sideways scrolling of the whole page: the document wider than the viewport, and the innermost elements that
  // stick out past its right edge (what a reader would have to scroll to), with the text they hold.
  const root = document.documentElement;
  const sticking = [...article.querySelectorAll('*')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.right > root.clientWidth + 1 && !e.closest('mjx-container, .MathJax') &&
      getComputedStyle(e).position !== 'fixed' && !hiddenByScroll(e);
  }).filter((e, _, all) => !all.some(o => o !== e && e.contains(o)))
    .slice(0, 8).map(e => ({tag: e.tagName.toLowerCase() + '.' + [...e.classList].join('.'),
                             right: Math.round(e.getBoundingClientRect().right), text: e.textContent.trim().slice(0, 60),
                             section: describe(e)}));
  function hiddenByScroll(e) {  // inside a box that scrolls or clips it (a wide code block scrolls on its own)
    for (let p = e.parentElement; p && p !== article; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden' || o === 'clip') return true;
    }
    return false;
  }
  const scripts = [...document.scripts].map(s => s.getAttribute('src') || '');
  return {wide, images, widgets, gaps, width: root.clientWidth, scroll: root.scrollWidth, sticking,
          embed: scripts.some(s => s.includes('ipywidgets/embed.js')),
          state: !!document.querySelector('script[type="application/vnd.jupyter.widget-state+json"]')};
}
"""


def png_dpi(data: bytes) -> float | None:
    """The dpi in a PNG's pHYs chunk (pixels per metre), or None."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    at = data.find(b"pHYs")
    if at < 0:
        return None
    x, _, unit = struct.unpack(">IIB", data[at + 4:at + 13])
    return x * 0.0254 if unit == 1 else None


@cache
def image_dpi(src: str) -> float | None:
    """The dpi of an image of the built book, from a data: URI or the file the URL names in the build."""
    if src.startswith("data:image/png;base64,"):
        return png_dpi(base64.b64decode(src.split(",", 1)[1]))
    path = HTML_DIR / unquote(urlparse(src).path).lstrip("/")
    if path.suffix.lower() == ".png" and path.exists():
        return png_dpi(path.read_bytes())
    return None


def text_px(image: dict) -> tuple[float, float]:
    """(text height in CSS px, the dpi used) of one measured image."""
    dpi = image_dpi(image["src"]) or (scrubber.FRAME_DPI if image["frame"] else plots.BOOK_STYLE["savefig.dpi"])
    return image["client"] / image["natural"] * plots.FONT_SIZE / 72 * dpi, dpi


@pytest.fixture(scope="module")
def measured(browser_context, site):
    """``measured(entry, width)``: what MEASURE finds on the page at that viewport width (cached)."""
    done: dict[tuple[str, int], dict] = {}
    SHOTS.mkdir(parents=True, exist_ok=True)

    def _measure(entry: str, width: int) -> dict:
        if (entry, width) in done:
            return done[entry, width]
        page = browser_context.new_page()
        keep_offline(page)
        page.set_viewport_size({"width": width, "height": 900})
        try:
            page.goto(f"{site}/{entry}.html", wait_until="load")
            page.wait_for_function("() => [...document.images].every(i => i.complete)")
            page.evaluate("() => document.fonts.ready.then(() => true)")
            if page.evaluate("() => !!(window.MathJax && MathJax.startup && MathJax.startup.promise)"):
                page.evaluate("() => MathJax.startup.promise.then(() => true)")
            result = page.evaluate(MEASURE)
            if entry in SHOT_PAGES:
                page.screenshot(path=str(SHOTS / f"{entry.replace('/', '_')}_{width}.png"))
                table = page.query_selector("article table")
                if table is not None:  # the page's first table, whole (a viewport shot may miss it)
                    table.screenshot(path=str(SHOTS / f"{entry.replace('/', '_')}_{width}_table.png"))
        finally:
            page.close()
        done[entry, width] = result
        return result

    return _measure


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("entry", PAGES)
def test_tables_fit_their_column(measured, entry, width):
    wide = measured(entry, width)["wide"]
    assert not wide, f"{entry} at {width} px: {len(wide)} tables wider than their column: " + "; ".join(
        f"{w['what']} {w['scroll']} > {w['client']} px (section {w['section']!r})" for w in wide)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("entry", PAGES)
def test_figure_text_is_at_least_9_px(measured, entry, width):
    small = []
    for image in measured(entry, width)["images"]:
        px, dpi = text_px(image)
        if px < MIN_TEXT_PX:
            name = image["src"][:40] if image["src"].startswith("data:") else Path(urlparse(image["src"]).path).name
            small.append(f"{'frame' if image['frame'] else 'image'} {name} in {image['section']!r}: {px:.1f} px "
                         f"({image['client']}/{image['natural']} px at {dpi:.0f} dpi)")
    assert not small, f"{entry} at {width} px: {len(small)} images with text below {MIN_TEXT_PX} px: " + "; ".join(small)


@pytest.mark.parametrize("entry", PAGES)
def test_no_widget_and_no_blank_gap(measured, entry):
    found = measured(entry, 1400)
    assert found["widgets"] == 0, f"{entry}: {found['widgets']} ipywidget elements (tag their cells remove-output)"
    assert not found["gaps"], f"{entry}: blank cells taking up height: {found['gaps']}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("entry", PAGES)
def test_page_does_not_scroll_sideways(measured, entry, width):
    """Nothing sticks out past the right edge of the viewport (issue 32: inline code references did not wrap at
    400 px); a code block or table that scrolls inside its own box is not the page scrolling."""
    found = measured(entry, width)
    assert found["scroll"] <= found["width"] + 1 and not found["sticking"], (
        f"{entry} at {width} px: the page is {found['scroll']} px wide in a {found['width']} px viewport; sticking out: "
        + "; ".join(f"{s['tag']} to {s['right']} px ({s['text']!r}, section {s['section']!r})" for s in found["sticking"]))


@pytest.mark.parametrize("entry", PAGES)
def test_no_widget_manager_without_a_widget(measured, entry):
    """No page draws a stored widget (test_no_widget_and_no_blank_gap), so none loads the 1.8 MB widget manager
    (_static/ipywidgets/embed.js) or ships widget state (tools/book_html.py drops both where no widget view is)."""
    found = measured(entry, 1400)
    assert not found["embed"] and not found["state"], (
        f"{entry}: {'embed.js' if found['embed'] else ''} {'widget state' if found['state'] else ''} with no widget")


def test_screenshots(measured, browser_context, site):
    """The pages of SHOT_PAGES at both widths, one scrubber frame, the navigation opened at 400 px."""
    for entry in SHOT_PAGES:
        for width in WIDTHS:
            measured(entry, width)
    page = browser_context.new_page()
    keep_offline(page)
    try:
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(f"{site}/{SCRUBBER_PAGE}.html", wait_until="load")
        player = page.query_selector(".onelayer-scrubber")
        assert player is not None, f"{SCRUBBER_PAGE} shows no scrubber"
        player.scroll_into_view_if_needed()
        player.screenshot(path=str(SHOTS / "scrubber_frame.png"))
        page.set_viewport_size({"width": 400, "height": 900})
        page.goto(f"{site}/book/index.html", wait_until="load")
        [b for b in page.query_selector_all(".primary-toggle") if b.is_visible()][0].click()
        page.wait_for_function("() => { const d = document.getElementById('pst-primary-sidebar-modal'); return d && d.open; }")
        page.screenshot(path=str(SHOTS / "navigation_400.png"))
    finally:
        page.close()
    expected = [f"{e.replace('/', '_')}_{w}.png" for e in SHOT_PAGES for w in WIDTHS] + ["scrubber_frame.png",
                                                                                        "navigation_400.png"]
    small = [name for name in expected if not (SHOTS / name).exists() or (SHOTS / name).stat().st_size < 5_000]
    assert not small, f"screenshots missing or blank in {SHOTS}: {small}"


SEARCH_TERM = "attention"


def _search(page, base: str) -> dict:
    page.goto(f"{base}/search.html?q={SEARCH_TERM}", wait_until="load")
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0"
                           " && /found|no pages/i.test((document.querySelector('#search-results') || {}).textContent || '')",
                           timeout=30_000)
    page.wait_for_timeout(1500)  # snippets arrive after the titles
    return page.evaluate("""() => ({
      results: document.querySelectorAll('#search-results li').length,
      snippets: [...document.querySelectorAll('#search-results li p.context')].filter(p => p.textContent.trim()).length,
    })""")


def test_search_over_http_shows_snippets(browser_context, site):
    page = browser_context.new_page()
    keep_offline(page)
    try:
        found = _search(page, site)
    finally:
        page.close()
    assert found["results"] > 0, f"searching {SEARCH_TERM!r} found nothing"
    assert found["snippets"] > 0, f"search over http showed {found['results']} results and no snippets"


def test_landing_page_has_the_reading_offline_note():
    import re

    text = " ".join(re.sub(r"<[^>]+>", "", (HTML_DIR / "book" / "index.html").read_text()).split())
    assert "Reading offline" in text and "python -m http.server -d _build/html" in text
