"""Many seeds of the backward model at the chapters' sizes: the SGD verdicts and Theorem 4 as rates (the stored study
``trees-backward-seeds``).

The training and generalisation chapters train one SGD run (``S = 31``, ``m = 4``, learning rate 1, batch 256,
1,500 steps). This study trains many: 20 training seeds with one-hot embeddings, and 20 Gaussian embedding draws
(``d = S``, draw ``first_draw + i`` with training seed ``i``). A member is one run (family x seed): SGD from ``B = 0``
(:func:`~onelayer.studies.trees.backward_batched.train_backward_members` with one member; the first script trained the
one-hot seeds together in one batched call, which gives every member the same numbers to the last bits or within the
summation order: the stored study's ``rtol``). Every run records ``h1``, ``h2`` and the residual of ``H = A^T B A``
from the symmetric span (:func:`member_h_stats`) and its batch loss every ``record_every`` steps, and is tested on the
generalisation chapter's random test trees at every checkpoint: greedy decoding, the teacher-forced test loss, the
margin of ``H`` and the margin bound (:mod:`onelayer.studies.trees.backward_generalization`). :func:`merge_bins`
groups path lengths into bins that hold enough goals.

``python -m onelayer study trees-backward-seeds`` runs it (``book/trees/data/backward_seeds.json``); the chapters read
it with :func:`stored`, which gives each family in the layout of the first script (lists indexed ``[step][run]``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from ...rates import mean_interval, rate
from ...validation import check_int
from ...trees.shared.embeddings import check_embeddings, one_hot_embeddings
from ..registry import load
from ..runner import Member, Study
from .backward_batched import train_backward_members
from ...trees.backward.construction import margin, margin_bound
from ...trees.backward.layout import random_tree_batch
from ...trees.backward.model import greedy_decode, loss as test_loss
from .inputs import gaussian_embeddings

__all__ = ["bound_rates", "KINDS", "Settings", "member_h_stats", "members", "run_member", "summarize", "family", "merge_bins", "STUDY",
           "stored"]

#: Embedding families of the study.
KINDS = ("one_hot", "gaussian")


@dataclass(frozen=True)
class Settings:
    """``runs`` per family in ``kinds``; the chapters' run (``S``, ``m``, ``steps`` SGD steps at ``lr``, batches of
    ``batch_size``), recorded every ``record_every`` steps and tested every ``checkpoint_every`` steps on
    ``test_trees`` random trees (seed ``test_seed``, depth cap ``test_max_depth``); Gaussian draws from
    ``first_draw``."""

    runs: int = 20
    kinds: tuple[str, ...] = KINDS
    S: int = 31
    m: int = 4
    steps: int = 1500
    lr: float = 1.0
    batch_size: int = 256
    record_every: int = 10
    checkpoint_every: int = 100
    test_trees: int = 1024
    test_seed: int = 7
    test_max_depth: int = 7
    first_draw: int = 1


@torch.no_grad()
def member_h_stats(B: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """``(h1, h2, residual)`` of each member's ``H = A^T B_b A``: shape ``(M, 3)``.

    ``h1``/``h2``: mean diagonal / off-diagonal entry; ``residual``: ``||H - Pi(H)||_F / ||H||_F`` (0 for ``H = 0``),
    as :func:`onelayer.trees.backward.dynamics.symmetry_residual` for one matrix.
    """
    A = check_embeddings(A)
    if not isinstance(B, torch.Tensor) or B.dim() != 3 or tuple(B.shape[1:]) != (A.shape[0], A.shape[0]):
        raise ValueError(f"B must be a tensor of shape (members, d, d) with d = {A.shape[0]}")
    H = A.T.to(B.dtype) @ B @ A.to(B.dtype)
    S = H.shape[-1]
    eye = torch.eye(S, dtype=H.dtype)
    tr = torch.diagonal(H, dim1=-2, dim2=-1).sum(-1)
    h1, h2 = tr / S, (H.sum((-2, -1)) - tr) / (S * (S - 1))
    proj = h1[:, None, None] * eye + h2[:, None, None] * (1 - eye)
    norm = torch.linalg.norm(H, dim=(-2, -1))
    res = torch.where(norm > 0, torch.linalg.norm(H - proj, dim=(-2, -1)) / norm.clamp(min=1e-300), torch.zeros_like(norm))
    return torch.stack([h1, h2, res], dim=1)


def members(settings: Settings) -> list[Member]:
    """One member per run: ``one_hot-s000`` (training seed 0), ``gaussian-d001-s000`` (draw 1, training seed 0), ..."""
    out = []
    for kind in settings.kinds:
        for i in range(settings.runs):
            draw = settings.first_draw + i if kind == "gaussian" else None
            key = f"{kind}-s{i:03d}" if draw is None else f"{kind}-d{draw:03d}-s{i:03d}"
            # cost: the Gaussian runs took 717 s against 519 s for the one-hot ones (the first script's seconds)
            out.append(Member(key=key, fields={"kind": kind, "seed": i, "draw": draw}, cost=1.0 if draw is None else 1.4))
    return out


@functools.lru_cache(maxsize=4)
def _test_set(S: int, trees: int, seed: int, max_depth: int):
    return random_tree_batch(S, trees, np.random.default_rng(seed), max_depth=max_depth)[0]


def run_member(settings: Settings, member: Member) -> dict:
    """One run: per record step ``loss``, ``h1``, ``h2``, ``residual``; per checkpoint ``exact_paths`` (test paths
    right), ``test_loss`` (teacher forced), ``margin`` (of ``H = A^T B A``) and ``margin_bound`` (the bound on the test
    loss from the margin, valid for orthonormal embeddings only); ``exact_by_length`` (the final model's exact paths
    per path length)."""
    s, kind, seed, draw = settings, member.fields["kind"], member.fields["seed"], member.fields["draw"]
    if s.steps % s.record_every or s.steps % s.checkpoint_every:
        raise ValueError(f"steps={s.steps} must be a multiple of record_every and checkpoint_every")
    test = _test_set(s.S, s.test_trees, s.test_seed, s.test_max_depth)
    lengths = test.target_mask.sum(1)
    A = one_hot_embeddings(s.S) if kind == "one_hot" else gaussian_embeddings(s.S, s.S, torch.Generator().manual_seed(draw))
    checkpoints = list(range(0, s.steps + 1, s.checkpoint_every))
    hist = train_backward_members(A, m=s.m, steps=s.steps, lr=s.lr, seeds=[seed], batch_size=s.batch_size,
                                  record_every=s.record_every, snapshot_at=checkpoints,
                                  record={"h": lambda p: member_h_stats(p["B"], A)})
    stats = np.asarray(hist.records["h"])[:, 0]
    out = {"loss": np.asarray(hist.records["loss"])[:, 0].tolist(), "h1": stats[:, 0].tolist(),
           "h2": stats[:, 1].tolist(), "residual": stats[:, 2].tolist(), "exact_paths": [], "test_loss": [],
           "margin": [], "margin_bound": []}
    for t in checkpoints:
        B = hist.snapshots[t]["B"][0]
        ok = greedy_decode(B, A, test).path_correct
        H = A.T.to(B.dtype) @ B @ A.to(B.dtype)
        out["exact_paths"].append(int(ok.sum()))
        out["test_loss"].append(float(test_loss(B, A, test)))
        out["margin"].append(margin(H))
        out["margin_bound"].append(margin_bound(H, test))
    out["exact_by_length"] = {str(k): int(ok[lengths == k].sum()) for k in sorted(set(lengths.tolist()))}
    return out


def family(settings: Settings, kind: str, records: list[dict]) -> dict:
    """The runs of one family as the first script stored them: ``seeds``, ``draws`` (``None`` for one-hot), the
    settings, ``record_steps`` and ``loss``, ``h1``, ``h2``, ``residual`` indexed ``[step][run]``; ``checkpoints`` and
    ``exact_paths``, ``test_loss``, ``margin``, ``margin_bound`` indexed ``[checkpoint][run]``; ``lengths`` (path
    lengths of the test set), ``goals_by_length`` and ``exact_by_length`` (``{length: [per run]}``)."""
    s = settings
    runs = sorted((r for r in records if r["fields"]["kind"] == kind), key=lambda r: r["fields"]["seed"])
    res = [r["result"] for r in runs]
    lengths = _test_set(s.S, s.test_trees, s.test_seed, s.test_max_depth).target_mask.sum(1)
    goals = {str(k): int((lengths == k).sum()) for k in sorted(set(lengths.tolist()))}

    def columns(name):
        return [list(row) for row in zip(*(r[name] for r in res))]

    return {"kind": kind, "seeds": [r["fields"]["seed"] for r in runs],
            "draws": [r["fields"]["draw"] for r in runs] if kind == "gaussian" else None,
            "S": s.S, "m": s.m, "steps": s.steps, "lr": float(s.lr), "batch_size": s.batch_size,
            "test_trees": s.test_trees, "test_seed": s.test_seed, "test_max_depth": s.test_max_depth,
            "record_steps": list(range(0, s.steps + 1, s.record_every)),
            **{name: columns(name) for name in ("loss", "h1", "h2", "residual")},
            "checkpoints": list(range(0, s.steps + 1, s.checkpoint_every)),
            **{name: columns(name) for name in ("exact_paths", "test_loss", "margin", "margin_bound")},
            "lengths": lengths.tolist(), "goals_by_length": goals,
            "exact_by_length": {k: [r["exact_by_length"][k] for r in res] for k in goals}}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per family: runs, test goals, each run's exact test paths at the last step and the runs with every path right
    (the full records are the members; :func:`family` lays them out as the chapters read them)."""
    out = {}
    for kind in settings.kinds:
        final = [r["result"]["exact_paths"][-1] for r in sorted(records, key=lambda r: r["fields"]["seed"])
                 if r["fields"]["kind"] == kind]
        out[kind] = {"runs": len(final), "goals": settings.test_trees, "exact_paths": final,
                     "runs_all_right": sum(k == settings.test_trees for k in final)}
    return out


