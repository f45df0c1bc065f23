"""Chapter "Theorem 1: a backward reasoner by construction" (``book/trees/backward_construction.ipynb``): Lemma 1's
matrix for non-orthogonal embeddings, the loss and accuracy of the construction ``lambda B`` against ``lambda``, its
attention at every step, deep trees, and the ``lambda`` explorer.

Every figure and table of the chapter is a registered function here (the notebook and ``python -m onelayer make``
call the same one); the evaluation batches and the ``lambda`` grids are cached, so the table, the figure and the
verdicts share one computation.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
import torch

from ...plots import new_figure, plot_curves
from ...rates import Rate, rate
from ...registry import register
from ...scrubber import frame_numbers, scrub
from ...seeding import generator, numpy_rng
from ...trees.backward import construction, layout
from ...figures.trees_backward import construction_attention_figure, decoded_attention_figure
from ...trees.shared import embeddings
from ...validation import check_bool
from ...studies.trees.inputs import gaussian_embeddings
from ...verdicts import trees_backward_construction as verdicts

__all__ = ["Settings", "SETTINGS", "setting", "lemma1", "lambda_grids", "lambda_rows", "lambda_table", "first_exact_lambda",
           "decoded_rates", "loss_vs_lambda",
           "construction_attention", "deep_trees", "explorer", "construction_attention_default", "lambda_player",
           "lambda_frames", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """Lemma 1 and Theorem 1.

    ``S = 31``, ``m = 4``, 256 perfect trees and 1,024 random test trees [summary]; the Gaussian embedding dimension
    ``d = 40``, the grid of scales ``lambdas``, the scale of the attention figure, the deep-tree check (``S_big = 127``),
    the explorer's defaults and every seed [guess].
    """

    S: int = 31
    m: int = 4
    d: int = 40
    embedding_seed: int = 1
    batch_seed: int = 2  #: the perfect batch, then the random batch, from one generator
    train_batch: int = 256
    test_trees: int = 1024
    test_max_depth: int = 7
    lambdas: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0)
    slope_from: float = 5.0  #: log-loss slope fitted over lambda >= slope_from
    attention_lambda: float = 10.0
    #: deep trees: S_big symbols in d_big dimensions, deep_count trees of depth deep_min_depth..deep_max_depth
    S_big: int = 127
    d_big: int = 130
    deep_embedding_seed: int = 3
    deep_tree_seed: int = 4
    deep_count: int = 200
    deep_min_depth: int = 9
    deep_max_depth: int = 12
    deep_lambdas: tuple[float, ...] = (2.0, 5.0, 10.0)
    #: the explorer (one-hot embeddings, B = lambda I) and its default state
    explorer_lambda: float = 3.0
    explorer_seed: int = 0
    explorer_depth: int = 5
    #: frames of the lambda player (the explorer's figure on a coarse grid, at the explorer's seed and depth)
    scrub_lambdas: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0)


SETTINGS = Settings()

PERFECT, RANDOM = "perfect, depth 4", "random, 0-3 children"


def _settings(quick: bool) -> Settings:
    return replace(SETTINGS, train_batch=32, test_trees=64) if check_bool("quick", quick) else SETTINGS


def setting(quick: bool = False) -> dict:
    """The Gaussian embeddings ``A`` (``S x d``) and the evaluation batches: ``perfect`` (training distribution),
    ``random`` with its ``random_trees`` (``quick``: 32 and 64 trees)."""
    return _setting(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _setting(quick: bool) -> dict:
    s = _settings(quick)
    A = gaussian_embeddings(s.S, s.d, generator(s.embedding_seed))
    rng = numpy_rng(s.batch_seed)
    perfect = layout.perfect_tree_batch(s.m, s.S, s.train_batch, rng)
    random_batch, random_trees = layout.random_tree_batch(s.S, s.test_trees, rng, max_depth=s.test_max_depth)
    return {"A": A, "perfect": perfect, "random": random_batch, "random_trees": random_trees}


@register("trees-lemma1", "Trees I, Lemma 1 (table): B with A^T B A = I for 31 Gaussian embeddings in dimension 40")
def lemma1(quick: bool = False):
    """Lemma 1 on the chapter's Gaussian embeddings: the largest off-diagonal entry of the Gram matrix and the largest
    entry of ``A^T B A - I`` (one row)."""
    s = SETTINGS
    A = gaussian_embeddings(s.S, s.d, generator(s.embedding_seed))
    B = embeddings.lemma1_matrix(A)
    gram = A.T @ A
    return None, {"table": [{"S": s.S, "d": s.d, "max_offdiag_gram": float((gram - gram.diag().diag()).abs().max()),
                             "max_error_ATBA_minus_I": float((A.T @ B @ A - torch.eye(s.S, dtype=A.dtype)).abs().max())}]}


def _lambdas(quick: bool) -> np.ndarray:
    return np.array(SETTINGS.lambdas[::2] if quick else SETTINGS.lambdas)


def lambda_grids(quick: bool = False) -> dict[str, dict[str, np.ndarray]]:
    """:func:`onelayer.trees.backward.construction.lambda_grid` of ``lambda B`` over ``lambdas`` on both batches,
    keyed by the batch's name (``quick``: every other ``lambda``)."""
    return _lambda_grids(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _lambda_grids(quick: bool) -> dict[str, dict[str, np.ndarray]]:
    s, lams = setting(quick), _lambdas(quick)
    return {PERFECT: construction.lambda_grid(s["A"], s["perfect"], lams),
            RANDOM: construction.lambda_grid(s["A"], s["random"], lams)}


def lambda_rows(quick: bool = False) -> list[dict]:
    """One row per batch and ``lambda``: loss, whole-path accuracy and the largest deviation of the attention on the
    correct edge from ``w(lambda, N)``."""
    return [{"trees": name, "lambda": float(lam), "loss": float(sw["loss"][i]), "path_accuracy": float(sw["path_accuracy"][i]),
             "max_weight_error": float(sw["max_weight_error"][i])}
            for name, sw in lambda_grids(quick).items() for i, lam in enumerate(sw["lam"])]


def lambda_table(quick: bool = False) -> list[dict]:
    """:func:`lambda_rows` side by side: one row per ``lambda`` with the loss and the whole-path accuracy on each batch."""
    sw = lambda_grids(quick)
    p, r = sw[PERFECT], sw[RANDOM]
    return [{"lambda": float(lam), "loss_perfect": float(p["loss"][i]), "acc_perfect": float(p["path_accuracy"][i]),
             "loss_random": float(r["loss"][i]), "acc_random": float(r["path_accuracy"][i])} for i, lam in enumerate(p["lam"])]


def slopes(quick: bool = False) -> dict[str, float]:
    """Least-squares slope of ``log(loss)`` against ``lambda`` over ``lambda >= slope_from``, per batch."""
    lams = _lambdas(quick)
    tail = lams >= SETTINGS.slope_from
    return {name: construction.log_slope(lams[tail], sw["loss"][tail]) for name, sw in lambda_grids(quick).items()}


def first_exact_lambda(quick: bool = False) -> float:
    """The smallest ``lambda`` of the grid at which greedy decoding is exact on every random tree."""
    exact = lambda_grids(quick)[RANDOM]["path_accuracy"] == 1.0
    if not exact.any():
        raise ValueError("no lambda of the grid decodes every random tree")
    return float(_lambdas(quick)[np.argmax(exact)])


def decoded_rates() -> dict[str, Rate]:
    """Trees whose whole path greedy decoding gets right at the largest ``lambda`` of each grid, as rates with their
    Wilson intervals: the perfect and the random batch at ``lambdas[-1]``, the deep trees at ``deep_lambdas[-1]``."""
    s, sw = SETTINGS, lambda_grids()
    deep = deep_trees()["rows"][-1]
    counts = {PERFECT: (sw[PERFECT]["path_accuracy"][-1], s.train_batch), RANDOM: (sw[RANDOM]["path_accuracy"][-1], s.test_trees),
              f"deep, depth {s.deep_min_depth}-{s.deep_max_depth}": (deep["path_accuracy"], s.deep_count)}
    return {name: rate(int(round(float(acc) * n)), n) for name, (acc, n) in counts.items()}


@register("trees-loss-vs-lambda", "Trees I, Theorem 1: loss and whole-path accuracy of the construction lambda B against lambda")
def loss_vs_lambda(quick: bool = False):
    """Loss (log scale) and whole-path accuracy of ``lambda B`` against ``lambda`` on both batches, the log-loss slopes
    and the table of :func:`lambda_rows`."""
    lams, sw = _lambdas(quick), lambda_grids(quick)
    fig, axes = new_figure(2, width=6.5, height=3.6)
    plot_curves(axes[0], lams, {n: s["loss"] for n, s in sw.items()}, xlabel="scale lambda", ylabel="loss (mean, 1/2)",
                logy=True, title="loss of lambda B")
    plot_curves(axes[1], lams, {n: s["path_accuracy"] for n, s in sw.items()}, xlabel="scale lambda",
                ylabel="whole-path accuracy", title="greedy decoding")
    axes[1].set_xscale("log")
    for ax in axes:  # one legend for both panels, below them: inside, it covers the curves
        ax.get_legend().remove()
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=2)
    return fig, {"log_loss_slope_lambda_ge_5": slopes(quick), "table": lambda_rows(quick)}


