#!/usr/bin/env bash
# Set-up for `make e2e` (tests/e2e): installs what a real-browser test needs, only when missing.
#  1. Debian's chromium (apt-get). Playwright (PyPI, pinned in requirements.txt) drives it;
#     `playwright install`, which downloads a browser build of its own, is never used.
#  2. MathJax 3 from the npm registry (`npm pack`), unpacked into _build/e2e/mathjax. The book
#     loads MathJax from a CDN; the tests answer that request from this copy, so that math is
#     really typeset on a machine without internet. Without npm, the math test falls back to
#     checking the MathJax configuration and the TeX source, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM="${ONELAYER_CHROMIUM:-/usr/bin/chromium}"
MATHJAX_VERSION=3.2.2   # what the CDN URL .../mathjax@3/... serves
MATHJAX_DIR=_build/e2e/mathjax

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "e2e_setup: need root to run: $*" >&2; return 1
  fi
}

if [ -x "$CHROMIUM" ]; then
  echo "e2e_setup: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM") is installed"
else
  echo "e2e_setup: installing Debian's chromium"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq chromium >/dev/null
  "$CHROMIUM" --version
fi

if grep -qs "\"version\": \"$MATHJAX_VERSION\"" "$MATHJAX_DIR/package.json" && [ -f "$MATHJAX_DIR/es5/tex-mml-chtml.js" ]; then
  echo "e2e_setup: MathJax $MATHJAX_VERSION is in $MATHJAX_DIR"
elif command -v npm >/dev/null 2>&1; then
  echo "e2e_setup: fetching MathJax $MATHJAX_VERSION (npm pack) into $MATHJAX_DIR"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "mathjax@$MATHJAX_VERSION" >/dev/null)
  rm -rf "$MATHJAX_DIR"
  mkdir -p "$MATHJAX_DIR"
  tar -xzf "$tmp/mathjax-$MATHJAX_VERSION.tgz" -C "$MATHJAX_DIR" --strip-components=1
else
  echo "e2e_setup: npm not found; math will be checked without typesetting (see tests/e2e/test_browser.py)" >&2
fi
