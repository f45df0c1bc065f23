"""The limits chapter's one-run verdicts over 20 seeds (a stored study, issue 22).

Three experiments of the chapter "Theorem 8 and the limits", each a claim about training runs, so each is measured
over ``seeds`` training runs trained together (:func:`onelayer.training.train` with ``members=True``; every member keeps its own
parameters and its own stream of perfect training trees, ``numpy`` generator ``seed``):

* ``theorem8``: the structured two-head model from zero at the chapter's setting (``m = 3``, ``S = 25``, mean loss,
  learning rate 2, 1,000 steps) but with batches of 32 trees, each member decoded greedily on its *own* ``test_trees`` random test
  trees (0-3 children, depth caps 1-``test_max_depth``, any non-root goal; generator ``70_000 + seed``), counted by
  goal depth: goals, whole paths right, whole chains right.
* ``direct``: the two-head model and one full head (both from zero) trained on the answer-only layout (no chain of
  thought) at the same setting for 600 steps, each member scored on ``test_trees`` perfect depth-``m`` trees
  (generator ``11_000 + seed``) and on its own random test trees by goal depth (generator ``71_000 + seed``).
* ``no_turn``: one full head and the two-head model on the layout without a turning token, at the settings of the
  one-against-two study (:data:`onelayer.studies.trees.forward_edge_flag.MAIN`: sum loss, learning rate 0.2, batch 32,
  500 steps, one test set of 512 random trees per cell), so the stored cells of that study with the turning token
  are the comparison (:func:`onelayer.studies.trees.forward_edge_flag.cell_runs` with ``turning=False``).
* ``heads``: 1-4 full heads from ``N(0, 0.01^2)`` at training depths ``m = 2`` and ``3`` (``S = 2^(m+1) + 9``, the
  heads x depth runs of :mod:`onelayer.studies.trees.forward_limits`), mean loss, learning rate 2, in several (batch size,
  steps) cells: ``m = 2`` at batch 32 and 256 for 300 steps and at batch 32 for 1,000; ``m = 3`` at batch 32 for
  500 and 1,500 steps. Each member is scored on 256 perfect training trees and on its own 2,048 random test trees
  with the joint profile :func:`joint_counts`: goals, paths right and chains right per (tree size, goal depth).

:func:`gaussian_members` trains the two-head model with a different Gaussian embedding draw per member (the
trainer of the study :mod:`onelayer.studies.trees.forward_beyond`, one draw per member).

The study ``trees-forward-limit-rates`` (:data:`STUDY`) has one member per batched call of the pre-runner script (a
part's model, or for ``heads`` a cell's model, with its seeds trained together; ``theorem8`` is one member), so its
numbers are that script's. Reproduce::

    python -m onelayer study trees-forward-limit-rates --jobs 2

(``--quick`` for the seconds-long version the tests use).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...training import BatchedHistory, stack_params, train
from ...validation import check_float, check_int, check_int_sequence
from ...trees.shared.embeddings import check_embeddings, one_hot_embeddings
from ...trees.shared.data import LossOptions
from ...trees.forward.model import init_params, member_inputs, two_head
from ...trees.forward.decoding import greedy_decode
from .forward_edge_flag import REDUCTIONS, MAIN as EDGE_MAIN, cell_runs, train_members
from ...trees.forward.layout import perfect_forward_batch, random_forward_batch
from .forward_limits import architecture
from ..runner import Member, Study
from .forward_seeded_training import batched_structured_loss, stacked_data
from .stored_study import float64

__all__ = ["Theorem8", "Direct", "NoTurn", "HeadsCell", "Heads", "Settings", "QUICK_SETTINGS", "SETTINGS", "QUICK",
           "PARTS", "depth_counts", "joint_counts", "theorem8_runs", "direct_runs", "no_turn_runs", "heads_runs",
           "heads_cell_runs", "gaussian_members", "CHUNKED_FROM_BATCH", "MEMBER_CHUNK", "member_chunk", "members",
           "run_member", "summarize", "STUDY"]


@dataclass(frozen=True)
class Theorem8:
    """The two-head model from zero at the chapter's setting, batches of 32 trees, each member on its own test trees."""

    m: int = 3
    S: int = 25
    steps: int = 1000
    lr: float = 2.0
    batch_size: int = 32
    reduction: str = "mean, 1/2"
    test_trees: int = 1024
    test_max_depth: int = 6


