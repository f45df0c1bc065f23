"""Rooted trees with distinct symbol labels: the data of the trees paper.

A :class:`Tree` is a parent array (``-1`` for the root; node *indices* give the shape) and distinct labels in
``range(S)`` (0-based; the paper writes ``[S]``; labels are what a model sees).

* Training distribution: :func:`perfect_binary_tree` (depth ``m``, root at depth 0, so ``m = 4`` gives 31 nodes,
  our convention) with a uniform leaf goal; :func:`perfect_tree_draws` draws a batch of them as arrays.
* Test distribution: :func:`random_tree` (0 to ``max_children`` children per node, growth stops at
  ``max_depth``), goal from :func:`sample_goal`; :func:`random_trees` draws a batch with a random depth cap.

:func:`pad_sequences` stacks the token sequences of several trees into one right-padded batch (node blocks padded
with the empty symbol ``S``, other columns with 0).

Loss over a batch: both models regress the next token with ``c * ||y_hat - y||^2``; the paper's normalisation is not
known to us, so :class:`LossOptions` names it (``c`` = 1/2 or 1; the mean over all (tree, position) pairs or the sum
over positions averaged over trees) and :func:`normalised` applies it for every loss of both models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...validation import check_bool, check_choice, check_int

__all__ = ["Tree", "perfect_binary_tree", "random_tree", "sample_goal", "example_tree", "check_rng", "PaddedBatch",
           "PerfectDraws", "perfect_tree_draws", "random_trees", "check_trees", "pad_sequences", "unpadded_fields",
           "REDUCTIONS", "LossOptions", "normalised"]

def check_rng(name: str, rng) -> np.random.Generator:
    """Return ``rng`` if it is a ``numpy.random.Generator``, else raise ``TypeError``."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. onelayer.seeding.numpy_rng(0)), "
            f"got {type(rng).__name__}"
        )
    return rng


class PaddedBatch:
    """Mixin for the frozen dataclasses of a right-padded batch: tensor fields ``first (batch, L)`` and
    ``query (batch, K)``; indexing selects trees along every tensor field's first axis and copies the others."""

    @property
    def size(self) -> int:
        """Number of trees."""
        return int(self.first.shape[0])

    @property
    def length(self) -> int:
        """Padded sequence length ``L``."""
        return int(self.first.shape[1])

    @property
    def steps(self) -> int:
        """Padded number of targets ``K``."""
        return int(self.query.shape[1])

    def __getitem__(self, idx):
        """The sub-batch of the trees selected by ``idx`` (an int, slice or index tensor)."""
        import torch

        if isinstance(idx, int):
            idx = slice(idx, idx + 1)
        fields = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            fields[name] = value[idx] if isinstance(value, torch.Tensor) else value
        return type(self)(**fields)


