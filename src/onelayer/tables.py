"""Tables of result rows for chapter outputs: plain text (the CLI, nbval) and HTML (the book).

A chapter's summary is usually a list of dicts (one per run or size). :func:`text_table`
lays the chosen columns out as right-aligned text; :class:`Table` is the object a chapter
displays, whose HTML form is a real ``<table>`` (class ``onelayer-table``, styled to fit the
text column by ``book/_static/onelayer.css``) and whose plain-text form is the text table.
Floats in both go through :func:`onelayer.formatting.number_text` (a fixed number of
significant digits; round-off and magnitudes below ``1e-9`` as ``"< 1e-12"`` / ``"< 1e-9"``),
so the text is stable from run to run and machine to machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .formatting import MAX_DIGITS, ROUNDOFF, number_text
from .rates import Rate
from .validation import check_float, check_int

__all__ = ["text_table", "Table", "rate_texts", "interval_texts", "interval_text", "count_interval_text", "bounds_text"]


def text_table(rows: Sequence[Mapping], columns: Sequence[str], *, digits: int = 4, tol: float = ROUNDOFF) -> str:
    """A plain-text table of ``rows`` (dicts) restricted to ``columns``; floats to ``digits`` significant digits.

    Floats go through :func:`onelayer.formatting.number_text` (``digits`` at most 6;
    ``|x| < tol`` prints as ``"< tol"``). Missing entries and ``None`` print as ``-``;
    booleans as ``True``/``False``.
    """
    digits = check_int("digits", digits, low=1, high=MAX_DIGITS)
    tol = check_float("tol", tol, low=0.0)
    if not columns:
        raise ValueError("columns must name at least one column")

    cells = [[str(c) for c in columns]] + [[_cell_text(r.get(c), digits, tol) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def rate_texts(rows: Sequence[Mapping]) -> list[dict]:
    """``rows`` with every :class:`~onelayer.rates.Rate` as its text ``k/n = p [low, high]`` (for a table)."""
    return [{k: (v.text() if isinstance(v, Rate) else v) for k, v in r.items()} for r in rows]


def interval_texts(rows: Sequence[Mapping]) -> list[dict]:
    """``rows`` with every rate as ``p [low, high]`` (its counts are in another column)."""
    return [{k: (v.text()[v.text().index("= ") + 2:] if isinstance(v, Rate) else v) for k, v in r.items()} for r in rows]


def interval_text(mi) -> str:
    """A ``(mean, low, high)`` interval as ``mean [low, high]`` to 3 significant digits; ``None`` as ``-``."""
    if mi is None:
        return "-"
    return f"{number_text(mi[0], 3)} [{number_text(mi[1], 3)}, {number_text(mi[2], 3)}]"


def count_interval_text(r: Rate) -> str:
    """A rate as ``k/n [low, high]``, the bounds to two decimals (a cell whose proportion the counts show)."""
    return f"{r.k}/{r.n} [{r.low:.2f}, {r.high:.2f}]"


def bounds_text(low: float, high: float, digits: int) -> str:
    """An interval as ``[low, high]``, each end through :func:`~onelayer.formatting.number_text` with ``digits``."""
    return f"[{number_text(low, digits)}, {number_text(high, digits)}]"


def _cell_text(v, digits: int, tol: float) -> str:
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (float, np.floating)):
        return number_text(v, digits, tol=tol)
    return "-" if v is None else str(v)


class Table:
    """A displayable table of ``rows`` restricted to ``columns``: HTML in the book, the text table elsewhere.

    ``headers`` optionally maps a column key to the header a reader sees (the key is kept
    otherwise); ``caption`` is a short line above the table. Text cells are HTML-escaped.
    """

    def __init__(self, rows: Sequence[Mapping], columns: Sequence[str], *, digits: int = 4, tol: float = ROUNDOFF,
                 headers: Mapping[str, str] | None = None, caption: str | None = None):
        self.digits = check_int("digits", digits, low=1, high=MAX_DIGITS)
        self.tol = check_float("tol", tol, low=0.0)
        if not columns:
            raise ValueError("columns must name at least one column")
        if headers is not None and not isinstance(headers, Mapping):
            raise TypeError(f"headers must be a mapping from column to header, got {type(headers).__name__}")
        if caption is not None and not isinstance(caption, str):
            raise TypeError(f"caption must be a string, got {type(caption).__name__}")
        self.rows = [dict(r) for r in rows]
        self.columns = [str(c) for c in columns]
        self.headers = {c: str((headers or {}).get(c, c)) for c in self.columns}
        self.caption = caption

    def __repr__(self) -> str:
        text = text_table(self.rows, self.columns, digits=self.digits, tol=self.tol)
        return text if self.caption is None else f"{self.caption}\n{text}"

    def _repr_html_(self) -> str:
        import html

        def numeric(v) -> bool:
            return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))

        head = "".join(f"<th>{html.escape(self.headers[c])}</th>" for c in self.columns)
        body = []
        for r in self.rows:
            cells = []
            for c in self.columns:
                v = r.get(c)
                cls = ' class="num"' if numeric(v) else ""
                cells.append(f"<td{cls}>{html.escape(_cell_text(v, self.digits, self.tol))}</td>")
            body.append("<tr>" + "".join(cells) + "</tr>")
        caption = "" if self.caption is None else f"<caption>{html.escape(self.caption)}</caption>"
        return (f'<table class="onelayer-table">{caption}<thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(body)}</tbody></table>")
