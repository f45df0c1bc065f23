#!/usr/bin/env bash
# Set-up for `make e2e` (tests/e2e): installs what a real-browser test needs, only when missing.
# Debian's chromium (apt-get). Playwright (PyPI, pinned in requirements.txt) drives it;
# `playwright install`, which downloads a browser build of its own, is never used.
# Nothing else: the built book carries its own MathJax and widget manager (tools/book_html.py) and
# axe-core comes inside the pinned wheel axe-playwright-python, so the tests need no network.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM="${ONELAYER_CHROMIUM:-/usr/bin/chromium}"

if [ -x "$CHROMIUM" ]; then
  echo "e2e_setup: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM") is installed"
else
  echo "e2e_setup: installing Debian's chromium"
  bash tools/apt_install.sh chromium
  "$CHROMIUM" --version
fi

