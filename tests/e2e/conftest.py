"""End-to-end tests (real browser, JupyterLab) run only with ONELAYER_E2E=1 (``make e2e``).

A plain ``pytest tests`` (``make test``) skips them: they need chromium, a built
book and a minute of CPU. ``make e2e`` runs ``tools/e2e_setup.sh`` and sets the
variable. Playwright drives Debian's chromium; it never downloads a browser.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from e2e_support import HTML_DIR, REPORT, REPORT_FILE, find_chromium, launch_context, serve_directory

HERE = Path(__file__).resolve().parent
ENABLED = os.environ.get("ONELAYER_E2E") == "1"


def pytest_collection_modifyitems(config, items):
    if ENABLED:
        return
    skip = pytest.mark.skip(reason="end-to-end test: runs with ONELAYER_E2E=1 (make e2e)")
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def chromium_executable() -> str:
    path = find_chromium()
    if path is None:
        pytest.skip("chromium is not installed: run tools/e2e_setup.sh (apt-get install chromium)")
    return path


@pytest.fixture(scope="session")
def playwright_driver():
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is missing: pip install -r requirements.txt")
    with sync_api.sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser_context(playwright_driver, chromium_executable, tmp_path_factory):
    """One headless chromium with a fresh profile for the whole session."""
    context = launch_context(playwright_driver, tmp_path_factory.mktemp("chromium-profile"), chromium_executable)
    yield context
    context.close()


@pytest.fixture(scope="module")
def site():
    """The built book served on 127.0.0.1 (its base address); skips when no book is built."""
    if not (HTML_DIR / "index.html").exists():
        pytest.skip(f"no built book at {HTML_DIR}: run 'make book' first (or set ONELAYER_E2E_HTML)")
    with serve_directory(HTML_DIR) as base:
        yield base


def pytest_terminal_summary(terminalreporter):
    """Per page: requests to other hosts (should be 0) and axe-core violations by impact."""
    if not REPORT:
        return
    import json

    REPORT_FILE.parent.mkdir(parents=True, exist_ok=True)
    REPORT_FILE.write_text(json.dumps(REPORT, indent=1, sort_keys=True))
    tr = terminalreporter
    tr.section("built book: external requests and axe-core violations per page")
    tr.write_line(f"{'page':40} {'external':>8} {'critical':>8} {'serious':>8} {'moderate':>8} {'minor':>6}  rules")
    for entry, row in REPORT.items():
        axe = row["axe"]
        tr.write_line(f"{entry:40} {row['external_requests']:8d} {axe['critical']:8d} {axe['serious']:8d} "
                      f"{axe['moderate']:8d} {axe['minor']:6d}  {' '.join(row['axe_rules'])}")
    tr.write_line(f"(written to {REPORT_FILE})")
