"""The build-time half of the offline check (tools/book_html.py), without a browser.

The browser test catches a request to another host when a page makes it; the scan in
tools/book_html.py fails the strict build before that, on what the pages and stylesheets
name. These tests show the scan finds each kind of resource, ignores plain links, and that
the built book is clean.
"""

from __future__ import annotations

import sys

import pytest

from e2e_support import HTML_DIR, MATHJAX_SCRIPT, ROOT

sys.path.insert(0, str(ROOT / "tools"))
import book_html  # noqa: E402


def test_scan_finds_every_kind_of_external_resource(tmp_path):
    (tmp_path / "page.html").write_text(
        '<html><head><script src="https://cdn.example/x.js"></script>'
        '<link rel="stylesheet" href="//fonts.example/css">'
        '<link rel="canonical" href="https://example.org/page.html">'
        '<style>@import "https://a.example/b.css"; .x {background: url(https://img.example/y.png)}</style></head>'
        '<body><img src="https://img.example/z.png"><a href="https://example.org">a link is fine</a>'
        '<script src="_static/local.js"></script><img src="data:image/png;base64,AAAA">'
        '<script src="x.js" data-jupyter-widgets-cdn="https://cdn.jsdelivr.net/npm/"></script></body></html>'
    )
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "s.css").write_text("@font-face {src: url('https://fonts.example/f.woff2')} a {b: url(local.png)}")
    found = book_html.external_resources(tmp_path)
    assert found == {
        "_static/s.css": ["https://fonts.example/f.woff2"],
        "page.html": sorted([
            "https://cdn.example/x.js", "//fonts.example/css", "https://a.example/b.css", "https://img.example/y.png",
            "https://img.example/z.png", "https://cdn.jsdelivr.net/npm/",
        ]),
    }


def test_built_book_names_no_external_resource():
    if not (HTML_DIR / "index.html").exists():
        pytest.skip(f"no built book at {HTML_DIR}")
    assert (HTML_DIR / MATHJAX_SCRIPT).is_file()
    assert (HTML_DIR / "_static" / "ipywidgets" / "embed.js").is_file()
    assert book_html.external_resources(HTML_DIR) == {}
