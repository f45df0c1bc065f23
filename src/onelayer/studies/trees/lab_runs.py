"""The trees lab's runs (chapter "Trees lab", ``book/trees/lab.ipynb``), and the study ``trees-lab-variations``.

:func:`lab_run` trains, from zero (or a small Gaussian, a named variation), by
mini-batch SGD on fresh perfect binary trees (the paper's protocol, smaller
batches), either

* the single-head **backward** model (:mod:`onelayer.trees.backward.model`,
  layout R-B with or without the root token), or
* a **forward** model (:mod:`onelayer.trees.forward.model`, layout R-F with or
  without the chain of thought) with one of the architectures of
  :data:`ARCHITECTURES`: the structured two-head model, the structured single
  head, or one to three full heads,

and records on a fixed batch of training trees: the accuracy of each step
type, the symmetry-reduced scalars and the training loss.
:meth:`TreesLabResult.record` keeps what the lab's figure
(:func:`onelayer.figures.trees_lab.lab_panels`) draws.

Symmetry-reduced scalars (:func:`head_scalars`). For each head ``l`` the
node block ``A^T U_l A`` is summarised by its mean diagonal ``u_{l,1}`` and
mean off-diagonal ``u_{l,2}`` (:func:`onelayer.trees.backward.dynamics.symmetric_part`),
and the ``2 x 2`` stage block ``V_l`` is kept entry by entry; for the backward
model the node block is ``H = A^T B A`` with ``(h1, h2)``. A *full* head has no
separate ``U_l, V_l``; we read the same two blocks out of its key-query matrix,
``W^KQ_l[x^(2) keys, x^(2) query]`` and ``W^KQ_l[stage keys, stage query]``
(our choice: these are the entries the structured model trains; the full
head's other blocks are not shown).

The study :data:`STUDY` (``python -m onelayer study trees-lab-variations``) trains the chapter's variations of the
lab's default setting, one member per variation (:func:`run_member`: :func:`lab_run` with the variation's overrides,
in float64), and stores each run's record; the chapter's player and table load them instead of retraining eleven
settings on every execution.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from ...jitter import jitter
from ...seeding import generator
from ...training import History
from ...trees.backward import dynamics as backward_dynamics
from ...trees.backward import layout as backward_layout
from ...trees.backward import model as backward_model
from ...trees.forward import decoding as forward_decoding
from ...trees.forward import dynamics as forward_dynamics
from ...trees.forward import layout as forward_layout
from ...trees.forward import model as forward_model
from ...trees.shared import embeddings
from ...trees.shared.data import LossOptions
from ...validation import check_choice, check_float, check_int
from ..runner import Member, Study
from .inputs import forward_init
from .stored_study import float64

__all__ = [
    "LAYOUTS",
    "ARCHITECTURES",
    "LOSS_NORMS",
    "MAX_DEPTH",
    "MAX_STEPS",
    "S_for",
    "architecture",
    "head_scalars",
    "scalar_names",
    "phase_times",
    "depth_accuracy",
    "TreesLabResult",
    "check_settings",
    "lab_run",
    "compare",
    "Settings",
    "QUICK",
    "members",
    "run_member",
    "summarize",
    "STUDY",
]


#: Task and layout options: name -> (task, layout flag of that task).
LAYOUTS = {
    "forward": ("forward", {"cot": True}),
    "forward, no chain of thought": ("forward", {"cot": False}),
    "backward": ("backward", {"root_token": True}),
    "backward, no root token": ("backward", {"root_token": False}),
}

#: Forward architectures by name (the backward model always has one head).
ARCHITECTURES = {
    "2 heads (swap, stage)": forward_model.two_head,
    "1 head (swap+stage)": forward_model.single_head,
    "1 full head": lambda: forward_model.full_heads(1),
    "2 full heads": lambda: forward_model.full_heads(2),
    "3 full heads": lambda: forward_model.full_heads(3),
}

#: Loss normalisations: mean over positions or sum over positions (averaged over trees), with or without 1/2.
LOSS_NORMS = {
    "mean, 1/2": LossOptions("mean", True),
    "mean, 1": LossOptions("mean", False),
    "sum, 1/2": LossOptions("sum", True),
    "sum, 1": LossOptions("sum", False),
}


#: Largest depth the lab accepts (a depth-4 run of 200 steps takes several seconds).
MAX_DEPTH = 4
#: Largest number of steps the lab accepts.
MAX_STEPS = 2000
_STAGE_ENTRIES = ("b,b", "b,f", "f,b", "f,f")


def S_for(m: int) -> int:
    """Number of symbols used at depth ``m``: ``2^(m+1) + 9`` (25 at ``m = 3``, the authors' forward setting)."""
    m = check_int("m", m, low=1, high=12)
    return 2 ** (m + 1) + 9


def architecture(heads: str) -> forward_model.ForwardArchitecture:
    """The forward architecture called ``heads`` in :data:`ARCHITECTURES`."""
    return ARCHITECTURES[check_choice("heads", heads, ARCHITECTURES)]()


def _blocks(params, arch: forward_model.ForwardArchitecture, d: int, l: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(node block, stage block)`` of head ``l`` (1-based), indexed [key, query]."""
    if arch.kind == "structured":
        return params[f"U{l}"], params[f"V{l}"]
    W = params[f"WKQ{l}"]
    return W[d : 2 * d, d : 2 * d], W[2 * d :, 2 * d :]


def scalar_names(arch: forward_model.ForwardArchitecture | None) -> tuple[list[str], list[str]]:
    """Names of the node-block and stage-block scalars of :func:`head_scalars` (``arch=None``: backward)."""
    if arch is None:
        return ["h1", "h2"], []
    node = [f"u{l},{k}" for l in range(1, arch.heads + 1) for k in (1, 2)]
    stage = [f"V{l}[{e}]" for l in range(1, arch.heads + 1) for e in _STAGE_ENTRIES]
    return node, stage


def head_scalars(params, A: torch.Tensor, arch: forward_model.ForwardArchitecture | None = None) -> np.ndarray:
    """Symmetry-reduced scalars: ``(h1, h2)`` of the backward ``B``, or for each forward head
    ``(u_{l,1}, u_{l,2})`` followed by all heads' stage entries ``V_l[key stage, query stage]``
    (order of :func:`scalar_names`)."""
    A = embeddings.check_embeddings(A)
    if arch is None:
        return np.asarray(backward_dynamics.symmetric_part(A.T @ params["B"] @ A))
    d = A.shape[0]
    node, stage = [], []
    for l in range(1, arch.heads + 1):
        U, V = _blocks(params, arch, d, l)
        node += list(backward_dynamics.symmetric_part(A.T @ U @ A))
        stage += [float(v) for v in V.reshape(-1)]
    return np.asarray(node + stage)


def phase_times(res: "TreesLabResult") -> dict:
    """The steps at which each step type of a forward run becomes correct
    (:func:`onelayer.trees.forward.dynamics.phase_times` of its recorded accuracies)."""
    return forward_dynamics.phase_times(res.history.steps, res.history["accuracy"])


def depth_accuracy(res: "TreesLabResult", depth: int, *, trees: int = 256, seed: int = 7) -> float:
    """Whole-path accuracy of greedy decoding by a trained run on ``trees`` random test trees with depth cap
    ``depth`` (0-3 children; drawn from ``numpy.random.default_rng(seed)``)."""
    S, rng = res.A.shape[1], np.random.default_rng(seed)
    if res.arch is None:
        batch, _ = backward_layout.random_tree_batch(S, trees, rng, max_depth=depth)
        return backward_model.greedy_decode(res.history.params["B"], res.A, batch).path_accuracy
    batch, _ = forward_layout.random_forward_batch(S, trees, rng, max_depth=depth)
    return forward_decoding.greedy_decode(res.history.params, res.arch, res.A, batch).path_accuracy


@dataclass
class TreesLabResult:
    """One trained setting.

    Attributes
    ----------
    history:
        The SGD run: records ``"loss"``, ``"accuracy"`` (columns
        ``accuracy_names``), ``"scalars"`` (columns ``node_names + stage_names``)
        and, for the backward task, ``"correct_weight"``.
    settings:
        The validated settings.
    arch:
        The forward architecture (``None`` for the backward task).
    A, eval_batch:
        The embeddings and the fixed evaluation batch (training distribution).
    accuracy_names, node_names, stage_names:
        Column names of the records.
    path_accuracy:
        Whole-path accuracy of greedy decoding on ``eval_batch`` after training.
    seconds:
        Wall-clock time of training, recording and decoding.
    """

    history: History
    settings: dict
    arch: forward_model.ForwardArchitecture | None
    A: torch.Tensor
    eval_batch: object
    accuracy_names: list[str]
    node_names: list[str]
    stage_names: list[str]
    path_accuracy: float
    seconds: float

    @property
    def task(self) -> str:
        """``"forward"`` or ``"backward"``."""
        return LAYOUTS[self.settings["layout"]][0]

    def summary(self) -> dict:
        """Initial and final loss, whole-path accuracy, final accuracy per column and the worst column (``None`` if all are 1)."""
        h = self.history
        final = np.asarray(h.final("accuracy"), dtype=float)
        worst = int(np.argmin(final))
        out = {"initial_loss": float(h["loss"][0]), "final_loss": float(h.final("loss")),
               "path_accuracy": self.path_accuracy, "worst_accuracy": float(final[worst]),
               "worst_step": self.accuracy_names[worst] if final[worst] < 1 else None}
        out.update({f"accuracy {n}": float(v) for n, v in zip(self.accuracy_names, final)})
        return out

    def record(self) -> dict:
        """What the lab's figure draws (:func:`onelayer.figures.trees_lab.lab_panels`), as plain values: the settings,
        ``S``, the model's label, the recorded steps, loss, accuracy, scalars (and the backward task's
        ``correct_weight``, else ``None``), the column names and :meth:`summary`."""
        h = self.history
        return {"settings": dict(self.settings), "S": int(self.A.shape[1]),
                "model": self.arch.label() if self.arch is not None else "one head",
                "steps": [int(t) for t in h.steps], "loss": np.asarray(h["loss"], dtype=float),
                "accuracy": np.asarray(h["accuracy"], dtype=float), "scalars": np.asarray(h["scalars"], dtype=float),
                "correct_weight": np.asarray(h["correct_weight"], dtype=float) if self.arch is None else None,
                "accuracy_names": list(self.accuracy_names), "node_names": list(self.node_names),
                "stage_names": list(self.stage_names), "summary": self.summary()}


def compare(variations: Mapping[str, Mapping]) -> list[dict]:
    """Run :func:`lab_run` for each named variation of the default setting; one row (``name`` + summary) per run."""
    if not isinstance(variations, Mapping) or not variations:
        raise TypeError("variations must be a non-empty mapping name -> settings")
    return [{"name": name, **lab_run(**dict(kw)).summary()} for name, kw in variations.items()]


def check_settings(layout, m, heads, lr, loss_norm, init_scale, steps, batch_size, eval_size, record_every, seed) -> dict:
    return {
        "layout": check_choice("layout", layout, LAYOUTS),
        "m": check_int("m", m, low=1, high=MAX_DEPTH),
        "heads": check_choice("heads", heads, ARCHITECTURES),
        "lr": check_float("lr", lr, low=0.0, low_open=True),
        "loss_norm": check_choice("loss_norm", loss_norm, LOSS_NORMS),
        "init_scale": check_float("init_scale", init_scale, low=0.0),
        "steps": check_int("steps", steps, low=1, high=MAX_STEPS),
        "batch_size": check_int("batch_size", batch_size, low=1, high=4096),
        "eval_size": check_int("eval_size", eval_size, low=1, high=4096),
        "record_every": check_int("record_every", record_every, low=1),
        "seed": check_int("seed", seed, low=0),
    }


def _forward_run(s, flags, A, progress):
    arch = architecture(s["heads"])
    S, m = A.shape[1], s["m"]
    ev = forward_layout.perfect_forward_batch(m, S, s["eval_size"], np.random.default_rng(s["seed"] + 123), **flags)
    types = [t for t in forward_layout.STEP_TYPES[:3] if bool((ev.step_type == forward_layout.STEP_TYPES.index(t)).any())]

    def accuracy(p):
        acc = forward_decoding.accuracy_by_type(forward_decoding.teacher_forced_correct(p, arch, A, ev), ev)
        return np.array([acc[t] for t in types])

    init = None
    if s["init_scale"] > 0:
        init = forward_init(arch, A, init_scale=s["init_scale"], gen=generator(s["seed"]))
    hist = forward_model.train_forward(
        arch, A, m=m, steps=s["steps"], lr=s["lr"], batch_size=s["batch_size"], seed=s["seed"],
        options=LOSS_NORMS[s["loss_norm"]], init=init, progress=progress, record_every=s["record_every"],
        record={"accuracy": accuracy, "scalars": lambda p: head_scalars(p, A, arch)}, **flags)
    path = forward_decoding.greedy_decode(hist.params, arch, A, ev).path_accuracy
    return hist, arch, ev, [f"{t} steps" for t in types], path


def _backward_run(s, flags, A, progress):
    S, m = A.shape[1], s["m"]
    ev = backward_layout.perfect_tree_batch(m, S, s["eval_size"], np.random.default_rng(s["seed"] + 123), **flags)
    init = None
    if s["init_scale"] > 0:
        d = A.shape[0]
        B0 = s["init_scale"] * torch.randn((d, d), generator=generator(s["seed"]), dtype=torch.float64)
        init = {"B": jitter(B0, "trees.backward.init.B").to(A.dtype)}
    record = {
        "accuracy": lambda p: backward_model.greedy_decode(p["B"], A, ev).accuracy_by_step(),
        "scalars": lambda p: head_scalars(p, A),
        "correct_weight": lambda p: float(backward_model.correct_key_weight(p["B"], A, ev)[ev.target_mask].mean()),
    }
    hist = backward_model.train_backward(
        A, m=m, steps=s["steps"], lr=s["lr"], batch_size=s["batch_size"], seed=s["seed"],
        options=LOSS_NORMS[s["loss_norm"]], init=init, record=record, progress=progress,
        record_every=s["record_every"], **flags)
    path = backward_model.greedy_decode(hist.params["B"], A, ev).path_accuracy
    return hist, None, ev, [f"step {k} (greedy)" for k in range(1, ev.steps + 1)], path


def lab_run(layout: str = "forward", m: int = 2, heads: str = "2 heads (swap, stage)", lr: float = 2.0,
            loss_norm: str = "mean, 1/2", init_scale: float = 0.0, steps: int = 200, *, batch_size: int = 64,
            eval_size: int = 128, record_every: int = 10, seed: int = 0, progress: bool = False) -> TreesLabResult:
    """Train one setting and record loss, accuracy by step type and the symmetry-reduced scalars.

    Parameters
    ----------
    layout:
        A key of :data:`LAYOUTS`: the task (forward or backward) and its layout option.
    m:
        Training depth in ``[1, 4]``; ``S = S_for(m)`` one-hot symbols.
    heads:
        A key of :data:`ARCHITECTURES` (forward task only; the backward model has one head
        and ignores it).
    lr:
        Constant step size (``> 0``).
    loss_norm:
        A key of :data:`LOSS_NORMS`.
    init_scale:
        ``0`` for zero initialisation (the paper's), otherwise the standard deviation
        of a Gaussian initialisation (a named variation; it is what lets identical
        full heads differ).
    steps:
        Number of SGD steps, in ``[1, 2000]``.
    batch_size, eval_size, record_every, seed:
        Fresh training trees per step; size of the fixed evaluation batch (seed
        ``seed + 123``); recording interval; seed of the training stream and the initialisation.
    progress:
        Show a ``tqdm`` progress bar while training.

    The accuracy columns are the teacher-forced accuracy of each step type
    present (forward task), or the accuracy of greedy decoding at chain step
    ``k = 1..m`` (backward task).
    """
    s = check_settings(layout, m, heads, lr, loss_norm, init_scale, steps, batch_size, eval_size, record_every, seed)
    task, flags = LAYOUTS[s["layout"]]
    A = embeddings.one_hot_embeddings(S_for(s["m"]))
    start = time.perf_counter()
    run = _forward_run if task == "forward" else _backward_run
    hist, arch, ev, acc_names, path = run(s, flags, A, progress)
    node, stage = scalar_names(arch)
    return TreesLabResult(hist, s, arch, A, ev, acc_names, node, stage, path, time.perf_counter() - start)


@dataclass(frozen=True)
class Settings:
    """The variations of the lab's default setting the study trains: (name, overrides of :func:`lab_run`'s defaults),
    and extra keyword arguments of every run (``--quick``: fewer steps)."""

    variations: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = (
        ("default: 2 heads", ()),
        ("1 head (swap+stage)", (("heads", "1 head (swap+stage)"),)),
        ("1 full head", (("heads", "1 full head"),)),
        ("2 full heads, zero init", (("heads", "2 full heads"),)),
        ("3 full heads, init 0.01", (("heads", "3 full heads"), ("init_scale", 0.01))),
        ("no chain of thought", (("layout", "forward, no chain of thought"),)),
        ("lr 1, 400 steps", (("lr", 1.0), ("steps", 400))),
        ("m=3, 200 steps", (("m", 3),)),
        ("m=3, 700 steps", (("m", 3), ("steps", 700))),
        ("backward", (("layout", "backward"),)),
        ("backward, no root token", (("layout", "backward, no root token"),)),
    )
    #: SGD steps of every run (``0``: each variation's own, the default 200)
    steps: int = 0


#: ``--quick``: every variation, 20 SGD steps.
QUICK = Settings(steps=20)


def members(settings: Settings) -> list[Member]:
    """One member per variation (key ``v00``, ``v01``, ... in the order of ``settings.variations``)."""
    return [Member(f"v{i:02d}", {"name": name, "overrides": [list(kv) for kv in overrides]},
                   cost=float(dict(overrides).get("steps", 200) * (2 if dict(overrides).get("m", 2) == 3 else 1)))
            for i, (name, overrides) in enumerate(settings.variations)]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`lab_run` of the member's variation in float64: its :meth:`TreesLabResult.record` and its seconds."""
    kw = {k: v for k, v in member.fields["overrides"]}
    if settings.steps:
        kw["steps"] = settings.steps
    with float64():
        res = lab_run(**kw)
    return {"name": member.fields["name"], **res.record(), "seconds": res.seconds}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per variation (in order): its name and its run's summary."""
    by_name = {r["result"]["name"]: r["result"]["summary"] for r in records}
    return {"rows": [{"name": name, **by_name[name]} for name, _ in settings.variations]}


STUDY = Study(name="trees-lab-variations", stored="trees/data/lab_variations.json", kind="trees-lab-variations",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              measured=("seconds",),
              description="Trees lab: the eleven variations of the default setting, one run each (the player's frames)")
