"""The bookkeeping every chapter does, so a chapter's cells show only its mathematics and its calls.

A chapter starts with::

    from onelayer.chapter import glue_numbers, number_text, show_table, start
    start()

and then

* :func:`start` seeds everything (:func:`onelayer.seeding.setup`) and applies the book's plot style;
* :func:`glue_numbers` hands computed numbers to the prose (the output of ``myst_nb.glue`` with ``display=False``,
  one keyword per name), so the text cannot drift from what ran;
* :func:`show_table` displays a list of result rows as a :class:`onelayer.tables.Table` (an HTML table in the
  book and JupyterLab, the text table in a terminal);
* the formatting and seeding helpers a chapter needs are re-exported here
  (:func:`~onelayer.formatting.number_text`, :func:`~onelayer.formatting.near_zero_text`,
  :func:`~onelayer.formatting.rounded`, :func:`~onelayer.seeding.generator`,
  :func:`~onelayer.seeding.numpy_rng`, and the rate texts of tables :func:`~onelayer.tables.rate_texts`,
  :func:`~onelayer.tables.interval_texts`, :func:`~onelayer.tables.interval_text`, :func:`~onelayer.tables.count_interval_text`,
  :func:`~onelayer.tables.bounds_text`), so a chapter imports from
  this module, its part's package and :mod:`onelayer.plots`, and from little else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .formatting import ROUNDOFF, near_zero_text, number_text, rounded
from .seeding import generator, numpy_rng, setup
from .tables import Table, bounds_text, count_interval_text, interval_text, interval_texts, rate_texts

__all__ = [
    "start",
    "glue_numbers",
    "show_table",
    "number_text",
    "near_zero_text",
    "rounded",
    "generator",
    "numpy_rng",
    "rate_texts",
    "interval_texts",
    "interval_text",
    "count_interval_text",
    "bounds_text",
]


def start(seed: int = 0, **setup_options) -> None:
    """Seed every generator with ``seed`` (see :func:`onelayer.seeding.setup`) and use the book's plot style."""
    from .plots import use_book_style

    setup(seed, **setup_options)
    use_book_style()


#: The mime-type prefix of a glued value (``myst_nb.ext.glue.GLUE_PREFIX``; its outputs are not shown).
GLUE_PREFIX = "application/papermill.record/"


def glue_numbers(**values) -> None:
    """``myst_nb.glue(name, value, display=False)`` for every ``name=value``; the values must already be rounded.

    A float glued with all its digits would put machine-dependent last bits into the
    prose: round it first (:func:`~onelayer.formatting.rounded`) or glue its
    :func:`~onelayer.formatting.number_text`.
    """
    if not values:
        raise ValueError("glue_numbers needs at least one name=value")
    # What myst_nb.glue(name, value, display=False) displays (tests/test_paths_store_chapter.py compares the two), without
    # importing myst_nb's Sphinx and docutils side: about 2 s in every chapter.
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    for name, value in values.items():
        bundle, metadata = format_display_data(value)
        metadata["scrapbook"] = {"name": name, "mime_prefix": GLUE_PREFIX}
        display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


def show_table(rows: Sequence[Mapping], columns: Sequence[str], *, digits: int = 4, tol: float = ROUNDOFF,
               headers: Mapping[str, str] | None = None, caption: str | None = None) -> None:
    """Display :class:`onelayer.tables.Table` of ``rows`` restricted to ``columns`` (see there for ``headers``)."""
    from IPython.display import display

    display(Table(rows, columns, digits=digits, tol=tol, headers=headers, caption=caption))