@dataclass(frozen=True)
class Direct:
    """The answer-only layout (no chain of thought), every model of ``models`` from zero."""

    m: int = 3
    S: int = 25
    steps: int = 600
    lr: float = 2.0
    batch_size: int = 32
    reduction: str = "mean, 1/2"
    models: tuple[str, ...] = ("two_head", "full1")
    test_trees: int = 1024
    test_max_depth: int = 6


@dataclass(frozen=True)
class NoTurn:
    """The layout without a turning token at the one-against-two study's sizes
    (:data:`onelayer.studies.trees.forward_edge_flag.MAIN`)."""

    m: int = EDGE_MAIN.m
    S: int = EDGE_MAIN.S
    steps: int = EDGE_MAIN.steps
    lr: float = EDGE_MAIN.lr
    batch_size: int = EDGE_MAIN.batch_size
    test_trees: int = EDGE_MAIN.test_trees
    test_max_depth: int = EDGE_MAIN.test_max_depth
    reduction: str = "sum, 1"
    models: tuple[str, ...] = ("full1", "two_head")


@dataclass(frozen=True)
class HeadsCell:
    """One (training depth, batch size, steps) cell of the ``heads`` part."""

    m: int
    batch_size: int
    steps: int


@dataclass(frozen=True)
class Heads:
    """1-4 full heads from ``N(0, init_scale^2)`` in every cell of ``cells``."""

    lr: float = 2.0
    reduction: str = "mean, 1/2"
    init_scale: float = 0.01
    models: tuple[str, ...] = ("full1", "full2", "full3", "full4")
    cells: tuple[HeadsCell, ...] = (HeadsCell(2, 32, 300), HeadsCell(2, 256, 300), HeadsCell(2, 32, 1000),
                                    HeadsCell(3, 32, 500), HeadsCell(3, 32, 1500))
    test_trees: int = 2048
    test_max_depth: int = 6
    train_trees: int = 256


@dataclass(frozen=True)
class Settings:
    """The study's sizes (module docstring): ``seeds`` seeds ``0 .. seeds - 1`` in every part. Batches of 32 trees
    instead of the chapter's 256 keep the study within minutes on a shared machine; the ``heads`` part measures one
    cell at both batch sizes."""

    seeds: int = 20
    theorem8: Theorem8 = Theorem8()
    direct: Direct = Direct()
    no_turn: NoTurn = NoTurn()
    heads: Heads = Heads()


#: The seconds-long version (tests, a figure's quick mode).
QUICK_SETTINGS = Settings(
    seeds=2,
    theorem8=Theorem8(m=2, S=15, steps=20, batch_size=8, test_trees=16, test_max_depth=4),
    direct=Direct(m=2, S=15, steps=10, batch_size=8, test_trees=16, test_max_depth=4),
    no_turn=NoTurn(m=2, S=15, steps=10, lr=0.2, batch_size=8, models=("full1",), test_trees=16, test_max_depth=4),
    heads=Heads(models=("full1", "full2"), cells=(HeadsCell(2, 8, 10), HeadsCell(2, 16, 10)), test_trees=16,
                test_max_depth=4, train_trees=16))


