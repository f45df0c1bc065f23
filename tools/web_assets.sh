#!/usr/bin/env bash
# The one browser asset of the HTML book that no PyPI wheel ships: the ipywidgets HTML manager, which draws
# the chapters' stored widgets (sliders and the figure in their Output widget) without a kernel.
# Fetched with `npm pack` at a pinned version and checked against a pinned SHA-256, unpacked into
# _build/web_assets/html-manager; tools/book_html.py copies dist/embed.js and its fonts into the build
# (nb_ipywidgets_js in _config.yml points the pages at _static/ipywidgets/embed.js instead of a CDN).
# embed.js is self-contained (the built-in widgets, no require.js). MathJax comes from PyPI instead
# (django-static-mathjax in requirements.txt). Called by `make book`, and by tools/book_html.py when
# the directory is missing. Does nothing when the pinned version is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

HTML_MANAGER_VERSION=1.0.15
HTML_MANAGER_SHA256=2b9d65cb7913e1c7d671757a10008b32c9c2448d4429513371e55c07d6107638
DIR=_build/web_assets/html-manager

if grep -qs "\"version\": \"$HTML_MANAGER_VERSION\"" "$DIR/package.json" && [ -f "$DIR/dist/embed.js" ]; then
  exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "web_assets: npm is needed (apt-get install npm) to fetch @jupyter-widgets/html-manager" >&2; exit 1; }
echo "web_assets: fetching @jupyter-widgets/html-manager@$HTML_MANAGER_VERSION (npm pack) into $DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "@jupyter-widgets/html-manager@$HTML_MANAGER_VERSION" 2>/dev/null >/dev/null)
tarball="$tmp/jupyter-widgets-html-manager-$HTML_MANAGER_VERSION.tgz"
echo "$HTML_MANAGER_SHA256  $tarball" | sha256sum --check --quiet
rm -rf "$DIR"
mkdir -p "$DIR"
tar -xzf "$tarball" -C "$DIR" --strip-components=1 package/package.json package/dist
