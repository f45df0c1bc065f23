"""Shared pieces of the end-to-end tests: Debian's chromium driven by Playwright.

Nothing here downloads a browser: Playwright (PyPI) drives the chromium that
``tools/e2e_setup.sh`` installs with apt-get. The machine may have no network,
so every request that leaves 127.0.0.1 is answered locally: MathJax 3 from the
copy ``tools/e2e_setup.sh`` unpacks from the npm registry (when present), every
other CDN request is aborted.

Run as a script to take one screenshot of the built book (for the README)::

    .venv/bin/python tests/e2e/e2e_support.py book/index docs/screenshot.png
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import socket
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: The built HTML under test (override with ONELAYER_E2E_HTML for a scratch build).
HTML_DIR = Path(os.environ.get("ONELAYER_E2E_HTML", ROOT / "_build" / "html"))
#: The table of contents whose pages are tested (override with ONELAYER_E2E_TOC for a partial build).
TOC_FILE = Path(os.environ.get("ONELAYER_E2E_TOC", ROOT / "_toc.yml"))
#: Screenshots of a few pages land here.
SCREENSHOT_DIR = HTML_DIR.parent / "screenshots"
#: MathJax 3 unpacked from the npm package ``mathjax`` by tools/e2e_setup.sh (contains ``es5/``).
MATHJAX_DIR = Path(os.environ.get("ONELAYER_MATHJAX_DIR", ROOT / "_build" / "e2e" / "mathjax"))

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

_MATHJAX_URL = re.compile(r"^https://cdn\.jsdelivr\.net/npm/mathjax@3[^/]*/(?P<path>[^?#]+)")


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


def is_local(url: str) -> bool:
    return url.startswith(("http://127.0.0.1", "http://localhost", "ws://127.0.0.1", "data:", "blob:", "about:"))


def keep_offline(page, mathjax_dir: Path | None = MATHJAX_DIR) -> None:
    """Answer MathJax requests from ``mathjax_dir`` and abort every other request leaving 127.0.0.1."""

    def handle(route):
        url = route.request.url
        match = _MATHJAX_URL.match(url)
        if match and mathjax_dir is not None:
            path = (mathjax_dir / match["path"]).resolve()
            if path.is_file() and mathjax_dir.resolve() in path.parents:
                route.fulfill(path=str(path))
                return
        route.abort("internetdisconnected")

    page.route(lambda url: not is_local(url), handle)


def mathjax_available(mathjax_dir: Path = MATHJAX_DIR) -> bool:
    return (mathjax_dir / "es5" / "tex-mml-chtml.js").is_file()


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
            if mathjax_available():
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