STUDY = Study(name="trees-backward-seeds", stored="trees/data/backward_seeds.json", kind="trees-backward-seeds",
              settings=Settings(), quick=Settings(runs=2, steps=100, checkpoint_every=50, test_trees=128),
              members=members, run_member=run_member, summarize=summarize,
              description="Trees I: backward SGD over 20 seeds (one-hot) and 20 embedding draws (Gaussian), tested on "
                          "1,024 random trees, with the test loss, the margin and its bound at every checkpoint")


def stored(path=None) -> dict:
    """The stored study (``path``: another file of it) as the chapters read it: ``{"runs": {kind: family(...)}}``."""
    data = load(STUDY.name, path=path)
    settings = Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in data["settings"].items()})
    return {"quick": data["quick"], "runs": {kind: family(settings, kind, data["members"]) for kind in settings.kinds}}


def merge_bins(counts: dict, min_count: int = 50) -> list[tuple[int, int]]:
    """Group consecutive keys (path lengths) into bins ``(low, high)`` that hold at least ``min_count`` cases each.

    Keys are taken in increasing order and added to the current bin until it holds ``min_count``; a last bin that
    falls short is merged into the one before it. ``counts``: ``{length: cases}`` (keys may be strings).
    """
    min_count = check_int("min_count", min_count, low=1)
    if not isinstance(counts, dict) or not counts:
        raise ValueError("counts must be a non-empty dict {length: cases}")
    items = sorted((int(k), check_int(f"counts[{k}]", v, low=0)) for k, v in counts.items())
    if sum(v for _, v in items) < min_count:
        raise ValueError(f"the counts hold {sum(v for _, v in items)} cases, fewer than min_count={min_count}")
    bins, low, total = [], None, 0
    for k, v in items:
        low = k if low is None else low
        total += v
        if total >= min_count:
            bins.append([low, k, total])
            low, total = None, 0
    if low is not None:
        bins[-1][1] = items[-1][0]
    return [(lo, hi) for lo, hi, _ in bins]


