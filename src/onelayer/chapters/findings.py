"""Page "What the book found" (``book/findings.ipynb``): the forest plots of the key rates, one per paper.

The claims and their grids are :mod:`onelayer.claims`; this module registers the page's figures, drawn by
:func:`onelayer.figures.findings.forest` from :func:`onelayer.claims.forest_lines` of the stored claims.
"""

from __future__ import annotations

from ..claims import PAPER_TITLES, forest_lines, load
from ..figures import findings as forest_figure
from ..registry import register

__all__ = ["forest_walks", "forest_trees"]


def _forest(paper: str):
    lines = forest_lines(load(paper))
    return forest_figure.forest(lines, title=PAPER_TITLES[paper]), {"paper": paper, "table": lines}


@register("findings-forest-walks", "Findings (walks): the key rate of each reading measured over runs, with its 95% "
                                   "Wilson interval, coloured by verdict class")
def forest_walks(quick: bool = False):
    """The walks paper's forest plot (the stored claims: the same in quick mode)."""
    return _forest("walks")


@register("findings-forest-trees", "Findings (trees): the key rate of each reading measured over runs, with its 95% "
                                   "Wilson interval, coloured by verdict class")
def forest_trees(quick: bool = False):
    """The trees paper's forest plot (the stored claims: the same in quick mode)."""
    return _forest("trees")
