"""Sphinx extension: the HTML book needs no network and passes axe-core (issue 15).

Loaded from ``_config.yml`` (``sphinx.local_extensions``). It does four things:

1. **MathJax from the build.** ``mathjax_path`` in ``_config.yml`` names a file under
   ``_static/mathjax/``; this extension copies MathJax 3.2.2 there from the PyPI wheel
   ``django-static-mathjax`` (pinned in requirements.txt, a plain copy of the npm package
   ``mathjax-full``: the same files the CDN serves). Only what ``tex-mml-chtml.js`` can load in a
   browser is copied: the combined file, the CHTML fonts, the TeX extensions that ``autoload``
   fetches, the menu and the accessibility components (explorer, speech rules) a reader can switch
   on from MathJax's context menu.

2. **Widgets from the build.** Pages with stored ipywidgets (sliders, and the figure inside their Output
   widget) need the ipywidgets HTML manager; myst-nb's default loads require.js and the manager from
   two CDNs. ``nb_ipywidgets_js`` in ``_config.yml`` names ``_static/ipywidgets/embed.js`` instead
   (self-contained, built-in widgets only); this extension copies it and its fonts there from the npm
   package ``@jupyter-widgets/html-manager`` that ``tools/web_assets.sh`` fetches at a pinned version
   and checksum (run here when missing).

3. **A check.** When the HTML build has finished, every page and stylesheet is scanned for a
   resource the browser would fetch from another host (``<script src>``, ``<link href>`` for
   stylesheets, icons and preloads, ``<img>``, ``<iframe>``, ``<source>``, CSS ``url()`` and
   ``@import``). Each one is a warning, so the strict build (``--warningiserror``) fails on it.
   Links (``<a href>``) are not resources and are not checked.

4. **An ARIA fix.** docutils writes the bibliography as ``<div role="list">`` whose entries have the
   deprecated DPUB role ``doc-biblioentry`` instead of ``listitem`` (axe-core: a critical
   aria-required-children violation, and a minor one per entry); each page's body is corrected.
   (The book's CSS and the widget fixes are in ``book/_static``.)

5. **Widgets only where one is drawn.** myst-nb puts a notebook's stored widget state and the widget manager
   (``embed.js``, 1.8 MB) on its page whenever the notebook's metadata holds widget state, although every cell
   that displays a widget is tagged ``remove-output`` (the page shows a precomputed figure or player instead).
   Both are dropped from every page with no widget view (:func:`drop_unused_widget_scripts`).

6. **Each inline script once.** Sphinx 7 adds an inline ``<script>`` registered after the builder started (those
   of sphinx-thebe and sphinx-togglebutton) twice, and the second copy of sphinx-thebe's ``const THEBE_JS_URL``
   throws "Identifier 'THEBE_JS_URL' has already been declared" on every page (sphinx-doc/sphinx#13402, fixed in
   Sphinx 8.2; Jupyter Book 1 needs Sphinx 7). :func:`same_name_for_inline_scripts` applies that fix.

7. **Words, not emoji.** myst-nb's execution table (``{nb-exec-table}``, the runtime appendix) marks each
   notebook's status with an emoji, which shows as an empty box where no emoji font is installed; it says
   ``ok`` or ``failed`` instead (:func:`status_words`).
"""

from __future__ import annotations