@register("trees-construction-attention", "Trees I, Theorem 1: attention of the construction (lambda = 10) at every step of the deepest random tree")
def construction_attention(quick: bool = False):
    """Greedy decoding of the deepest random tree by ``attention_lambda * B``: the attention of every step."""
    s = setting(quick)
    index = int(np.argmax([t.depth for t in s["random_trees"]]))
    lam = SETTINGS.attention_lambda
    fig = decoded_attention_figure(construction.constructed_B(s["A"], lam), s["A"], s["random"], index=index,
                                   title=f"lambda = {lam:g}, the deepest random tree")
    return fig, {"lambda": lam, "tree_index": index, "depth": int(s["random_trees"][index].depth)}


def deep_trees() -> dict:
    """``lambda B`` on ``deep_count`` random trees of depth ``deep_min_depth`` to ``deep_max_depth`` over ``S_big``
    symbols (Gaussian embeddings in ``d_big`` dimensions): trees per depth, the longest path and one row per
    ``lambda`` of ``deep_lambdas`` (whole-path accuracy, loss)."""
    s = SETTINGS
    A = gaussian_embeddings(s.S_big, s.d_big, generator(s.deep_embedding_seed))
    batch, trees = layout.random_tree_batch(s.S_big, s.deep_count, numpy_rng(s.deep_tree_seed), max_depth=s.deep_max_depth,
                                            min_depth=s.deep_min_depth)
    sw = construction.lambda_grid(A, batch, list(s.deep_lambdas))
    return {"depths": dict(enumerate(np.bincount([t.depth for t in trees]).tolist())),
            "longest_path": int(batch.target_mask.sum(1).max()),
            "rows": [{"lambda": float(lam), "path_accuracy": float(acc), "loss": float(loss)}
                     for lam, acc, loss in zip(sw["lam"], sw["path_accuracy"], sw["loss"])]}