def _int_array(name: str, values) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D integer array, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    out = arr.astype(np.int64, copy=True)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Tree:
    """A rooted tree whose nodes carry distinct symbols: ``parent[i]`` is the index of node ``i``'s parent (``-1``
    for the one root), ``labels`` are ``n`` distinct symbols in ``range(S)`` (``S >= n``). The arrays are copied and
    made read-only; two trees are equal when ``parent``, ``labels`` and ``S`` agree.
    """

    parent: np.ndarray
    labels: np.ndarray
    S: int

    def __post_init__(self):
        S = check_int("S", self.S, low=1)
        parent = _int_array("parent", self.parent)
        labels = _int_array("labels", self.labels)
        n = parent.size
        if n == 0:
            raise ValueError("parent must describe at least one node (n >= 1)")
        if labels.size != n:
            raise ValueError(f"labels must have one entry per node: parent has {n}, labels has {labels.size}")
        if n > S:
            raise ValueError(f"a tree with distinct labels from range(S) has at most S nodes; got n={n} > S={S}")
        roots = np.flatnonzero(parent == -1)
        if roots.size != 1:
            raise ValueError(f"parent must contain exactly one -1 (the root), found {roots.size}")
        if np.any((parent < -1) | (parent >= n)):
            raise ValueError(f"parent entries must be -1 or node indices in [0, {n - 1}]")
        if np.any(parent == np.arange(n)):
            raise ValueError("a node cannot be its own parent")
        if np.any((labels < 0) | (labels >= S)):
            raise ValueError(f"labels must lie in [0, {S - 1}] (range(S)), got min {labels.min()}, max {labels.max()}")
        if np.unique(labels).size != n:
            raise ValueError("labels must be distinct")
        depth = np.full(n, -1, dtype=np.int64)
        depth[roots[0]] = 0
        for _ in range(n):  # each pass fixes at least one more level
            todo = depth < 0
            if not todo.any():
                break
            ready = todo & (depth[np.where(parent >= 0, parent, 0)] >= 0)
            depth[ready] = depth[parent[ready]] + 1
        if np.any(depth < 0):
            raise ValueError("parent must describe a tree: some nodes do not reach the root (cycle)")
        depth.setflags(write=False)
        object.__setattr__(self, "S", S)
        object.__setattr__(self, "parent", parent)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "_depth", depth)

    # -- basic properties -------------------------------------------------
    @property
    def n(self) -> int:
        """Number of nodes."""
        return int(self.parent.size)

    @property
    def root(self) -> int:
        """Index of the root node."""
        return int(np.flatnonzero(self.parent == -1)[0])

    @property
    def depths(self) -> np.ndarray:
        """Depth of every node (root at depth 0), read-only array of shape ``(n,)``."""
        return self._depth

    @property
    def depth(self) -> int:
        """Maximal node depth (0 for a single node)."""
        return int(self._depth.max())

    def _node(self, i) -> int:
        return check_int("i", i, low=0, high=self.n - 1)

    def depth_of(self, i: int) -> int:
        """Depth of node ``i`` (its distance to the root)."""
        return int(self._depth[self._node(i)])

    def children(self, i: int) -> np.ndarray:
        """Indices of the children of node ``i`` (increasing)."""
        return np.flatnonzero(self.parent == self._node(i))

    def leaves(self) -> np.ndarray:
        """Indices of the nodes without children (the root only if ``n == 1``)."""
        has_child = np.zeros(self.n, dtype=bool)
        has_child[self.parent[self.parent >= 0]] = True
        return np.flatnonzero(~has_child)

    def path_to_root(self, i: int) -> np.ndarray:
        """Node indices ``[i, parent(i), ..., root]`` (length ``depth_of(i) + 1``)."""
        node = self._node(i)
        path = [node]
        while self.parent[node] != -1:
            node = int(self.parent[node])
            path.append(node)
        return np.asarray(path, dtype=np.int64)

    def edges(self) -> np.ndarray:
        """Array of shape ``(n - 1, 2)`` of ``(parent, child)`` node indices, children increasing."""
        child = np.flatnonzero(self.parent >= 0)
        return np.stack([self.parent[child], child], axis=1) if child.size else np.zeros((0, 2), dtype=np.int64)

    def label_of(self, i: int) -> int:
        """Symbol of node ``i``."""
        return int(self.labels[self._node(i)])

    def node_of(self, symbol: int) -> int:
        """Index of the node labelled ``symbol`` (``ValueError`` if no node has it)."""
        symbol = check_int("symbol", symbol, low=0, high=self.S - 1)
        hit = np.flatnonzero(self.labels == symbol)
        if hit.size == 0:
            raise ValueError(f"no node of this tree is labelled {symbol}")
        return int(hit[0])

    # -- equality ------------------------------------------------------------
    def _key(self):
        return (self.S, self.parent.tobytes(), self.labels.tobytes())

    def __eq__(self, other):
        if not isinstance(other, Tree):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Tree(n={self.n}, depth={self.depth}, S={self.S}, root label={self.label_of(self.root)})"


