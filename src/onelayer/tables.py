"""Plain-text tables of result rows, for printed (and nbval-compared) chapter outputs.

A chapter's summary is usually a list of dicts (one per run or size). Printed
with :func:`text_table`, it shows the chosen columns, right-aligned, with
floats rounded to a fixed number of significant digits, so the text is stable
from run to run wherever the numbers are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .validation import check_int

__all__ = ["text_table"]


def text_table(rows: Sequence[Mapping], columns: Sequence[str], *, digits: int = 4) -> str:
    """A plain-text table of ``rows`` (dicts) restricted to ``columns``; floats to ``digits`` significant digits.

    Missing entries and ``None`` print as ``-``; booleans as ``True``/``False``.
    """
    digits = check_int("digits", digits, low=1, high=12)
    if not columns:
        raise ValueError("columns must name at least one column")

    def fmt(v):
        if isinstance(v, (bool, np.bool_)):
            return str(bool(v))
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.{digits}g}"
        return "-" if v is None else str(v)

    cells = [[str(c) for c in columns]] + [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
