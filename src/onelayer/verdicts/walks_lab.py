"""The verdicts of the chapter "Walks lab" (``book/walks/lab.ipynb``): the mean over walks with step ``eta`` and the
sum with step ``eta / n`` train the same ``V`` (a fact about the loss, checked on the lab's default run), from the
numbers :mod:`onelayer.chapters.walks.lab` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class

__all__ = ["rows"]


def rows(*, run: dict, difference: float) -> list[dict]:
    """The chapter's verdict: the mean and the sum over walks train the same ``V`` once the step size is scaled by the
    number of walks (a fact about the loss, checked on the default run; deterministic). ``run``: the validated
    settings of the default run (``p``, ``K``, ``N``, ``n_train``, steps); ``difference``: the largest
    ``|V(sum) - V(mean)|`` over the run."""
    holds = bool(difference < 1e-12)
    return [{"claim": "the mean over walks with step eta trains the same V as the sum with step eta/n",
             "source": "[ours]", "reading": "loss reduction",
             "settings": (f"the lab's default (p = {run['p']}, K = {run['K']}, N = {run['N']}), n = {run['n_train']} "
                          f"walks; one run (the identity holds for any sample, so no rate is needed)"),
             "measurement": f"largest |V(sum) - V(mean)| over {run['steps']} steps < 1e-12: {holds}",
             "verdict": "holds in one run (an identity of the loss)" if holds else "fails",
             "class": exact_class(holds), "chapter": "lab"}]
