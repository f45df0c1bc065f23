"""The verdicts of the chapter "Trees I: the data" (``book/trees/backward_data.ipynb``): the backward chain of thought
spells the goal-to-root path, from the checks of the random test trees that
:mod:`onelayer.chapters.trees.backward_data` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class

__all__ = ["rows"]


def rows(settings, *, checks: dict) -> list[dict]:
    """The chapter's verdict: the backward chain of thought spells the goal-to-root path on every random test tree
    (a property of the data format, checked on all of them; deterministic).

    ``checks``: :func:`onelayer.chapters.trees.backward_data.test_tree_checks` of the random test batch (``trees`` and
    the trees whose chain spells the path, whose prompt holds one edge per non-root node, whose labels are distinct)."""
    c, n = checks, checks["trees"]
    return [{"claim": "the backward chain of thought encodes the goal-to-root path, one edge token per step",
             "source": "[paper]", "reading": "R-B layout (ours: the tokens are reconstructed)",
             "settings": f"{n} random test trees (0-3 children, depth at most {settings.test_max_depth}, S = {settings.S})",
             "measurement": f"exact check of the data format on every tree (no training, no sample statistics): "
                            f"path recovered {c['path']}/{n}, one edge per non-root node {c['edges']}/{n}, "
                            f"distinct labels {c['labels']}/{n}",
             "verdict": "holds" if c["path"] == c["edges"] == c["labels"] == n else "fails",
             "class": exact_class(bool(c["path"] == c["edges"] == c["labels"] == n)),
             "chapter": "backward_data"}]
