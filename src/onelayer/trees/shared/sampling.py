"""The random draws behind a batch of trees, shared by the backward and the forward layout.

A layout (:mod:`onelayer.trees.backward.layout`, :mod:`onelayer.trees.forward.layout`)
turns trees and goals into tokens; what it lays out is drawn here, in one
fixed order, so that both layouts see the same trees from the same stream:

* :func:`perfect_tree_draws`: the training distribution without a Python loop
  (perfect binary trees of depth ``m``, random injective labels, shuffled
  edges, a uniform leaf as goal), as arrays over the batch;
* :func:`random_trees`: test trees (:func:`~onelayer.trees.shared.data.random_tree`)
  with a random depth cap, and their goals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...validation import check_bool, check_int
from .data import Tree, check_rng, random_tree, sample_goal

__all__ = ["PerfectDraws", "perfect_tree_draws", "random_trees"]


@dataclass(frozen=True)
class PerfectDraws:
    """A batch of labelled perfect binary trees of depth ``m`` with a leaf goal each.

    Node indices are breadth-first (:func:`onelayer.trees.shared.data.perfect_binary_tree`):
    node ``child[j]`` has parent ``parent[j]``. ``labels[b, i]`` is the label of
    node ``i`` in tree ``b``; ``order[b]`` is the order in which tree ``b``'s
    edges are listed; ``goal[b]`` is the goal leaf's index and
    ``path_labels[b]`` the labels from the goal (column 0) up to the root
    (column ``m``).
    """

    m: int
    S: int
    labels: np.ndarray
    parent: np.ndarray
    child: np.ndarray
    order: np.ndarray
    goal: np.ndarray
    path_labels: np.ndarray

    @property
    def n(self) -> int:
        """Nodes per tree, ``2^(m+1) - 1``."""
        return self.labels.shape[1]

    @property
    def batch_size(self) -> int:
        return self.labels.shape[0]


def perfect_tree_draws(m: int, S: int, batch_size: int, rng: np.random.Generator, *, shuffle: bool = True) -> PerfectDraws:
    """Draw ``batch_size`` perfect binary trees of depth ``m`` with labels in ``range(S)`` and leaf goals.

    The stream is used in this order: the labels (a uniformly random injective
    map per tree), the edge orders (only with ``shuffle=True``; otherwise
    children increase), the goal leaves.
    """
    m = check_int("m", m, low=1, high=12)
    n = 2 ** (m + 1) - 1
    S = check_int("S", S, low=n)
    batch_size = check_int("batch_size", batch_size, low=1)
    check_rng("rng", rng)
    check_bool("shuffle", shuffle)
    rows = np.arange(batch_size)[:, None]
    labels = np.argsort(rng.random((batch_size, S)), axis=1)[:, :n]
    child = np.arange(1, n)
    parent = (child - 1) // 2
    if shuffle:
        order = np.argsort(rng.random((batch_size, n - 1)), axis=1)
    else:
        order = np.broadcast_to(np.arange(n - 1), (batch_size, n - 1))
    goal = rng.integers(n - 2**m, n, size=batch_size)
    path = [goal]
    for _ in range(m):
        path.append((path[-1] - 1) // 2)
    path_labels = labels[rows, np.stack(path, axis=1)]
    return PerfectDraws(m=m, S=S, labels=labels, parent=parent, child=child, order=order, goal=goal, path_labels=path_labels)


def random_trees(
    S: int,
    count: int,
    rng: np.random.Generator,
    *,
    max_depth: int,
    max_children: int = 3,
    min_depth: int = 0,
    leaves_only: bool = False,
) -> tuple[list[Tree], list[int]]:
    """``count`` random test trees and their goal node indices.

    The maximal depth of each tree is drawn uniformly from
    ``max(min_depth, 1)..max_depth`` so that shapes and depths vary; the goal
    is uniform over the non-root nodes (``leaves_only=False``, our reading of
    the test distribution) or over the leaves.
    """
    S = check_int("S", S, low=2)
    count = check_int("count", count, low=1)
    check_rng("rng", rng)
    max_depth = check_int("max_depth", max_depth, low=1)
    min_depth = check_int("min_depth", min_depth, low=0, high=max_depth)
    trees, goals = [], []
    for _ in range(count):
        depth_cap = int(rng.integers(max(min_depth, 1), max_depth + 1))
        tree = random_tree(S, rng, max_depth=depth_cap, max_children=max_children, min_depth=min_depth)
        trees.append(tree)
        goals.append(sample_goal(tree, rng, leaves_only=leaves_only))
    return trees, goals
