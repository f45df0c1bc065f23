"""tools/book_html.py (the Sphinx extension of the HTML build): the execution table's status in words."""

from __future__ import annotations

from collections import defaultdict

import pytest
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