import html.parser
import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Where the pages load MathJax from, relative to ``_static`` (``mathjax_path`` must start with it).
MATHJAX_STATIC = "mathjax"
#: Parts of MathJax's ``es5/`` directory a page can request (tex-mml-chtml.js is self-contained but
#: loads fonts, autoloaded TeX packages, and the a11y components on demand).
MATHJAX_PARTS = (
    "tex-mml-chtml.js",
    "core.js",
    "loader.js",
    "startup.js",
    "input",
    "output/chtml.js",
    "output/chtml",
    "ui",
    "a11y",
    "sre",
    "adaptors",
)
#: Where the pages load the ipywidgets HTML manager from, relative to ``_static``.
WIDGETS_STATIC = "ipywidgets"
#: Unpacked by tools/web_assets.sh (relative to the project root, the directory of _config.yml).
WIDGETS_SOURCE = Path("_build") / "web_assets" / "html-manager" / "dist"
_FONT_SUFFIXES = (".woff2", ".woff", ".ttf")
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//", re.I)
_CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""", re.I)


def mathjax_source() -> Path:
    """The ``es5`` directory of the installed MathJax (wheel ``django-static-mathjax``)."""
    spec = importlib.util.find_spec("mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("MathJax is not installed: pip install -r requirements.txt (django-static-mathjax)")
    es5 = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5"
    if not (es5 / "tex-mml-chtml.js").is_file():
        raise RuntimeError(f"no MathJax 3 in {es5}: is django-static-mathjax installed?")
    return es5


def copy_mathjax(outdir: Path) -> Path:
    """Copy the browser parts of MathJax into ``outdir/_static/mathjax``; returns that directory."""
    source = mathjax_source()
    target = outdir / "_static" / MATHJAX_STATIC
    if target.exists():
        shutil.rmtree(target)
    for part in MATHJAX_PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, target / part)
        else:
            (target / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / part)
    return target


def copy_widgets(root: Path, outdir: Path) -> Path:
    """Copy ``embed.js`` (and the fonts it loads relative to itself) into ``outdir/_static/ipywidgets``."""
    source = root / WIDGETS_SOURCE
    if not (source / "embed.js").is_file():
        subprocess.run(["bash", str(root / "tools" / "web_assets.sh")], check=True, cwd=root)
    target = outdir / "_static" / WIDGETS_STATIC
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.name in ("embed.js", "embed.js.LICENSE.txt") or path.suffix in _FONT_SUFFIXES:
            shutil.copy2(path, target / path.name)
    return target


class _Resources(html.parser.HTMLParser):
    """Collects the URLs of everything a page makes the browser fetch."""

    LINK_RELS = {"stylesheet", "icon", "shortcut", "preload", "modulepreload", "prefetch", "manifest", "apple-touch-icon"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self._style = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed", "track", "input"):
            self.urls += [a[k] for k in ("src", "data-src") if a.get(k)]
            if a.get("srcset"):
                self.urls += [part.split()[0] for part in a["srcset"].split(",") if part.strip()]
            if a.get("data-jupyter-widgets-cdn"):
                self.urls.append(a["data-jupyter-widgets-cdn"])
        elif tag == "link" and a.get("href") and self.LINK_RELS & set((a.get("rel") or "").lower().split()):
            self.urls.append(a["href"])
        elif tag == "object" and a.get("data"):
            self.urls.append(a["data"])
        if a.get("style"):
            self.urls += _css_urls(a["style"])
        self._style = tag == "style"

    def handle_endtag(self, tag):
        if tag == "style":
            self._style = False

    def handle_data(self, data):
        if self._style:
            self.urls += _css_urls(data)


def _css_urls(css: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _CSS_URL.finditer(css)]


def external_resources(outdir: Path) -> dict[str, list[str]]:
    """``{file relative to outdir: [external URLs it loads]}`` over every .html and .css file."""
    found: dict[str, list[str]] = {}
    for path in sorted(outdir.rglob("*")):
        if path.suffix not in (".html", ".css") or "_static/mathjax/" in path.as_posix():
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".css":
            urls = _css_urls(text)
        else:
            parser = _Resources()
            parser.feed(text)
            urls = parser.urls
        external = sorted({u for u in urls if _EXTERNAL.match(u.strip())})
        if external:
            found[path.relative_to(outdir).as_posix()] = external
    return found


def _mathjax_path_is_local(app: Sphinx) -> bool:
    return not _EXTERNAL.match(app.config.mathjax_path or "") and app.config.mathjax_path.startswith(MATHJAX_STATIC + "/")


def on_build_finished(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    if _mathjax_path_is_local(app):
        target = copy_mathjax(outdir)
        if not (outdir / "_static" / app.config.mathjax_path).is_file():
            logger.warning(
                "mathjax_path %r names no file of MathJax (copied to %s)", app.config.mathjax_path, target,
                type="onelayer", subtype="offline",
            )
    else:
        logger.warning(
            "mathjax_path %r is not under _static/%s/: the pages would load MathJax from elsewhere",
            app.config.mathjax_path, MATHJAX_STATIC, type="onelayer", subtype="offline",
        )
    widget_scripts = [u for u in app.config.nb_ipywidgets_js if not _EXTERNAL.match(u)] if hasattr(
        app.config, "nb_ipywidgets_js") else []
    if widget_scripts:
        try:
            copy_widgets(Path(app.srcdir), outdir)
        except (OSError, subprocess.CalledProcessError) as exc:
            logger.warning("could not copy the ipywidgets HTML manager into the build (tools/web_assets.sh): %s", exc,
                           type="onelayer", subtype="offline")
        for script in widget_scripts:
            if not (outdir / "_static" / script).is_file():
                logger.warning("nb_ipywidgets_js names %r, which is not in the build", script,
                               type="onelayer", subtype="offline")
    if app.config.offline_html_check:
        for page, urls in external_resources(outdir).items():
            logger.warning(
                "%s loads %d resource(s) from another host (the book must work offline): %s",
                page, len(urls), ", ".join(urls[:5]), type="onelayer", subtype="offline",
            )


def fix_aria_roles(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    body = context.get("body")
    if body and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


def latex_macros(app: Sphinx, config) -> None:
    """The PDF (``make pdf``): define the book's macros (``mathjax3_config`` in ``_config.yml``) for LaTeX too.

    MathJax reads them from the configuration; LaTeX needs them as ``\\newcommand`` in the preamble. One
    source for both, so the two cannot drift apart.
    """
    macros = (getattr(config, "mathjax3_config", None) or {}).get("tex", {}).get("macros", {})
    if not macros:
        return
    lines = "\n".join(f"\\providecommand{{\\{name}}}{{{body}}}" for name, body in macros.items())
    elements = dict(config.latex_elements or {})
    elements["preamble"] = elements.get("preamble", "") + "\n% the book's macros (tools/book_html.py)\n" + lines + "\n"
    config.latex_elements = elements


#: myst-nb's keys for the widget state and the widget manager scripts of a page (``render_nb_finalise``).
_WIDGET_SCRIPT_KEYS = re.compile(r"^ipywidgets_(state|\d+)$")
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def shows_a_widget(doctree) -> bool:
    """Whether the page draws a stored widget: myst-nb writes each displayed widget view as a raw HTML script."""
    from docutils import nodes

    return any(_WIDGET_VIEW in node.astext() for node in doctree.findall(nodes.raw))


def drop_unused_widget_scripts(app: Sphinx, doctree) -> None:
    """``doctree-read``: no widget state and no ``embed.js`` on a page that displays no widget."""
    docname = app.env.docname
    js_files = getattr(app.env, "nb_metadata", {}).get(docname, {}).get("js_files")
    if not js_files or shows_a_widget(doctree):
        return
    for key in [k for k in js_files if _WIDGET_SCRIPT_KEYS.match(k)]:
        del js_files[key]


def same_name_for_inline_scripts(app: Sphinx) -> None:
    """``builder-inited``, before other extensions add scripts: an inline script (no file name) is registered with the
    name ``''`` whichever way it reaches the HTML builder.

    :meth:`Sphinx.add_js_file` hands the builder ``None`` as the name of an inline script, while the builder's
    ``prepare_writing`` adds the registry's scripts again as ``filename or ''``; the two differ, so the builder's
    duplicate check lets the second copy through (sphinx-doc/sphinx#13402, the upstream fix does the same).
    """
    builder = app.builder
    add = getattr(builder, "add_js_file", None)
    if add is None or getattr(add, "_onelayer_inline_names", False):
        return

    def add_js_file(filename, **kwargs):
        return add(filename or "", **kwargs)

    add_js_file._onelayer_inline_names = True
    builder.add_js_file = add_js_file


def status_words() -> None:
    """The status column of myst-nb's execution table in words (``ok`` / ``failed``) instead of emoji.

    myst-nb 1.x keeps the column's formatter in a module-level dict (``_key2transform``, pinned version in
    requirements.txt); ``tests/test_book_html.py`` fails if that dict moves.
    """
    from myst_nb.ext import execution_tables

    execution_tables._key2transform["succeeded"] = lambda ok: "ok" if ok is True else "failed"


def setup(app: Sphinx) -> dict:
    status_words()
    app.connect("config-inited", latex_macros)
    app.add_config_value("offline_html_check", True, "html")
    app.connect("builder-inited", same_name_for_inline_scripts, priority=100)
    app.connect("doctree-read", drop_unused_widget_scripts)
    app.connect("html-page-context", fix_aria_roles)
    app.connect("build-finished", on_build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
