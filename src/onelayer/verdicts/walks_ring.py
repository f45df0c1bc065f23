"""The verdicts of the chapter "The ring" (``book/walks/ring.ipynb``): every power of the transition matrix is
circulant, and the Bayes rule is right with probability ``max(p, 1 - p)``, from the numbers
:mod:`onelayer.chapters.walks.ring` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class
from ..rates import rate

__all__ = ["rows"]


def rows(settings, *, circulant: bool, bayes_table: list[dict]) -> list[dict]:
    """The chapter's verdicts: ``Pi^R`` stays circulant (exact check), and the Bayes rule is right with probability
    ``max(p, 1 - p)`` (a rate over simulated walks, whose interval must hold the population value at every ``p``;
    the intervals are taken at a joint 95% level over the ``p`` values).

    The inputs, as :mod:`onelayer.chapters.walks.ring` computes them: ``circulant`` (whether ``Pi^R`` is circulant
    within ``1e-14`` for every ``p`` in ``settings.circulant_ps`` and ``R = 0..settings.circulant_R_max``) and
    ``bayes_table`` (one row per ``p`` of the simulated Bayes rule: ``right`` of ``walks`` and the population value
    ``max_p_1_minus_p``)."""
    K, R_max = settings.K, settings.circulant_R_max
    table = bayes_table
    # one verdict over several p: each interval at 1 - 0.05/m (Bonferroni), so that all m hold the truth together
    # with probability at least 95% (at 95% each, one miss in 7 would be no surprise)
    level = 1 - 0.05 / len(table)
    joint = [rate(r["right"], r["walks"], confidence=level) for r in table]
    inside = [r for r, j in zip(table, joint) if j.contains(r["max_p_1_minus_p"])]
    widest = max(j.high - j.low for j in joint)
    return [
        {"claim": "the transition matrix Pi and every power Pi^R are circulant", "source": "[paper]", "reading": "-",
         "settings": f"K = {K}, p in {list(settings.circulant_ps)}, R = 0..{R_max}",
         "measurement": f"circulant (deviation < 1e-14) at every power: {circulant}",
         "verdict": "holds" if circulant else "fails", "class": exact_class(bool(circulant)), "chapter": "ring"},
        {"claim": "the Bayes rule predicts the next node with probability max(p, 1-p)", "source": "[paper]",
         "reading": "-",
         "settings": (f"K = {K}, N = {settings.bayes_N}, {settings.bayes_walks} simulated walks per p, "
                      f"p in {list(settings.bayes_ps)}"),
         "measurement": (f"the Wilson interval of the simulated rate (joint 95%: {level:.4f} each) holds max(p, 1-p) "
                         f"at {len(inside)}/{len(table)} values of p (widest interval {widest:.3f})"),
         "verdict": "holds" if len(inside) == len(table) else "fails",
         "class": "holds" if len(inside) == len(table) else "fails", "chapter": "ring"},
    ]
