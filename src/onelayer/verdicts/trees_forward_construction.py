"""The verdicts of the chapter "Theorem 2: a forward reasoner by construction"
(``book/trees/forward_construction.ipynb``): the construction's margins at every step, its decoding and loss as the
scale grows, one full head that represents the chain too (our observation) and the constructions without the turning
token, from the numbers :mod:`onelayer.chapters.trees.forward_construction` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class
from ..formatting import number_text
from ..rates import rate

__all__ = ["rows"]


def rows(settings, *, margins: dict, grid: dict, heads: list[dict], search: dict, chains_right: dict) -> list[dict]:
    """The chapter's verdicts: the construction's margins are the predicted ones at every step (a count of steps over
    the drawn trees), the scaled construction decodes every random test tree, one full head represents the chain too
    (our observation), and one changed entry repairs the constructions without the turning token. No training, so
    nothing rests on a training seed; every count is over the same 1,024 random test trees, with its Wilson
    interval.

    ``margins``: the numbers of the margin table (per head the steps and the steps reaching the predicted margin, the
    largest deviation from the predicted margin, whether head 1's target is unique); ``grid``: the numbers of the
    scale grid (its table of paths right per scale and the slope of log(loss) against the scale); ``heads``: whole
    paths right of one full head and of the two heads (in that order) at ``large_at``; ``search``: the table of the
    stage-block entry search without the turning token; ``chains_right``: the chains right of the check in both
    layouts as rates, keyed by ``(construction, changed, layout)``."""
    s = settings
    m = margins
    worst, unique = m["largest_deviation"], m["target_unique"]
    h1, h2 = m["heads"]["head 1"], m["heads"]["head 2"]
    full = [r for r in grid["table"] if r["paths_right"] == r["trees"]]
    first_full = min(r["scale"] for r in full) if full else None
    after = [r for r in grid["table"] if first_full is not None and r["scale"] >= first_full]
    decoded_on = bool(after) and all(r["paths_right"] == r["trees"] for r in after)
    paths = rate(after[0]["paths_right"], after[0]["trees"]) if after else None
    slope = grid["log_loss_slope_scale_ge_5"]
    one, two = heads
    one_rate, two_rate = (rate(r["paths_right"], r["trees"]) for r in (one, two))
    working = [r for r in search["table"] if r["multiples with every chain right"]]
    matrix, key, query = s.no_turning_entry
    entry = f"{matrix}[{key},{query}]"

    def chains(name, changed, turning):
        return chains_right[(name, changed, "R-F" if turning else "no turning token")]

    new = {n: chains(n, True, False) for n in ("two heads", "one full head")}
    trees = f"{s.test_trees} random test trees (0-3 children, depth caps up to {s.test_max_depth}, S = {s.S})"
    reading = "R-F layout (ours: the tokens and the constructed entries are reconstructed)"
    return [
        {"claim": "Theorem 2: the constructed two heads put their largest logit on the right token at every step, head 1 "
                  "by min(lambda, mu) and head 2 by kappa",
         "source": "[paper]", "reading": reading,
         "settings": (f"{trees}, one draw of Gaussian embeddings d = {s.d} (the margins do not depend on the draw: "
                      f"A^T B A = I), (lambda, mu, kappa) = {s.margins_at}"),
         "measurement": (f"steps with head 1's target ahead by at least min(lambda, mu): "
                         f"{rate(h1['reaching'], h1['steps']).text()}; head 2's flag ahead by at least kappa: "
                         f"{rate(h2['reaching'], h2['steps']).text()}; largest |smallest measured - predicted margin| "
                         f"{number_text(worst, 2)}; head-1 target unique at every step: {unique}"),
         "verdict": ("holds" if worst < 1e-9 and unique and h1["reaching"] == h1["steps"]  # tol: O(1) logit differences
                     and h2["reaching"] == h2["steps"] else "fails"),
         "class": ("holds" if worst < 1e-9 and unique and h1["reaching"] == h1["steps"]
                   and h2["reaching"] == h2["steps"] else "fails"),
         "chapter": "forward_construction"},
        {"claim": "as the scale grows, the construction decodes the whole chain and the root-to-goal path of any tree, "
                  "with a squared error that decays like exp(-2c)",
         "source": "[paper]", "reading": reading + "; 'any tree' is our statement",
         "settings": f"{trees}, scales c x {s.scale_base} for c in {list(s.scales)}",
         "measurement": ((f"whole path right at c = {number_text(first_full)}: {paths.text()}, and on every tree at "
                          f"each of the {len(after) - 1} larger scales" if paths else "whole path right on every tree "
                          "at no scale") + f"; slope of log(loss) against c (c >= {number_text(s.slope_from)}, fitted on "
                         f"{sum(c >= s.slope_from for c in s.scales)} scales) {number_text(slope, 4)}"),
         "verdict": "holds" if decoded_on and abs(slope + 2) < 0.05 else "fails",  # tol: the slope is fitted on 3 points
         "class": "holds" if decoded_on and abs(slope + 2) < 0.05 else "fails",
         "chapter": "forward_construction"},
        {"claim": "one full head with a learnable value matrix can represent the forward chain (no second head needed)",
         "source": "[ours]", "reading": "R-F layout (ours)",
         "settings": f"{trees}, one full head at (lambda, mu) = {s.large_at[:2]}",
         "measurement": f"whole path right: one full head {one_rate.text()} (two heads: {two_rate.text()})",
         "verdict": "holds" if one["paths_right"] == one["trees"] else "fails",
         "class": exact_class(bool(one["paths_right"] == one["trees"])),  # a construction, decoded without sampling
         "chapter": "forward_construction"},
        {"claim": "our constructions need the turning token: without it they get the first forward step wrong on every tree",
         "source": "[ours]", "reading": "alternative layout without a turning token (the prompt keeps its root token)",
         "settings": (f"{trees}, Gaussian embeddings d = {s.d}, (lambda, mu, kappa) = {s.large_at}; search: each of the "
                      f"{len(search['table'])} stage-block entries set to {list(s.no_turning_multiples)} x its scale on "
                      f"{search['table'][0]['trees']} trees"),
         "measurement": (f"as built, chains right without the turning token: two heads "
                         f"{chains('two heads', False, False).text()}, one full head {chains('one full head', False, False).text()}; "
                         f"with {entry} (0 in the construction) set to {number_text(s.no_turning_multiple)} mu (the full "
                         f"head: the same entry of its key-query block): two heads {new['two heads'].text()}, one full head "
                         f"{new['one full head'].text()}; the changed constructions in the R-F layout: two heads "
                         f"{chains('two heads', True, True).text()}; entries whose change works on the search grid: "
                         + ", ".join(f"{r['construction']} {r['entry']} at {r['multiples with every chain right']} x scale"
                                     for r in working)),
         "verdict": ("fails: one changed entry gives a construction without the turning token"
                     if all(v.low > 0.99 for v in new.values()) else "holds on the search grid"),
         "class": "fails" if all(v.low > 0.99 for v in new.values()) else "holds",
         "chapter": "forward_construction"},
    ]
