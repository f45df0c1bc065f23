"""Plain-text tables of result rows, for printed (and nbval-compared) chapter outputs.

A chapter's summary is usually a list of dicts (one per run or size). Printed
with :func:`text_table`, it shows the chosen columns, right-aligned, with
floats formatted by :func:`onelayer.formatting.number_text` (a fixed number of
significant digits; round-off and magnitudes below ``1e-9`` as ``"< 1e-12"`` /
``"< 1e-9"``), so the text is stable from run to run and machine to machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .formatting import MAX_DIGITS, ROUNDOFF, number_text
from .validation import check_float, check_int

__all__ = ["text_table"]


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

    def fmt(v):
        if isinstance(v, (bool, np.bool_)):
            return str(bool(v))
        if isinstance(v, (float, np.floating)):
            return number_text(v, digits, tol=tol)
        return "-" if v is None else str(v)

    cells = [[str(c) for c in columns]] + [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
