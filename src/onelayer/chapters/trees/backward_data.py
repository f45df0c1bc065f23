"""Chapter "Trees I: the data" (``book/trees/backward_data.ipynb``): trees, the R-B prompt, the backward chain of
thought and the batches the backward model is trained and tested on.

Every figure of the chapter is a registered function here (the notebook and ``python -m onelayer make`` call the
same one); :func:`test_tree_checks` is the chapter's check that the chain of thought encodes the goal-to-root path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...plots import heatmap, new_figure
from ...registry import register
from ...scrubber import frame_numbers, scrub
from ...seeding import numpy_rng
from ...trees.backward import layout
from ...figures.trees_backward import chain_figure, chain_text, draw_tree, sample_chain_figure
from ...trees.shared import data, embeddings
from ...verdicts import trees_backward_data as verdicts

__all__ = ["Settings", "SETTINGS", "train_test_trees", "worked_example", "token_matrix", "sample_chain_default",
           "sampler", "samples_player", "samples_frames", "batches", "batch_rows", "test_tree_checks", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """The worked example and the batches.

    ``S = 31``, ``m = 4``, ``train_batch = 256``, ``test_trees = 1024`` [summary];
    the depth cap 7 of the random test trees and every seed [guess].
    """

    S: int = 31
    m: int = 4
    train_batch: int = 256
    test_trees: int = 1024
    test_max_depth: int = 7
    tree_seed: int = 0  #: the drawn training and test tree
    example_goal: int = 4  #: goal node of the worked example (label 7)
    example_seed: int = 1  #: edge order of the worked example
    train_seed: int = 2
    test_seed: int = 3
    #: the sampler: default seed and depth cap; the player's tree seeds (quick mode: the first two)
    sample_seed: int = 0
    sample_max_depth: int = 3
    sample_S: int = 20
    scrub_seeds: tuple[int, ...] = tuple(range(8))


SETTINGS = Settings()


@register("trees-train-test-trees", "Trees I: a perfect training tree (depth 4) and a random test tree (0-3 children) with their paths")
def train_test_trees(quick: bool = False):
    """A perfect training tree and a random test tree (seed ``tree_seed``), each with a goal and its path to the root."""
    s = SETTINGS
    rng = numpy_rng(s.tree_seed)
    train_tree = data.perfect_binary_tree(s.m, s.S, rng)
    test_tree = data.random_tree(s.S, rng, max_depth=5, min_depth=4)
    goal_train = data.sample_goal(train_tree, rng)
    goal_test = data.sample_goal(test_tree, rng, leaves_only=False)
    fig, axes = new_figure(1, 2, width=6.5, height=5.6)
    draw_tree(axes[0], train_tree, goal_train, title=f"training tree: perfect, depth 4, {train_tree.n} nodes")
    draw_tree(axes[1], test_tree, goal_test, title=f"test tree: 0-3 children, depth {test_tree.depth}, {test_tree.n} nodes")
    return fig, {"train_path": train_tree.labels[train_tree.path_to_root(goal_train)],
                 "test_path": test_tree.labels[test_tree.path_to_root(goal_test)]}


@register("trees-worked-example", "Trees I: the worked example: tree, R-B prompt and backward chain of thought (goal label 7)")
def worked_example(quick: bool = False):
    """The worked example: the tree, its R-B prompt and the backward chain of thought for the goal ``example_goal``."""
    s = SETTINGS
    example, goal = data.example_tree(), s.example_goal
    fig = chain_figure(example, goal=goal, rng=numpy_rng(s.example_seed))
    prompt, chain = chain_text(example, goal, numpy_rng(s.example_seed))
    return fig, {"S": example.S, "goal_node": goal, "goal_label": int(example.label_of(goal)),
                 "path_labels": example.labels[example.path_to_root(goal)], "prompt": prompt, "chain": chain}


@register("trees-token-matrix", "Trees I: the one-hot token vectors of the worked example's R-B sequence, one column per token")
def token_matrix(quick: bool = False):
    """The one-hot token vectors of the worked example's sequence (goal node 4, edge order seed 1), one column each."""
    example = data.example_tree()
    batch = layout.backward_batch([example], [4], numpy_rng(1))
    X = layout.token_vectors(batch, embeddings.one_hot_embeddings(9))[0]
    labels = [layout.token_text(p, 9) for p in zip(batch.first[0].tolist(), batch.second[0].tolist())]
    fig, ax = new_figure(1, width=6.0, height=4.2)
    heatmap(ax, X.T.numpy(), annotate=False, colorbar=False, xlabel="token", ylabel="coordinate\n(block 1: 0-8, block 2: 9-17)")
    ax.set_xticks(range(len(labels)), labels, rotation=90, family="monospace")
    ax.axhline(8.5, color="w", lw=1)
    return fig, {"S": 9, "goal": 4, "tokens": labels, "X_transposed": X.T.numpy()}


