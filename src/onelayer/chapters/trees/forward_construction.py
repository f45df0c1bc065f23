"""Chapter "Theorem 2: a forward reasoner by construction" (``book/trees/forward_construction.ipynb``).

The constructed two-head model (:func:`onelayer.trees.forward.construction.constructed_params`): its logit margins
measured on random trees with non-orthogonal embeddings, both heads' attention at every step of a chain, the loss
and accuracy as the construction's scale grows, one full head that represents the chain too (our observation),
and the explorer over the scale (a live widget in a kernel, a precomputed player in the HTML book). The scale grid and
the search without a turning token are the stored study ``trees-forward-construction-grids``
(:mod:`onelayer.studies.trees.forward_construction_grids`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

import numpy as np

from ...rates import rate
from ...registry import register
from ...scrubber import frame_numbers, scrub
from ...seeding import generator, numpy_rng
from ...trees.forward import construction
from ...trees.forward.model import full_heads, two_head
from ...trees.forward.decoding import greedy_decode
from ...figures.trees_forward import attention_by_step_figure, construction_attention_figure, scale_grid_figure
from ...trees.forward.layout import perfect_forward_batch, random_forward_batch
from ...trees.shared import embeddings
from ...studies.trees import analysis
from ...studies.trees import forward_construction_grids as grids_study
from ...studies.trees.inputs import gaussian_embeddings
from ...studies.trees.layout_variants import random_batch
from ...verdicts import trees_forward_construction as verdicts

__all__ = ["Settings", "SETTINGS", "test_set", "margins", "attention", "scale_grid", "one_head_and_two",
           "attention_default", "explorer", "scale_player", "scale_frames", "no_turning_search", "no_turning_check",
           "no_turning_rates", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows.

    ``S = 25`` and 1,024 random test trees [summary]; the Gaussian dimension ``d = 32``, the construction's
    ``(lambda, mu, kappa)`` of the margin table, the scale grid and its base point, the attention figure's setting,
    the depth cap 6, the explorer's and the player's settings and every seed [guess].
    """

    S: int = 25
    d: int = 32
    embedding_seed: int = 1
    test_seed: int = 2
    test_trees: int = 1024
    test_quick_trees: int = 128  #: quick mode (``python -m onelayer make --quick``)
    test_max_depth: int = 6
    margins_at: tuple[float, float, float] = (3.0, 1.5, 2.0)  #: (lambda, mu, kappa) of the margin table
    scales: tuple[float, ...] = (0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 12)
    scale_base: tuple[float, float, float] = (2.0, 1.0, 1.0)  #: the grid is scale x (lambda, mu, kappa)
    slope_from: float = 5.0  #: the slope of log(loss) against the scale is fitted from this scale on
    attention_at: tuple[float, float, float] = (4.0, 2.0, 2.0)  #: (lambda, mu, kappa) of the attention figure
    attention_m: int = 3
    attention_seed: int = 4
    #: (lambda, mu, kappa) at which one full head and the two heads decode the test trees
    large_at: tuple[float, float, float] = (20.0, 10.0, 10.0)
    #: the explorer's default state (scale c, tree seed, depth) and its slider ranges
    explore_scale: float = 2.0
    explore_seed: int = 0
    explore_depth: int = 3
    explore_max_seed: int = 20
    explore_max_depth: int = 5
    #: frames of the scale player (the explorer's figure on a coarse grid, tree seed 0, depth 3)
    scrub_scales: tuple[float, ...] = (0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0)
    #: the search for a construction without the turning token: every stage-block entry set to each multiple of its
    #: scale, on the layout without a turning token (search trees; quick mode: quick trees), at ``large_at``
    no_turning_multiples: tuple[float, ...] = (-3.0, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
    no_turning_search_trees: int = 256
    #: the changed entry that the check decodes on all ``test_trees`` in both layouts, as a multiple of mu
    no_turning_entry: tuple[str, str, str] = ("V1", "f", "b")
    no_turning_multiple: float = -2.0


SETTINGS = Settings()


def test_set(quick: bool = False):
    """Gaussian embeddings ``A`` (``S x d``, seed ``embedding_seed``) and the random test trees ``(batch, trees)``
    (0-3 children, depth caps up to ``test_max_depth``, seed ``test_seed``; quick mode: ``test_quick_trees``).
    Cached (``test_set()`` and ``test_set(False)`` are the same set)."""
    return _test_set(bool(quick))


@functools.lru_cache(maxsize=2)
def _test_set(quick: bool):
    s = SETTINGS
    A = gaussian_embeddings(s.S, s.d, generator(s.embedding_seed))
    count = s.test_quick_trees if quick else s.test_trees
    test, trees = random_forward_batch(s.S, count, numpy_rng(s.test_seed), max_depth=s.test_max_depth)
    return A, test, trees


@functools.lru_cache(maxsize=1)
def _stored_grids() -> dict:
    """The stored study ``trees-forward-construction-grids`` (the scale grid and the search without a turning token at
    the chapter's settings; refused if made with other settings)."""
    s = SETTINGS
    return grids_study.rows(grids_study.Settings(**{f.name: getattr(s, f.name) for f in fields(grids_study.Settings)}))


@register("trees-forward-margins", "Trees II, Theorem 2 (table): measured attention margins of the two-head construction against the predicted ones")
def margins(quick: bool = False):
    """Each head's measured logit margin by situation at ``margins_at``, beside the margin the construction
    guarantees (``min(lambda, mu)`` for head 1, ``kappa`` for head 2), the count of steps reaching it, and per head
    the steps, the steps reaching the predicted margin and the largest ``|smallest measured - predicted|``; the
    test trees' goal depths."""
    A, test, _ = test_set(quick)
    lam, mu, kappa = SETTINGS.margins_at
    pred = construction.predicted_margins(lam, mu, kappa)
    rows = construction.margin_table(construction.constructed_params(A, lam, mu, kappa), A, test, predicted=pred)
    table = [{**r, "predicted": pred[(r["head"], r["situation"])]} for r in rows]
    heads = {h: {"steps": sum(r["steps"] for r in table if r["head"] == h),
                 "reaching": sum(r["reaching"] for r in table if r["head"] == h)} for h in ("head 1", "head 2")}
    return None, {"lambda": lam, "mu": mu, "kappa": kappa, "table": table, "heads": heads,
                  "largest_deviation": max(abs(r["min_margin"] - r["predicted"]) for r in table),
                  "target_unique": all(r["target_unique"] for r in table),
                  "goal_depths": {int(d): int(n) for d, n in enumerate(np.bincount(test.goal_depth.numpy())) if n}}


@register("trees-forward-attention", "Trees II, Theorem 2: attention of both heads of the construction at every step of a depth-3 tree")
def attention(quick: bool = False):
    """Both heads' attention at every step of one perfect tree (one-hot embeddings) at ``attention_at``."""
    s = SETTINGS
    (lam, mu, kappa), m = s.attention_at, s.attention_m
    A1 = embeddings.one_hot_embeddings(s.S)
    tree_batch = perfect_forward_batch(m, s.S, 1, numpy_rng(s.attention_seed))
    fig = attention_by_step_figure(construction.constructed_params(A1, lam, mu, kappa), A1, tree_batch,
                                   title=f"construction at (lambda, mu, kappa) = ({lam:g}, {mu:g}, {kappa:g}), depth-{m} tree")
    return fig, {"lambda": lam, "mu": mu, "kappa": kappa, "S": s.S, "depth": m}


@register("trees-forward-scale-sweep", "Trees II, Theorem 2: loss and accuracy of the construction c x (2, 1, 1) against the scale c")
def scale_grid(quick: bool = False):
    """Loss and accuracies of ``c * scale_base`` on the test trees for each ``c`` of ``scales`` (quick: every other
    one), and the slope of ``log(loss)`` against ``c`` from ``slope_from`` on (``None`` with fewer than two points)."""
    A, test, _ = test_set(quick)
    scales = [float(c) for c in SETTINGS.scales]
    lam, mu, kappa = SETTINGS.scale_base
    rows = (analysis.scale_grid(A, test, scales[::2], lam=lam, mu=mu, kappa=kappa) if quick
            else _stored_grids()["scale-grid"]["rows"])
    rows = [{**r, "paths_right": int(round(r["path_accuracy"] * test.size)), "trees": test.size} for r in rows]
    big = [r for r in rows if r["scale"] >= SETTINGS.slope_from]
    slope = float(np.polyfit([r["scale"] for r in big], np.log([r["loss"] for r in big]), 1)[0]) if len(big) > 1 else None
    return scale_grid_figure(rows), {"log_loss_slope_scale_ge_5": slope, "table": [dict(r) for r in rows]}


def one_head_and_two() -> list[dict]:
    """Whole-path and chain accuracy of greedy decoding on the test trees (and the count of right paths): one full
    head given :func:`~onelayer.trees.forward.construction.full_single_head_construction` and the two-head
    construction, both at ``large_at``."""
    A, test, _ = test_set()
    lam, mu, kappa = SETTINGS.large_at
    runs = {"one full head": (construction.full_single_head_construction(A, lam, mu), full_heads(1)),
            "two heads": (construction.constructed_params(A, lam, mu, kappa), two_head())}
    rows = []
    for name, (params, arch) in runs.items():
        res = greedy_decode(params, arch, A, test)
        rows.append({"model": name, "path_accuracy": res.path_accuracy, "chain_accuracy": res.cot_accuracy,
                     "paths_right": int(round(res.path_accuracy * test.size)), "trees": test.size})
    return rows


@register("trees-forward-attention-default", "Trees II: the widget's default state: the construction at scale 2 x (2, 1, 1) decoding a random depth-3 tree")
def attention_default(quick: bool = False):
    """The explorer's figure in its default state."""
    s = SETTINGS
    lam, mu, kappa = (s.explore_scale * v for v in s.scale_base)
    return construction_attention_figure(s.explore_scale, s.explore_seed, s.explore_depth), {
        "scale": s.explore_scale, "lambda_mu_kappa": [lam, mu, kappa], "seed": s.explore_seed, "max_depth": s.explore_depth}


def explorer():
    """The live sliders (in a kernel): the scale ``c``, the tree seed and the depth."""
    import ipywidgets as widgets

    from ...widgets import slider_app

    s = SETTINGS
    return slider_app(construction_attention_figure, {
        "scale": widgets.FloatLogSlider(value=s.explore_scale, base=10, min=-1, max=1.2, step=0.05, description="scale c"),
        "seed": widgets.IntSlider(value=s.explore_seed, min=0, max=s.explore_max_seed, description="tree seed"),
        "max_depth": widgets.IntSlider(value=s.explore_depth, min=1, max=s.explore_max_depth, description="depth"),
    })


def _scale_draw(c: float):
    return construction_attention_figure(c, SETTINGS.explore_seed, SETTINGS.explore_depth)


def scale_player():
    """The precomputed player of the HTML book: the explorer's figure over ``scrub_scales``."""
    return scrub(_scale_draw, SETTINGS.scrub_scales, label="scale c", name="trees-forward-scale", fmt="{:g}",
                 alt="Attention of both constructed heads at scale c = {value} while decoding a random tree of depth 3: "
                     "one row per chain-of-thought step, one column per token; rows marked WRONG are steps decoded wrongly")


@register("trees-forward-scale-frames", "Trees II, Theorem 2 player (frames): attention of both constructed heads "
                                        "decoding a random depth-3 tree, over the scale c")
def scale_frames(quick: bool = False):
    """The numbers behind every frame of :func:`scale_player` (quick: every fourth scale)."""
    scales = SETTINGS.scrub_scales
    return None, frame_numbers(_scale_draw, scales[::4] if quick else scales, labels="scale c", fmt="{:g}")


def _no_turning_trees(count: int, turning: bool):
    s = SETTINGS
    batch, _ = random_batch(s.S, count, numpy_rng(s.test_seed), max_depth=s.test_max_depth, turning=turning)
    return batch


@register("trees-forward-no-turning-search", "Trees II, Theorem 2 (table): one stage-block entry of each construction changed, on the layout without a turning token")
def no_turning_search(quick: bool = False):
    """Every stage-block entry of both constructions set to each multiple of ``no_turning_multiples``
    (:func:`onelayer.studies.trees.analysis.stage_entry_search`) on ``no_turning_search_trees`` random trees in
    the layout without a turning token (Gaussian embeddings, ``large_at``): one row per entry with the multiples
    that get every chain right."""
    s = SETTINGS
    A, _, _ = test_set()
    if quick:
        batch = _no_turning_trees(s.test_quick_trees, False)
        lam, mu, kappa = s.large_at
        rows, trees = analysis.stage_entry_search(A, batch, lam=lam, mu=mu, kappa=kappa, multiples=s.no_turning_multiples), batch.size
    else:
        rows, trees = _stored_grids()["no-turning-search"]["rows"], _stored_grids()["no-turning-search"]["trees"]
    table = []
    for entry in analysis.STAGE_ENTRIES:
        mine = [r for r in rows if (r["construction"], r["matrix"], r["key"], r["query"]) == entry]
        table.append({"construction": entry[0], "entry": f"{entry[1]}[{entry[2]},{entry[3]}]",
                      "constructed (x scale)": next((r["multiple"] for r in mine if r["original"]), None),
                      "multiples with every chain right": [r["multiple"] for r in mine if r["chains_right"] == r["chains"]],
                      "best chains right": max(r["chains_right"] for r in mine), "trees": trees})
    return None, {"lambda_mu_kappa": list(s.large_at), "multiples": list(s.no_turning_multiples), "table": table}


def no_turning_check() -> list[dict]:
    """Greedy decoding of all ``test_trees`` in both layouts by the two constructions as built and with the entry
    ``no_turning_entry`` set to ``no_turning_multiple`` times its scale (the same entry of the full head's key-query
    block): one row per (construction, entry value, layout) with the count of right chains."""
    s = SETTINGS
    A, _, _ = test_set()
    lam, mu, kappa = s.large_at
    matrix, key, query = s.no_turning_entry
    scale = kappa if matrix == "V2" else mu
    rows = []
    for turning in (True, False):
        batch = _no_turning_trees(s.test_trees, turning)
        for name, arch, mat in (("two heads", two_head(), matrix), ("one full head", full_heads(1), "WKQ1")):
            built = (construction.constructed_params(A, lam, mu, kappa) if name == "two heads"
                     else construction.full_single_head_construction(A, lam, mu))
            changed = analysis.with_stage_entry(A, name, mat, key, query, s.no_turning_multiple * scale,
                                                    lam=lam, mu=mu, kappa=kappa)
            for label, params in (("as built", built), (f"{mat}[{key},{query}] = {s.no_turning_multiple:g} x scale", changed)):
                res = greedy_decode(params, arch, A, batch)
                rows.append({"construction": name, "entry": label, "layout": "R-F" if turning else "no turning token",
                             "chains_right": int(round(res.cot_accuracy * batch.size)), "trees": batch.size,
                             "path_accuracy": res.path_accuracy})
    return rows


def no_turning_rates(check: list[dict]) -> dict[tuple[str, bool, str], object]:
    """The chains right of :func:`no_turning_check`'s rows as :class:`~onelayer.rates.Rate` (with their Wilson
    intervals), keyed by ``(construction, changed, layout)``: ``changed`` is whether the entry was set."""
    return {(r["construction"], r["entry"] != "as built", r["layout"]): rate(r["chains_right"], r["trees"]) for r in check}


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_forward_construction.rows` of the margin table, the
    scale grid, the two decoders at ``large_at`` and the search and check without the turning token."""
    return verdicts.rows(SETTINGS, margins=margins()[1], grid=scale_grid()[1], heads=one_head_and_two(),
                         search=no_turning_search()[1], chains_right=no_turning_rates(no_turning_check()))
