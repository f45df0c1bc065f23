"""Drawing-only figure modules of the book side: they take numbers and histories and return figures.

One module per part (:mod:`~onelayer.figures.walks`, :mod:`~onelayer.figures.trees_backward`,
:mod:`~onelayer.figures.trees_forward`, ...). They import the plotting tools (:mod:`onelayer.plots`,
:mod:`onelayer.widgets`) and read the papers' floor for labels and shapes; the chapter modules call them; the papers
and the studies never import them (``tests/test_floors.py``).
"""