@register("trees-sample-chain-default", "Trees I: the sampler widget's default state: a random tree (seed 0, 0-3 children, depth at most 3) with its chain")
def sample_chain_default(quick: bool = False):
    """The sampler's default tree with its path and chain (the draws of
    :func:`onelayer.figures.trees_backward.sample_chain_figure`, in its order)."""
    s = SETTINGS
    rng = np.random.default_rng(s.sample_seed)
    tree = data.random_tree(s.sample_S, rng, max_depth=s.sample_max_depth, min_depth=1)
    goal = data.sample_goal(tree, rng, leaves_only=False)
    prompt, chain = chain_text(tree, goal, rng)
    return sample_chain_figure(s.sample_seed, s.sample_max_depth, s.sample_S), {
        "seed": s.sample_seed, "max_depth": s.sample_max_depth, "S": s.sample_S, "nodes": tree.n,
        "depth": int(tree.depth), "goal_label": int(tree.label_of(goal)), "path_labels": tree.labels[tree.path_to_root(goal)],
        "prompt": prompt, "chain": chain}


def sampler():
    """The live sampler (in a kernel): sliders for the tree seed and the depth cap."""
    import ipywidgets as widgets

    from ...widgets import slider_app

    return slider_app(sample_chain_figure, {
        "seed": widgets.IntSlider(value=SETTINGS.sample_seed, min=0, max=50, description="seed"),
        "max_depth": widgets.IntSlider(value=SETTINGS.sample_max_depth, min=1, max=6, description="max depth")})


def samples_player():
    """The precomputed player of the HTML book: a random tree per seed of ``scrub_seeds``."""
    depth = SETTINGS.sample_max_depth
    return scrub(lambda seed: sample_chain_figure(seed, depth), list(SETTINGS.scrub_seeds), label="tree seed",
                 name="trees-backward-samples", fmt="{:d}",
                 alt="A random tree (seed {value}, 0 to 3 children per node, depth at most "
                     f"{depth}) with its goal-to-root path highlighted, beside its prompt and chain of thought")


@register("trees-backward-samples-frames", "Trees I sampler player (frames): random trees (seeds 0-7, 0-3 children, "
                                           "depth at most 3) with their goal-to-root paths and chains")
def samples_frames(quick: bool = False):
    """The numbers behind every frame of :func:`samples_player`."""
    seeds = SETTINGS.scrub_seeds
    return None, frame_numbers(lambda seed: sample_chain_figure(seed, SETTINGS.sample_max_depth),
                               seeds[:2] if quick else seeds, labels="tree seed", fmt="{:d}")


def batches():
    """The training batch (perfect trees of depth ``m``) and the random test batch with its trees."""
    s = SETTINGS
    train_batch = layout.perfect_tree_batch(s.m, s.S, s.train_batch, numpy_rng(s.train_seed))
    test_batch, test_trees = layout.random_tree_batch(s.S, s.test_trees, numpy_rng(s.test_seed),
                                                      max_depth=s.test_max_depth)
    return train_batch, test_batch, test_trees


def batch_rows(train_batch, test_batch) -> list[dict]:
    """One row per batch of :func:`batches`: trees, sequence length ``L``, targets ``K``, and how many tokens and
    targets are real (the rest is padding) out of how many."""
    return [{"batch": name, "trees": b.size, "L": b.length, "K": b.steps,
             "real tokens": f"{int(b.valid.sum())}/{b.valid.numel()}",
             "real targets": f"{int(b.target_mask.sum())}/{b.target_mask.numel()}"}
            for name, b in ((f"training (perfect, m={SETTINGS.m})", train_batch), ("test (random)", test_batch))]


def test_tree_checks(test_batch, test_trees) -> dict:
    """On each test tree: whether the chain's targets spell the goal-to-root path, whether the prompt holds one edge
    per non-root node, and whether the labels are distinct; counts out of the number of trees."""
    ok_path = ok_edges = ok_labels = 0
    for b, tree in enumerate(test_trees):
        k, p = int(test_batch.target_mask[b].sum()), int(test_batch.prompt_len[b])
        targets = np.stack([test_batch.target_first[b, :k].numpy(), test_batch.target_second[b, :k].numpy()], axis=1)
        goal = tree.node_of(int(test_batch.goal[b]))
        ok_path += np.array_equal(layout.path_from_targets(targets), tree.labels[tree.path_to_root(goal)])
        children = test_batch.second[b, : p - 2].numpy()  # the edge tokens
        ok_edges += sorted(children.tolist()) == sorted(np.delete(tree.labels, tree.root).tolist())
        ok_labels += np.unique(tree.labels).size == tree.n
    return {"trees": len(test_trees), "path": ok_path, "edges": ok_edges, "labels": ok_labels}


def verdict_rows() -> list[dict]:
    """The chapter's verdict row: :func:`onelayer.verdicts.trees_backward_data.rows` of the checks of the random test
    batch."""
    _, test_batch, test_trees = batches()
    return verdicts.rows(SETTINGS, checks=test_tree_checks(test_batch, test_trees))