def _random_labels(n: int, S: int, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(S, size=n, replace=False).astype(np.int64)


def perfect_binary_tree(m: int, S: int, rng: np.random.Generator) -> Tree:
    """A perfect binary tree of depth ``m >= 0``, nodes breadth-first (node ``i`` has children ``2i + 1``, ``2i + 2``;
    the leaves are the last ``2^m``), labels a uniformly random injection into ``range(S)``, ``S >= 2^(m+1) - 1``."""
    m = check_int("m", m, low=0, high=20)
    n = 2 ** (m + 1) - 1
    S = check_int("S", S, low=n)
    check_rng("rng", rng)
    parent = np.concatenate([[-1], (np.arange(1, n) - 1) // 2])
    return Tree(parent=parent, labels=_random_labels(n, S, rng), S=S)


def random_tree(S: int, rng: np.random.Generator, *, max_depth: int, max_children: int = 3, min_nodes: int = 2,
        min_depth: int = 0, max_nodes: int | None = None, max_attempts: int = 10_000) -> Tree:
    """A random tree: each node below ``max_depth`` gets a uniform number of children in ``0..max_children``.

    Grown breadth-first from the root; a draw is redrawn (at most ``max_attempts`` times) unless it has
    ``min_nodes..max_nodes`` nodes (default ``2..S``: a non-root goal exists, labels stay distinct) and depth at
    least ``min_depth``. Labels are distinct, uniformly random, from ``range(S)``; the paper's test set uses
    ``max_children = 3``.
    """
    S = check_int("S", S, low=1)
    check_rng("rng", rng)
    max_depth = check_int("max_depth", max_depth, low=0, high=10_000)
    max_children = check_int("max_children", max_children, low=1, high=1_000)
    max_nodes = S if max_nodes is None else check_int("max_nodes", max_nodes, low=1, high=S)
    min_nodes = check_int("min_nodes", min_nodes, low=1, high=max_nodes)
    min_depth = check_int("min_depth", min_depth, low=0, high=max_depth)
    max_attempts = check_int("max_attempts", max_attempts, low=1)
    if min_depth + 1 > max_nodes:
        raise ValueError(f"min_depth={min_depth} needs at least {min_depth + 1} nodes but max_nodes={max_nodes}")
    return _random_tree(S, rng, max_depth, max_children, min_nodes, min_depth, max_nodes, max_attempts)


def _random_tree(S, rng, max_depth, max_children, min_nodes, min_depth, max_nodes, max_attempts) -> Tree:
    for _ in range(max_attempts):
        parent = [-1]
        depth = [0]
        frontier = [0]
        too_big = False
        while frontier and not too_big:
            nxt = []
            for node in frontier:
                if depth[node] >= max_depth:
                    continue
                for _k in range(int(rng.integers(0, max_children + 1))):
                    parent.append(node)
                    depth.append(depth[node] + 1)
                    nxt.append(len(parent) - 1)
                if len(parent) > max_nodes:
                    too_big = True
                    break
            frontier = nxt
        n = len(parent)
        if too_big or n < min_nodes or max(depth) < min_depth:
            continue
        return Tree(parent=np.asarray(parent), labels=_random_labels(n, S, rng), S=S)
    raise ValueError(
        f"no tree with {min_nodes} <= n <= {max_nodes} and depth >= {min_depth} in {max_attempts} draws "
        f"(max_depth={max_depth}, max_children={max_children}); relax the constraints"
    )


def sample_goal(tree: Tree, rng: np.random.Generator, *, leaves_only: bool = True) -> int:
    """A uniformly random goal node (index, never the root): a leaf (``leaves_only``, training) or any node."""
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a Tree, got {type(tree).__name__}")
    check_rng("rng", rng)
    check_bool("leaves_only", leaves_only)
    if tree.n < 2:
        raise ValueError("tree must have at least 2 nodes to have a non-root goal")
    return _sample_goal(tree, rng, leaves_only)


def _sample_goal(tree: Tree, rng: np.random.Generator, leaves_only: bool) -> int:
    pool = tree.leaves() if leaves_only else np.arange(tree.n)
    pool = pool[pool != tree.root]
    return int(rng.choice(pool))


def example_tree() -> Tree:
    """The book's worked example (``S = 9``): root 5, children 3 and 8; 3 has 1 and 7, 8 has 2 and 6. With goal 7
    (node 4) the goal-to-root path is 7, 3, 5."""
    return Tree(parent=np.array([-1, 0, 0, 1, 1, 2, 2]), labels=np.array([5, 3, 8, 1, 7, 2, 6]), S=9)


# --- sampling: the draws behind a batch of trees, in one fixed order for both layouts ---

@dataclass(frozen=True)
class PerfectDraws:
    """Perfect binary trees of depth ``m`` (breadth-first, as :func:`perfect_binary_tree`), a leaf goal each:
    ``child[j]`` has parent ``parent[j]``; ``labels[b, i]``, ``order[b]`` (edge order), ``goal[b]`` and
    ``path_labels[b]`` (goal in column 0 up to the root in column ``m``) per tree ``b``."""

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
    """``batch_size`` perfect trees of depth ``m`` with leaf goals, drawn in this order: the labels (an injection
    into ``range(S)`` per tree), the edge orders (``shuffle``; else children increase), the goal leaves."""
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


def random_trees(S: int, count: int, rng: np.random.Generator, *, max_depth: int, max_children: int = 3,
        min_depth: int = 0, leaves_only: bool = False) -> tuple[list[Tree], list[int]]:
    """``count`` random test trees, each with a depth cap uniform in ``max(min_depth, 1)..max_depth``, and goals
    uniform over the non-root nodes (our reading of the test distribution) or the leaves (``leaves_only``)."""
    S = check_int("S", S, low=2)
    count = check_int("count", count, low=1)
    check_rng("rng", rng)
    max_depth = check_int("max_depth", max_depth, low=1, high=10_000)
    max_children = check_int("max_children", max_children, low=1, high=1_000)
    min_depth = check_int("min_depth", min_depth, low=0, high=max_depth)
    check_bool("leaves_only", leaves_only)
    if min_depth + 1 > S:
        raise ValueError(f"min_depth={min_depth} needs at least {min_depth + 1} nodes but max_nodes={S}")
    trees, goals = [], []
    for _ in range(count):
        depth_cap = int(rng.integers(max(min_depth, 1), max_depth + 1))
        tree = _random_tree(S, rng, depth_cap, max_children, 2, min_depth, S, 10_000)
        trees.append(tree)
        goals.append(_sample_goal(tree, rng, leaves_only))
    return trees, goals


# --- padding: the token sequences of several trees as one right-padded batch ---

def check_trees(trees: Sequence[Tree], goals: Sequence[int]) -> tuple[list[Tree], list[int], int]:
    """``trees`` and ``goals`` as lists after checking them: non-empty, one goal per tree, one vocabulary size ``S``."""
    trees = list(trees)
    goals = list(goals)
    if not trees:
        raise ValueError("trees must contain at least one tree")
    if len(goals) != len(trees):
        raise ValueError(f"goals must have one entry per tree: {len(trees)} trees, {len(goals)} goals")
    S = trees[0].S
    if any(t.S != S for t in trees):
        raise ValueError("all trees must share the same vocabulary size S")
    return trees, goals, S


def pad_sequences(S: int, prompts: Sequence[np.ndarray], targets: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
    """Right-pad ``prompts[b] (P_b, w)`` and ``targets[b] (K_b, w)``: ``seq (batch, L, w)`` (prompt, then targets
    but the last), ``valid``, ``query (batch, K)`` (the position predicting each target), ``targets``,
    ``target_mask`` and ``prompt_len``."""
    P = np.array([len(p) for p in prompts])
    K = np.array([len(t) for t in targets])
    L = int((P + K - 1).max())
    Kmax = int(K.max())
    nb = len(prompts)
    width = np.asarray(targets[0]).shape[1]
    seq = np.zeros((nb, L, width), dtype=np.int64)
    seq[..., :2] = S
    valid = np.zeros((nb, L), dtype=bool)
    query = np.zeros((nb, Kmax), dtype=np.int64)
    tgt = np.zeros((nb, Kmax, width), dtype=np.int64)
    tgt[..., :2] = S
    tmask = np.zeros((nb, Kmax), dtype=bool)
    for b, (p, t) in enumerate(zip(prompts, targets)):
        s = np.concatenate([p, t[:-1]])
        seq[b, : len(s)] = s
        valid[b, : len(s)] = True
        query[b, : len(t)] = len(p) - 1 + np.arange(len(t))
        tgt[b, : len(t)] = t
        tmask[b, : len(t)] = True
    return {"seq": seq, "valid": valid, "query": query, "targets": tgt, "target_mask": tmask, "prompt_len": P}


def unpadded_fields(batch_size: int, P: int, K: int, root: np.ndarray, goal: np.ndarray, n: int) -> dict[str, torch.Tensor]:
    """The fields of :func:`pad_sequences` (and ``root``, ``goal``, ``n_nodes``) when no tree needs padding."""
    as_t = torch.as_tensor
    return {
        "valid": torch.ones((batch_size, P + K - 1), dtype=torch.bool),
        "query": as_t(np.broadcast_to(P - 1 + np.arange(K), (batch_size, K)).copy()),
        "target_mask": torch.ones((batch_size, K), dtype=torch.bool),
        "prompt_len": torch.full((batch_size,), P, dtype=torch.int64),
        "root": as_t(np.asarray(root).copy()),
        "goal": as_t(np.asarray(goal).copy()),
        "n_nodes": torch.full((batch_size,), n, dtype=torch.int64),
    }


#: Accepted values of ``reduction``.
REDUCTIONS = ("mean", "sum")


@dataclass(frozen=True)
class LossOptions:
    """Loss normalisation (reconstructed; the paper's is unknown): ``"mean"`` over all (tree, position) pairs or
    ``"sum"`` over positions averaged over trees; ``half``: the factor 1/2. Default: mean with 1/2."""

    reduction: str = "mean"
    half: bool = True

    def __post_init__(self):
        check_choice("reduction", self.reduction, REDUCTIONS)
        check_bool("half", self.half)


def normalised(total, *, positions, trees, options: LossOptions):
    """``c * total / positions`` (``"mean"``) or ``c * total / trees`` (``"sum"``), ``c = 1/2`` or ``1``: numbers or
    per-member tensors; ``c`` is a power of two, so the result is rounded once, by the division."""
    if not isinstance(options, LossOptions):
        raise TypeError("options must be a LossOptions")
    c = 0.5 if options.half else 1.0
    return c * total / (positions if options.reduction == "mean" else trees)