def _plain(value):
    """Settings as the parts' functions and the chapter read them: dicts, lists for tuples."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


#: :class:`Settings` and :data:`QUICK_SETTINGS` as plain dicts (what the parts' functions take and the summary stores).
SETTINGS = _plain(Settings())
QUICK = _plain(QUICK_SETTINGS)

#: From this batch size on a cell trains its 20 members :data:`MEMBER_CHUNK` at a time (``member_chunk`` of
#: :func:`~onelayer.studies.trees.forward_edge_flag.train_members`): at batch 256 all 20 at once are compute-bound and no
#: faster than separate runs, 5 at a time are (``make bench``, the trees forward study rows). Same results either way.
CHUNKED_FROM_BATCH = 256
MEMBER_CHUNK = 5


def member_chunk(batch_size: int) -> int | None:
    """How many members a cell of this batch size trains per batched call (``None``: all at once)."""
    return MEMBER_CHUNK if check_int("batch_size", batch_size, low=1) >= CHUNKED_FROM_BATCH else None


#: The parts of the study.
PARTS = ("no_turn", "theorem8", "direct", "heads")


def depth_counts(result) -> dict[str, list[int]]:
    """``goal depth -> [goals, whole paths right, whole chains right]`` of a greedy decoding (keys as strings)."""
    depth = result.batch.goal_depth
    out = {}
    for D in sorted(int(d) for d in torch.unique(depth)):
        sel = depth == D
        out[str(D)] = [int(sel.sum()), int(result.answer_correct[sel].sum()), int(result.cot_correct[sel].sum())]
    return out


def _finite(p: dict) -> bool:
    return all(bool(torch.isfinite(v).all()) for v in p.values())


def theorem8_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """The two-head model from zero, one member per seed (``s`` is ``SETTINGS["theorem8"]``), each decoded on its
    own random test trees: one JSON-ready dict per member (losses, :func:`depth_counts`)."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    arch, A = two_head(), one_hot_embeddings(s["S"])
    rngs = [np.random.default_rng(x) for x in seeds]
    options = REDUCTIONS[s["reduction"]]
    init = stack_params([init_params(arch, A) for _ in seeds])
    hist = train(init, lambda p: batched_structured_loss(p, stacked_data(A, s["m"], s["batch_size"], rngs),
                                                         values=arch.roles, options=options),
                 members=True, steps=s["steps"], lr=s["lr"], record_every=s["steps"])
    rows = []
    for i, seed in enumerate(seeds):
        p = {k: v[i] for k, v in hist.params.items()}
        test, _ = random_forward_batch(s["S"], s["test_trees"], np.random.default_rng(70_000 + seed),
                                       max_depth=s["test_max_depth"])
        rows.append({"seed": seed, "loss": [float(x) for x in hist["loss"][:, i]],
                     "by_depth": depth_counts(greedy_decode(p, arch, A, test))})
    return rows


def direct_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """Every model of ``s["models"]`` (``s`` is ``SETTINGS["direct"]``) trained from zero on the answer-only layout,
    one member per seed: whole-path counts on perfect depth-``m`` trees and by goal depth on random trees."""
    return [row for name in s["models"] for row in direct_model_runs(s, name, seeds)]