def explorer():
    """The live explorer (in a kernel): sliders for ``lambda``, the tree seed and the depth of
    :func:`onelayer.figures.trees_backward.construction_attention_figure`."""
    import ipywidgets as widgets

    from ...widgets import slider_app

    s = SETTINGS
    return slider_app(construction_attention_figure, {
        "lam": widgets.FloatSlider(value=s.explorer_lambda, min=0.0, max=12.0, step=0.5, description="lambda"),
        "seed": widgets.IntSlider(value=s.explorer_seed, min=0, max=20, description="seed"),
        "max_depth": widgets.IntSlider(value=s.explorer_depth, min=1, max=8, description="depth")})


@register("trees-construction-attention-default", "Trees I: the widget's default state: lambda I decoding a random depth-5 tree at lambda = 3")
def construction_attention_default(quick: bool = False):
    """The explorer's default state."""
    s = SETTINGS
    return (construction_attention_figure(s.explorer_lambda, s.explorer_seed, s.explorer_depth),
            {"lambda": s.explorer_lambda, "seed": s.explorer_seed, "max_depth": s.explorer_depth})


def _lambda_frame(lam: float):
    return construction_attention_figure(lam, SETTINGS.explorer_seed, SETTINGS.explorer_depth)


def lambda_player():
    """The precomputed player of the HTML book: the explorer's figure at each ``lambda`` of ``scrub_lambdas``."""
    return scrub(_lambda_frame, list(SETTINGS.scrub_lambdas), label="lambda", name="trees-backward-lambda", fmt="{:g}",
                 alt="Attention of the constructed head B = lambda I at lambda = {value} on a random tree of depth "
                     f"{SETTINGS.explorer_depth}: one row per chain-of-thought step, one column per token")


@register("trees-backward-lambda-frames", "Trees I, Theorem 1 player (frames): attention of lambda I on a random "
                                          "depth-5 tree at every chain-of-thought step, over lambda")
def lambda_frames(quick: bool = False):
    """The numbers behind every frame of :func:`lambda_player` (``quick``: every fourth ``lambda``)."""
    lams = SETTINGS.scrub_lambdas
    return None, frame_numbers(_lambda_frame, lams[::4] if quick else lams, labels="lambda", fmt="{:g}")


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_backward_construction.rows` of Lemma 1's check, the
    ``lambda`` grids, the deep trees and the decoded trees."""
    (lemma,) = lemma1()[1]["table"]
    return verdicts.rows(SETTINGS, lemma=lemma, slopes=slopes(), first_exact=first_exact_lambda(),
                         weight_error=max(float(v["max_weight_error"].max()) for v in lambda_grids().values()),
                         decoded=decoded_rates())
