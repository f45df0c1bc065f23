"""Shared pieces of the end-to-end tests: Debian's chromium driven by Playwright.

Nothing here downloads a browser: Playwright (PyPI) drives the chromium that
``tools/e2e_setup.sh`` installs with apt-get. The built book must work offline:
it serves MathJax, fonts and scripts from its own ``_static`` (``tools/book_html.py``).
:func:`keep_offline` aborts every request that leaves this machine and records it,
so a test can fail on it.

Run as a script to take one screenshot of the built book (for the README)::

    .venv/bin/python tests/e2e/e2e_support.py book/index docs/screenshot.png
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import shutil
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[2]

#: The built HTML under test (override with ONELAYER_E2E_HTML for a scratch build).
HTML_DIR = Path(os.environ.get("ONELAYER_E2E_HTML", ROOT / "_build" / "html"))
#: The table of contents whose pages are tested (override with ONELAYER_E2E_TOC for a partial build).
TOC_FILE = Path(os.environ.get("ONELAYER_E2E_TOC", ROOT / "_toc.yml"))
#: Screenshots of a few pages land here.
SCREENSHOT_DIR = HTML_DIR.parent / "screenshots"
#: Where the built book has MathJax (copied there by tools/book_html.py; ``mathjax_path`` in _config.yml).
MATHJAX_SCRIPT = "_static/mathjax/tex-mml-chtml.js"

#: Flags for a quiet, offline, throw-away headless chromium.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}


def find_chromium() -> str | None:
    """Path of the chromium executable (ONELAYER_CHROMIUM, then PATH, then /usr/bin/chromium), or None."""
    for candidate in (os.environ.get("ONELAYER_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def launch_context(playwright, user_data_dir, executable: str):
    """A headless persistent chromium context with a fresh profile in ``user_data_dir``."""
    context = playwright.chromium.launch_persistent_context(
        str(user_data_dir),
        executable_path=executable,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
    )
    context.set_default_timeout(30_000)
    return context


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@contextlib.contextmanager
def serve_directory(directory: Path):
    """Serve ``directory`` on a free 127.0.0.1 port in a thread; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def is_local(url: str) -> bool:
    """True for what never leaves this machine: the local server, file://, data:, blob:, about:."""
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about", "file", "chrome", "chrome-extension", "devtools"):
        return True
    return parsed.scheme in ("http", "https", "ws", "wss") and parsed.hostname in _LOCAL_HOSTS


def keep_offline(page, external: list[str] | None = None) -> None:
    """Abort every request that would leave this machine; append its URL to ``external`` if given.

    Nothing is answered from a local copy any more: a page that needs the network shows it.
    """

    def handle(route):
        if external is not None:
            external.append(route.request.url)
        route.abort("internetdisconnected")

    page.route(lambda url: not is_local(url), handle)


#: Per page of the book: external requests and axe-core counts (filled by test_browser.py, printed by conftest.py).
REPORT: dict[str, dict] = {}
REPORT_FILE = HTML_DIR.parent / "e2e" / "browser_report.json"


@functools.cache
def axe_script() -> str:
    """axe-core's ``axe.min.js`` from the pinned wheel ``axe-playwright-python`` (no npm, no CDN)."""
    import importlib.resources

    return importlib.resources.files("axe_playwright_python").joinpath("axe.min.js").read_text()


def mathjax_is_built(html_dir: Path = HTML_DIR) -> bool:
    return (html_dir / MATHJAX_SCRIPT).is_file()


def toc_entries(toc_file: Path = TOC_FILE) -> list[str]:
    """Every document of the table of contents, root first, as Jupyter Book's own parser reads it."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    return list(parse_toc_yaml(str(toc_file)).keys())


def part_openers(toc_file: Path = TOC_FILE) -> list[str]:
    """The first document of every part (caption) of the table of contents."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    site = parse_toc_yaml(str(toc_file))
    return [str(tree.items[0]) for tree in site[site.root.docname].subtrees if tree.items]


def screenshot(entry: str, out: Path, *, html_dir: Path = HTML_DIR, full_page: bool = False) -> Path:
    """Render one page of the built book to a PNG (used for the README's screenshot)."""
    import tempfile

    from playwright.sync_api import sync_playwright

    executable = find_chromium()
    if executable is None:
        raise SystemExit("chromium not found: run tools/e2e_setup.sh")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with serve_directory(html_dir) as base, sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        context = launch_context(pw, profile, executable)
        try:
            page = context.new_page()
            keep_offline(page)
            page.goto(f"{base}/{entry}.html", wait_until="load")
            if page.evaluate("() => document.querySelectorAll('.math').length > 0"):
                page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
                page.evaluate("() => MathJax.startup.promise.then(() => true)")
            page.screenshot(path=str(out), full_page=full_page)
        finally:
            context.close()
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: e2e_support.py PAGE OUT.png   (PAGE as in _toc.yml, e.g. book/index)")
    print(screenshot(sys.argv[1], Path(sys.argv[2])))