def bound_rates(run: dict) -> dict:
    """The margin bound over stored runs of one family (``run``: ``stored()["runs"][family]``).

    Per run, at the checkpoints where the margin of ``H`` is positive: does the test loss stay at or below the bound
    at every one (``holds``, a :class:`~onelayer.rates.Rate` over runs; a run with no positive margin would count as
    not holding), and does the test loss fall at every one after the first (``falls``)? Also the checkpoints with a
    positive margin per run (``positive``: fewest, most), the smallest and largest ratio bound / test loss at those
    checkpoints over all runs (``ratio``) and the final test loss and bound (``final_loss``, ``final_bound``: mean with
    its interval).
    """
    if "margin_bound" not in run:
        raise ValueError("the stored study holds no test loss, margin and bound per checkpoint: run "
                         "`python -m onelayer study trees-backward-seeds` again")
    loss, delta, bound = (np.asarray(run[k], dtype=float) for k in ("test_loss", "margin", "margin_bound"))
    positive = delta > 0  # (checkpoints, runs)
    n = loss.shape[1]
    holds = [bool(positive[:, r].any() and np.all(loss[positive[:, r], r] <= bound[positive[:, r], r])) for r in range(n)]
    falls = [bool(np.all(np.diff(loss[positive[:, r], r]) < 0)) for r in range(n)]
    ratio = bound[positive] / loss[positive]
    return {"runs": n, "checkpoints": len(run["checkpoints"]), "steps": run["steps"],
            "holds": rate(sum(holds), n), "falls": rate(sum(falls), n),
            "positive": (int(positive.sum(0).min()), int(positive.sum(0).max())),
            "ratio": (float(ratio.min()), float(ratio.max())) if ratio.size else (float("nan"), float("nan")),
            "final_loss": mean_interval(loss[-1]), "final_bound": mean_interval(bound[-1])}
