"""The Findings page as a reader meets it (issue 32): both papers' verdict grids on the first screen, every verdict
coloured by its class, every grid cell and every claim linking to an anchor that exists, no sideways scrolling at
400 px; screenshots at 1400 and 400 px in ``_build/e2e/screenshots/`` (``findings_first_screen_<width>.png``).

The anchors are checked in the built pages they point to (each chapter's ``claim-<slug>`` label), fetched once per
chapter over the local server.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

import pytest

from e2e_support import HTML_DIR, keep_offline

SHOTS = HTML_DIR.parent / "e2e" / "screenshots"
PAGE = "book/findings"
FIRST_SCREEN = {"width": 1400, "height": 900}

READ = r"""
() => {
  const art = document.querySelector('article.bd-article') || document.body;
  const base = getComputedStyle(art).color;
  const grids = [...art.querySelectorAll('.onelayer-grid')].map(g => {
    const r = g.getBoundingClientRect();
    return {top: r.top + scrollY, bottom: r.bottom + scrollY, cells: g.querySelectorAll('a.onelayer-cell').length};
  });
  const cells = [...art.querySelectorAll('a.onelayer-cell')].map(a => ({
    href: a.href, cls: a.className, bg: getComputedStyle(a).backgroundColor}));
  const verdicts = [...art.querySelectorAll('.onelayer-verdict')].map(v => ({
    cls: v.className, color: getComputedStyle(v).color}));
  const claims = [...art.querySelectorAll('.onelayer-claim')].map(c => {
    const a = c.querySelector('a.reference');
    return {id: c.id, href: a ? a.href : null};
  });
  return {grids, cells, verdicts, claims, base, height: document.documentElement.scrollHeight,
          scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth};
}
"""


@pytest.fixture(scope="module")
def findings_page(browser_context, site):
    """What the page shows at 1400 x 900 and at 400 px (with a screenshot of the first screen at each width)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser_context.new_page()
    keep_offline(page)
    out = {}
    try:
        for width, height in ((1400, 900), (400, 900)):
            page.set_viewport_size({"width": width, "height": height})
            page.goto(f"{site}/{PAGE}.html", wait_until="load")
            page.wait_for_timeout(300)
            out[width] = page.evaluate(READ)
            page.screenshot(path=str(SHOTS / f"findings_first_screen_{width}.png"))
    finally:
        page.close()
    return out


def test_both_grids_are_on_the_first_screen(findings_page):
    grids = findings_page[1400]["grids"]
    assert len(grids) == 2, f"{len(grids)} verdict grids on {PAGE}, expected the two papers'"
    assert all(g["cells"] > 0 for g in grids)
    assert max(g["bottom"] for g in grids) <= FIRST_SCREEN["height"], \
        f"the grids end at y = {max(g['bottom'] for g in grids):.0f} px, below the first screen (900 px)"


def test_every_verdict_has_its_class_colour(findings_page):
    shown = findings_page[1400]
    assert shown["cells"] and shown["verdicts"]
    uncoloured = [c for c in shown["cells"] if "verdict-" not in c["cls"] or c["bg"] in ("rgba(0, 0, 0, 0)", "")]
    assert not uncoloured, f"{len(uncoloured)} grid cells without a class colour: {uncoloured[:3]}"
    plain = [v for v in shown["verdicts"] if "verdict-" not in v["cls"] or v["color"] == shown["base"]]
    assert not plain, f"{len(plain)} claim verdicts in the text colour: {plain[:3]}"


def test_every_cell_and_claim_links_to_an_anchor_that_exists(findings_page, browser_context, site):
    shown = findings_page[1400]
    targets = [c["href"] for c in shown["cells"]] + [c["href"] for c in shown["claims"]]
    assert None not in targets, "a claim without its evidence link"
    assert all(urlparse(t).fragment for t in targets), "a link to the top of a chapter, not to its section"
    by_page: dict[str, set[str]] = {}
    for t in targets:
        parsed = urlparse(t)
        by_page.setdefault(urljoin(t, parsed.path), set()).add(parsed.fragment)
    page = browser_context.new_page()
    keep_offline(page)
    missing = []
    try:
        for url, fragments in sorted(by_page.items()):
            page.goto(url, wait_until="domcontentloaded")
            ids = set(page.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)"))
            missing += [f"{urlparse(url).path}#{f}" for f in sorted(fragments - ids)]
    finally:
        page.close()
    assert not missing, f"{len(missing)} links to anchors that do not exist: {missing[:5]}"


def test_no_sideways_scrolling_at_400_px(findings_page):
    shown = findings_page[400]
    assert shown["scrollWidth"] <= shown["clientWidth"] + 1, \
        f"{PAGE} scrolls sideways at 400 px: {shown['scrollWidth']} > {shown['clientWidth']} px"


def test_screenshots_land(findings_page):
    for width in (1400, 400):
        shot = SHOTS / f"findings_first_screen_{width}.png"
        assert shot.exists() and shot.stat().st_size > 5_000, f"{shot} missing or blank"
