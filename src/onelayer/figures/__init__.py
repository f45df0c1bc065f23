"""Drawing-only figure modules of the book side: they take numbers and histories and return figures.

They import the plotting tools (:mod:`onelayer.plots`, :mod:`onelayer.widgets`) and read the papers' floor for
labels and shapes; the papers and the studies never import them (``tests/test_floors.py``).
"""
