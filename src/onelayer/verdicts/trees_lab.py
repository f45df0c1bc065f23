"""The verdicts of the chapter "Trees lab" (``book/trees/lab.ipynb``): the sum over a chain's positions with a scaled
step trains the same heads as the default mean (a fact about the loss, checked on the lab's default run), from the
numbers :mod:`onelayer.chapters.trees.lab` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class

__all__ = ["rows"]


def rows(*, run: dict, difference: float) -> list[dict]:
    """The chapter's verdict: on the default forward task every chain has ``2m + 1`` positions, so the sum over them
    with step ``eta / (2m + 1)`` trains the same heads as the default mean with step ``eta`` (a fact about the loss,
    checked on the default run; deterministic). ``run``: the validated settings of the default run (layout, ``m``, steps, seed); ``difference``: the largest
    difference of the head scalars between the mean run and the sum run over the whole run."""
    holds = bool(difference < 1e-12)
    return [{"claim": "the sum over the 2m+1 positions with step eta/(2m+1) trains the same heads as the mean with step eta",
             "source": "[ours]", "reading": "loss reduction",
             "settings": (f"the lab's default ({run['layout']}, m = {run['m']}, {run['steps']} SGD steps), one run "
                          f"(seed {run['seed']}): an identity of the loss, not a rate (both runs draw the same batches, "
                          "so no seed can change it)"),
             "measurement": f"one run: largest difference of the head scalars over the run < 1e-12: {holds}",
             "verdict": "holds" if holds else "fails", "class": exact_class(holds), "chapter": "lab"}]
