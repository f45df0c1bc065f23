"""The verdicts of the chapter "Softmax attention as a selector" (``book/selector.ipynb``): the bound on the distance
of ``softmax(lambda z)`` to its limit holds at every scale of both tables and is attained when the others tie, from
the numbers :mod:`onelayer.chapters.selector` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class
from ..formatting import number_text

__all__ = ["rows"]


def rows(settings, *, check: dict) -> list[dict]:
    """The chapter's verdict: the bound holds at every scale of both tables, and is attained when the others tie (an
    exact check, no seed or sample). ``settings``: the chapter's settings (the logits, the scales, the gaps and the
    target accuracy); ``check``: in how many of the ``cases`` of both tables the exact error is at most the bound
    (``holds``) and the largest relative gap between error and bound where the others tie (``attained``), as
    :func:`onelayer.chapters.selector.bound_check` gives them."""
    holds = bool(check["holds"] == check["cases"] and check["attained"] <= settings.target)
    return [{
        "claim": "softmax(lambda z) is within 2(n-k)/k exp(-lambda gap) of the uniform law on the maximal logits",
        "source": "[ours]",
        "reading": "-",
        "settings": (f"z = {list(settings.z)}, lambda in {list(settings.lams)}; gaps {list(settings.gaps)} with tied "
                     "others"),
        "measurement": (f"exact check in float64 (no seed or sample): bound holds in {check['holds']}/{check['cases']} "
                        f"cases; where the others tie, the error equals the bound to a relative "
                        f"{number_text(check['attained'], 2)}"),
        "verdict": "holds" if holds else "fails",
        "class": exact_class(holds),
        "chapter": "selector",
    }]