def direct_model_runs(s: dict, name: str, seeds: Sequence[int]) -> list[dict]:
    """One model of :func:`direct_runs`, its seeds trained together: one row per seed."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    A = one_hot_embeddings(s["S"])
    rows = []
    params, hist = train_members(name, m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction=s["reduction"],
                                 edge_stage="empty", seeds=seeds, batch_size=s["batch_size"], init_scale=0.0,
                                 record_every=s["steps"], cot=False)
    arch = architecture(name)
    for i, seed in enumerate(seeds):
        p = {k: v[i] for k, v in params.items()}
        perfect = perfect_forward_batch(s["m"], s["S"], s["test_trees"], np.random.default_rng(11_000 + seed), cot=False)
        rand, _ = random_forward_batch(s["S"], s["test_trees"], np.random.default_rng(71_000 + seed),
                                       max_depth=s["test_max_depth"], cot=False)
        ok = _finite(p)
        rows.append({"arch": name, "label": arch.label(), "seed": seed,
                     "loss": [float(x) for x in hist["loss"][:, i]],
                     "perfect": [s["test_trees"], int(greedy_decode(p, arch, A, perfect).answer_correct.sum()) if ok else 0],
                     "by_depth": depth_counts(greedy_decode(p, arch, A, rand)) if ok else None})
    return rows


def no_turn_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """The models of ``s["models"]`` (``s`` is ``SETTINGS["no_turn"]``) on the layout without a turning token: the
    rows of :func:`onelayer.studies.trees.forward_edge_flag.cell_runs` (empty edge stage blocks, ``turning=False``)."""
    rows = []
    for name in s["models"]:
        rows += cell_runs(name, m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction=s["reduction"],
                          edge_stage="empty", seeds=seeds, batch_size=s["batch_size"], test_trees=s["test_trees"],
                          test_max_depth=s["test_max_depth"], turning=False)
    return rows


def joint_counts(result, trees) -> dict[str, list[int]]:
    """``"size,depth" -> [goals, whole paths right, whole chains right]`` of a greedy decoding of ``trees`` (tree
    size = node count, goal depth = the goal's distance from the root), the keys sorted by size, then depth."""
    if len(trees) != len(result.answer_correct):
        raise ValueError("trees must be the decoded batch's trees, one per goal")
    out: dict[tuple[int, int], list[int]] = {}
    for t, d, ok, chain in zip(trees, result.batch.goal_depth.tolist(), result.answer_correct.tolist(),
                               result.cot_correct.tolist()):
        c = out.setdefault((int(t.n), int(d)), [0, 0, 0])
        c[0], c[1], c[2] = c[0] + 1, c[1] + int(ok), c[2] + int(chain)
    return {f"{n},{d}": c for (n, d), c in sorted(out.items())}


def heads_runs(s: dict, seeds: Sequence[int]) -> list[dict]:
    """Full heads (``s`` is ``SETTINGS["heads"]``: every model of ``s["models"]``, from ``N(0, init_scale^2)``) in
    every cell of ``s["cells"]`` (training depth ``m`` with ``S = 2^(m+1) + 9`` as in the heads x depth runs of
    :mod:`onelayer.studies.trees.forward_limits`, batch size, a fixed number of steps), one member per seed, trained
    together. Each member is scored on ``train_trees`` perfect training trees (generator ``60_000 + seed``) and on
    its own ``test_trees`` random test trees (0-3 children, depth caps 1-``test_max_depth``, any non-root goal;
    generator ``70_000 + seed``, so every model of a cell and seed sees the same trees), with the joint profile
    :func:`joint_counts` (goals by tree size and goal depth together)."""
    if not isinstance(s, dict) or not s.get("cells"):
        raise ValueError("s must be a heads settings dict with a non-empty 'cells' list")
    return [row for cell in s["cells"] for name in s["models"] for row in heads_cell_runs(s, cell, name, seeds)]


def heads_cell_runs(s: dict, cell: dict, name: str, seeds: Sequence[int]) -> list[dict]:
    """One model of :func:`heads_runs` in one cell (``{"m", "batch_size", "steps"}``), its seeds trained together
    (:func:`member_chunk` at a time): one row per seed."""
    seeds = check_int_sequence("seeds", seeds, low=0)
    m = check_int("m", cell["m"], low=1, high=6)
    S = 2 ** (m + 1) + 9
    A = one_hot_embeddings(S)
    params, hist = train_members(name, m=m, S=S, steps=cell["steps"], lr=s["lr"], reduction=s["reduction"],
                                 edge_stage="empty", seeds=seeds, batch_size=cell["batch_size"],
                                 init_scale=s["init_scale"], record_every=cell["steps"],
                                 member_chunk=member_chunk(cell["batch_size"]))
    arch = architecture(name)
    rows = []
    for i, seed in enumerate(seeds):
        p = {k: v[i] for k, v in params.items()}
        ok = _finite(p)
        test, trees = random_forward_batch(S, s["test_trees"], np.random.default_rng(70_000 + seed),
                                           max_depth=s["test_max_depth"])
        train = perfect_forward_batch(m, S, s["train_trees"], np.random.default_rng(60_000 + seed))
        rows.append({"arch": name, "label": arch.label(), "m": m, "S": S, "batch_size": cell["batch_size"],
                     "steps": cell["steps"], "seed": seed, "loss": [float(x) for x in hist["loss"][:, i]],
                     "train": [s["train_trees"], int(greedy_decode(p, arch, A, train).answer_correct.sum()) if ok else 0],
                     "joint": joint_counts(greedy_decode(p, arch, A, test), trees) if ok else None})
    return rows


def gaussian_members(As: Sequence[torch.Tensor], *, m: int, steps: int, lr: float, batch_size: int,
                     seeds: Sequence[int], options: LossOptions = LossOptions()) -> BatchedHistory:
    """The two-head model from zero with member ``i`` on its own embeddings ``As[i]`` and its own trees (generator
    ``seeds[i]``), trained together (the non-one-hot path of
    :func:`~onelayer.studies.trees.forward_seeded_training.batched_structured_loss`); records the loss at steps 0 and
    ``steps``."""
    As = [check_embeddings(A) for A in As]
    seeds = check_int_sequence("seeds", seeds, low=0)
    if len(As) != len(seeds) or not As or len({A.shape for A in As}) != 1:
        raise ValueError("As must be a non-empty list of equally shaped embeddings, one per seed")
    m, batch_size = check_int("m", m, low=1, high=8), check_int("batch_size", batch_size, low=1)
    lr = check_float("lr", lr, low=0.0, low_open=True)
    arch, S = two_head(), As[0].shape[1]
    rngs = [np.random.default_rng(x) for x in seeds]

    def data():
        return member_inputs([perfect_forward_batch(m, S, batch_size, rng) for rng in rngs], As)

    init = stack_params([init_params(arch, A) for A in As])
    return train(init, lambda p: batched_structured_loss(p, data(), values=arch.roles, options=options),
                 members=True, steps=check_int("steps", steps, low=1), lr=lr, record_every=steps)


def _name(model: str) -> str:
    return model.replace("_", "-")


def _heads_key(cell: HeadsCell, model: str) -> str:
    return f"heads-m{cell.m}-b{cell.batch_size:03d}-t{cell.steps:04d}-{model}"


def _keys(settings: Settings) -> dict[str, list[str]]:
    """Every member key of each part, in the order the part's rows are stored."""
    return {"no_turn": [f"no-turn-{_name(m)}" for m in settings.no_turn.models], "theorem8": ["theorem8"],
            "direct": [f"direct-{_name(m)}" for m in settings.direct.models],
            "heads": [_heads_key(c, m) for c in settings.heads.cells for m in settings.heads.models]}


def members(settings: Settings) -> list[Member]:
    """``no-turn-<model>``, ``theorem8``, ``direct-<model>`` and ``heads-m<m>-b<batch>-t<steps>-<model>``: one batched
    call each, its ``seeds`` seeds together. Cost: steps x batch x seeds (x heads for full heads)."""
    heads = lambda model: int(model[4:]) if model.startswith("full") else 1  # noqa: E731
    n = check_int("seeds", settings.seeds, low=1)
    out = [Member(f"no-turn-{_name(model)}", {"part": "no_turn", "model": model},
                  cost=float(settings.no_turn.steps * settings.no_turn.batch_size * n * heads(model)))
           for model in settings.no_turn.models]
    out.append(Member("theorem8", {"part": "theorem8"},
                      cost=float(settings.theorem8.steps * settings.theorem8.batch_size * n * 2)))
    out += [Member(f"direct-{_name(model)}", {"part": "direct", "model": model},
                   cost=float(settings.direct.steps * settings.direct.batch_size * n * heads(model)))
            for model in settings.direct.models]
    out += [Member(_heads_key(cell, model), {"part": "heads", "model": model, **dataclasses.asdict(cell)},
                   cost=float(cell.steps * cell.batch_size * n * heads(model)))
            for cell in settings.heads.cells for model in settings.heads.models]
    return out


def run_member(settings: Settings, member: Member) -> dict:
    """One batched call: ``{"rows": [one row per seed]}`` of its part (:func:`no_turn_runs`, :func:`theorem8_runs`,
    :func:`direct_runs`, :func:`heads_runs`)."""
    f = member.fields
    part = f["part"]
    s = _plain(getattr(settings, part))
    seeds = list(range(settings.seeds))
    with float64():
        if part == "no_turn":
            rows = cell_runs(f["model"], m=s["m"], S=s["S"], steps=s["steps"], lr=s["lr"], reduction=s["reduction"],
                             edge_stage="empty", seeds=seeds, batch_size=s["batch_size"], test_trees=s["test_trees"],
                             test_max_depth=s["test_max_depth"], turning=False)
        elif part == "theorem8":
            rows = theorem8_runs(s, seeds)
        elif part == "direct":
            rows = direct_model_runs(s, f["model"], seeds)
        else:
            cell = {k: f[k] for k in ("m", "batch_size", "steps")}
            rows = heads_cell_runs(s, cell, f["model"], seeds)
    return {"rows": rows}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The chapter's payload: ``settings`` (plain dicts) and each part's rows, members in the order of the settings."""
    by_key = {r["key"]: r["result"]["rows"] for r in records}
    return {"settings": _plain(settings),
            **{part: [row for key in keys for row in by_key[key]] for part, keys in _keys(settings).items()}}


STUDY = Study(name="trees-forward-limit-rates", stored="trees/data/forward_limit_rates.json",
              kind="trees-forward-limit-rates", settings=Settings(), quick=QUICK_SETTINGS, members=members,
              run_member=run_member, summarize=summarize,
              description="Trees II: Theorem 8, no chain of thought, no turning token, and 1-4 full heads at m = 2, 3 "
                          "with their failures by tree size and goal depth, over 20 seeds each")
