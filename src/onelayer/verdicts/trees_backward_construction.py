"""The verdicts of the chapter "Theorem 1: a backward reasoner by construction"
(``book/trees/backward_construction.ipynb``): Lemma 1 for non-orthogonal embeddings, Theorem 1's closed-form attention,
its loss rate and the exact decoding of every tree shape, from the exact checks and the rates over trees that
:mod:`onelayer.chapters.trees.backward_construction` passes in (see :mod:`onelayer.verdicts`)."""

from __future__ import annotations

from ..claims import exact_class, rated
from ..formatting import number_text
from ..rates import Rate

__all__ = ["rows"]


def rows(settings, *, lemma: dict, weight_error: float, slopes: dict[str, float], first_exact: float,
         decoded: dict[str, Rate]) -> list[dict]:
    """The chapter's verdicts: Lemma 1 for non-orthogonal embeddings, the closed-form attention, the loss rate (exact
    checks on one draw of embeddings and trees: no training) and the exact decoding of every tree shape (rates over
    the trees with their Wilson intervals).

    ``lemma``: the row of :func:`onelayer.chapters.trees.backward_construction.lemma1` (largest Gram off-diagonal,
    largest entry of ``A^T B A - I``); ``weight_error``: the largest deviation of the attention on the correct edge from
    its closed form over both batches and every ``lambda``; ``slopes``: per batch the slope of ``log(loss)`` against
    ``lambda`` over ``lambda >= slope_from``; ``first_exact``: the smallest ``lambda`` of the grid decoding every
    random tree; ``decoded``: per batch the trees decoded exactly at the largest ``lambda`` of its grid (the perfect and
    random batches first, then the deep trees)."""
    s = settings
    trees = f"{s.train_batch} perfect trees (depth {s.m}) and {s.test_trees} random trees (0-3 children, depth at most {s.test_max_depth})"
    base = {"source": "[paper]", "reading": "R-B layout and Lemma 1's explicit B = A(A^T A)^-2 A^T (ours)",
            "chapter": "backward_construction"}
    return [
        {**base, "claim": "Lemma 1: for linearly independent embeddings some B gives A^T B A = I",
         "settings": f"S = {s.S} Gaussian embeddings in d = {s.d} (one draw)",
         "measurement": f"exact check (one draw of embeddings): max |A^T B A - I| = "
                        f"{number_text(lemma['max_error_ATBA_minus_I'])} with Gram off-diagonals up to "
                        f"{number_text(lemma['max_offdiag_gram'])}",
         "verdict": "holds" if lemma["max_error_ATBA_minus_I"] < 1e-12 else "fails",
         "class": exact_class(bool(lemma["max_error_ATBA_minus_I"] < 1e-12))},
        {**base, "claim": "Theorem 1: the attention of lambda B on the correct edge is e^lambda / (e^lambda + N - 1) at every query",
         "source": "[ours]", "settings": f"{trees}, lambda in {list(s.lambdas)}",
         "measurement": f"exact check against the closed form (one draw of embeddings and trees, no training): largest "
                        f"deviation {number_text(weight_error)} over every query",
         "verdict": "holds" if weight_error < 1e-12 else "fails", "class": exact_class(bool(weight_error < 1e-12))},
        {**base, "claim": "Theorem 1: the loss of lambda B falls like e^(-2 lambda)",
         "source": "[ours]", "settings": f"{trees}, lambda >= {s.slope_from:g}",
         "measurement": "one draw of embeddings and trees (no training): slope of log(loss) against lambda: "
                        + ", ".join(f"{number_text(v)} ({k})" for k, v in slopes.items()),
         "verdict": "holds" if all(abs(v + 2.0) < 0.05 for v in slopes.values()) else "fails",
         "class": "holds" if all(abs(v + 2.0) < 0.05 for v in slopes.values()) else "fails"},
        {**base, "claim": "Theorem 1: as lambda grows, greedy decoding with lambda B outputs the goal-to-root path on every tree, of any shape and depth",
         "settings": f"{trees}; {s.deep_count} trees of depth {s.deep_min_depth}-{s.deep_max_depth} over S = {s.S_big} (d = {s.d_big})",
         "measurement": f"every random tree decoded from lambda = {number_text(first_exact)} on; trees decoded "
                        f"exactly at lambda = {number_text(s.lambdas[-1])}: "
                        + ", ".join(f"{name} {r.text()}" for name, r in list(decoded.items())[:2])
                        + f"; at lambda = {number_text(s.deep_lambdas[-1])}: "
                        + ", ".join(f"{name} {r.text()}" for name, r in list(decoded.items())[2:]),
         "verdict": "holds" if all(r.k == r.n for r in decoded.values()) else "fails",
         **rated({f"{name} decoded": r for name, r in decoded.items()})},
    ]
