"""tools/book_html.py (the Sphinx extension of the HTML build): the execution table's status in words."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
from docutils import nodes
from myst_nb.ext import execution_tables

from tools import book_html

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it


def _cells(table) -> list[str]:
    return [entry.astext() for entry in table.findall(lambda n: n.tagname == "entry")]


def test_execution_table_says_ok_or_failed_not_emoji():
    book_html.status_words()
    metadata = defaultdict(dict)
    metadata["book/walks/ring"]["exec_data"] = {"mtime": 0, "method": "cache", "runtime": 1.234, "succeeded": True}
    metadata["book/walks/qa"]["exec_data"] = {"mtime": 0, "method": "cache", "runtime": 2.0, "succeeded": False, "error": "boom"}
    cells = _cells(execution_tables.make_stat_table("book/appendix_runtime", metadata))
    assert "ok" in cells and "failed" in cells
    assert not any(ord(ch) > 0x2000 for cell in cells for ch in cell), cells


class _Builder:
    """Stands in for Sphinx 7's HTML builder: its duplicate check compares the name as given."""

    def __init__(self):
        self.scripts: list[tuple] = []

    def add_js_file(self, filename, **kwargs):
        script = (filename, tuple(sorted(kwargs.items())))
        if script not in self.scripts:
            self.scripts.append(script)


def test_an_inline_script_is_added_once_whichever_way_it_comes():
    """sphinx-doc/sphinx#13402: Sphinx.add_js_file passes None, prepare_writing passes '' for the same inline script."""
    app = SimpleNamespace(builder=_Builder())
    book_html.same_name_for_inline_scripts(app)
    book_html.same_name_for_inline_scripts(app)  # a second call does not wrap twice
    app.builder.add_js_file(None, body='const THEBE_JS_URL = "x"')
    app.builder.add_js_file("", body='const THEBE_JS_URL = "x"')
    app.builder.add_js_file("sphinx-thebe.js", **{"async": "async"})
    assert app.builder.scripts == [("", (("body", 'const THEBE_JS_URL = "x"'),)),
                                   ("sphinx-thebe.js", (("async", "async"),))]


def _page(docname: str, *raw_html: str):
    doctree = nodes.document(None, None)
    doctree += [nodes.raw("", text, format="html") for text in raw_html]
    js_files = {"ipywidgets_state": (None, {"type": "application/vnd.jupyter.widget-state+json"}),
                "ipywidgets_0": ("ipywidgets/embed.js", {}), "other": ("x.js", {})}
    env = SimpleNamespace(docname=docname, nb_metadata={docname: {"js_files": js_files}})
    return SimpleNamespace(env=env), doctree, js_files


def test_widget_state_and_manager_only_on_pages_that_draw_a_widget():
    app, doctree, js_files = _page("book/walks/ring", "<p>a figure</p>")
    book_html.drop_unused_widget_scripts(app, doctree)
    assert list(js_files) == ["other"]
    view = '<script type="application/vnd.jupyter.widget-view+json">{"model_id": "m"}</script>'
    app, doctree, js_files = _page("book/walks/qa", view)
    book_html.drop_unused_widget_scripts(app, doctree)
    assert list(js_files) == ["ipywidgets_state", "ipywidgets_0", "other"]


def test_make_execute_keeps_widget_state_only_where_a_widget_is_displayed():
    """tools/execute.py: a notebook whose outputs show no widget stores no widget state (nothing would draw it)."""
    import nbformat

    from tools import execute

    state = {"application/vnd.jupyter.widget-state+json": {"state": {"m": {}}}}
    view = nbformat.v4.new_output("display_data", data={execute.WIDGET_VIEW: {"model_id": "m"}, "text/plain": "w"})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("bar()")], metadata={"widgets": state})
    assert execute.drop_unviewed_widget_state(nb) and "widgets" not in nb.metadata
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("w", outputs=[view])], metadata={"widgets": state})
    assert not execute.drop_unviewed_widget_state(nb) and nb.metadata["widgets"] == state
