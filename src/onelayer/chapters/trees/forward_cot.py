"""Chapter "Theorem 8 and the chain of thought" (``book/trees/forward_cot.ipynb``).

The two-head model trained on perfect trees and decoded on random ones (Theorem 8), and the same models trained
without a chain of thought. The one trained model the chapter decodes is the training chapter's run, loaded from the
stored study ``trees-forward-training-runs`` (:mod:`onelayer.studies.trees.forward_training_runs`; bit for bit the run
``train_forward`` gives with these settings); the rates over 20 seeds come from the stored study
``trees-forward-limit-rates`` (:mod:`onelayer.studies.trees.forward_limit_rates`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from ...figures.trees_forward import depth_accuracy_figure
from ...rates import mean_interval, rate
from ...registry import register
from ...seeding import numpy_rng
from ...studies.trees import forward_limit_rates as limit_rates, forward_training_runs as training_runs, stored_study
from ...studies.trees.forward_readings import merge_bins, pooled, rate_or_none
from ...trees.forward.model import loss, two_head
from ...trees.forward.decoding import ForwardDecodeResult, goal_counts, greedy_decode
from ...trees.forward.layout import perfect_forward_batch, random_forward_batch
from ...trees.shared import embeddings
from ...verdicts import trees_forward_cot as verdicts

__all__ = ["Settings", "SETTINGS", "limit_rates_stored", "trained_two_head", "test_set", "train_eval_batch",
           "test_decoding", "depth_bins", "depth_rows", "goal_depth_rows", "losses", "goal_rates", "theorem8_seeds", "direct_seeds",
           "depth_rates", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows.

    ``S = 25``, ``m = 3``, 1,024 random test trees [summary]; ``lr = 2`` (mean loss), 1,000 steps, the depth cap 6
    and the seeds [guess] of the one run the chapter decodes (stored in ``trees-forward-training-runs``). The stored 20-seed study (Theorem 8 and the runs
    without a chain of thought) has its own settings in :mod:`~onelayer.studies.trees.forward_limit_rates`.
    """

    S: int = 25
    m: int = 3
    steps: int = 1000
    lr: float = 2.0
    test_trees: int = 1024
    test_seed: int = 8
    test_max_depth: int = 6
    train_eval_trees: int = 1024
    train_eval_seed: int = 9
    #: a run "solves" the chains (or the paths) when at least this share of its test goals is right
    solved_at: float = 0.99
    #: every depth bin the chapter shows holds at least this many goals (neighbours merged)
    min_shown_goals: int = 50


SETTINGS = Settings()


@functools.lru_cache(maxsize=1)
def limit_rates_stored() -> dict:
    """The stored 20-seed study of :mod:`onelayer.studies.trees.forward_limit_rates` (its summary)."""
    return stored_study.summary(limit_rates.STUDY)


@functools.lru_cache(maxsize=1)
def trained_two_head():
    """The two-head model trained as in the training chapter (one-hot, from zero, seed 0): ``(A, history)``, member
    ``main`` of the stored study ``trees-forward-training-runs`` (refused if it was made with other settings)."""
    s = SETTINGS
    runs = training_runs.results(training_runs.Settings(S=s.S, m=s.m, steps=s.steps, lr=s.lr))
    return embeddings.one_hot_embeddings(s.S), stored_study.history(runs["main"])


@functools.lru_cache(maxsize=1)
def test_set():
    """The random test trees ``(batch, trees)``: 0-3 children, depth caps up to ``test_max_depth``, any non-root goal."""
    s = SETTINGS
    return random_forward_batch(s.S, s.test_trees, numpy_rng(s.test_seed), max_depth=s.test_max_depth)


@functools.lru_cache(maxsize=1)
def train_eval_batch():
    """``train_eval_trees`` perfect trees of depth ``m`` from the training distribution (seed ``train_eval_seed``)."""
    s = SETTINGS
    return perfect_forward_batch(s.m, s.S, s.train_eval_trees, numpy_rng(s.train_eval_seed))


@functools.lru_cache(maxsize=1)
def test_decoding():
    """Greedy decoding of the test trees by :func:`trained_two_head`."""
    A, hist = trained_two_head()
    return greedy_decode(hist.params, two_head(), A, test_set()[0])


def depth_bins(batch) -> list[tuple[int, int, torch.Tensor]]:
    """The goal-depth bins the chapter shows, ``(lo, hi, trees in the bin)``: neighbouring depths merged by
    :func:`~onelayer.studies.trees.forward_readings.merge_bins` until every bin holds at least ``min_shown_goals``
    trees. They depend on the test trees only, not on a model."""
    depths = batch.goal_depth
    counts = {D: int((depths == D).sum()) for D in range(1, int(depths.max()) + 1)}
    return [(lo, hi, (depths >= lo) & (depths <= hi)) for lo, hi in merge_bins(counts, SETTINGS.min_shown_goals)]


def depth_rows(batch, result: ForwardDecodeResult) -> list[dict]:
    """Whole-path and whole-chain accuracy of a decoding in each of :func:`depth_bins`, and whether the training
    trees have that depth."""
    rows = []
    for lo, hi, sel in depth_bins(batch):
        rows.append({"goal depth": f"{lo}" if lo == hi else f"{lo}-{hi}", "trees": int(sel.sum()),
                     "path accuracy": float(result.answer_correct[sel].double().mean()),
                     "chain accuracy": float(result.cot_correct[sel].double().mean()),
                     "seen in training": "yes" if lo == hi == SETTINGS.m else "no"})
    return rows


def goal_depth_rows() -> list[dict]:
    """:func:`depth_rows` of :func:`test_decoding` on :func:`test_set`."""
    return depth_rows(test_set()[0], test_decoding())


def losses() -> tuple[float, float]:
    """The trained model's loss on the test trees and on :func:`train_eval_batch`."""
    A, hist = trained_two_head()
    with torch.no_grad():
        return (float(loss(hist.params, two_head(), A, test_set()[0])),
                float(loss(hist.params, two_head(), A, train_eval_batch())))


def goal_rates(result: ForwardDecodeResult) -> dict:
    """Chain and path accuracy of a greedy decoding as :class:`onelayer.rates.Rate` (``k/n`` goals, Wilson 95%)."""
    c = goal_counts(result)
    return {"chain": rate(c["chain"], c["goals"]), "path": rate(c["path"], c["goals"])}


def _solved(counts_by_depth: dict, share: float, column: int = 1) -> bool:
    goals = sum(c[0] for c in counts_by_depth.values())
    return sum(c[column] for c in counts_by_depth.values()) >= share * goals


def theorem8_seeds(data: dict | None = None) -> dict:
    """Theorem 8 over the stored seeds (``data``: a summary dict, default :func:`limit_rates_stored`): ``rows`` by goal
    depth (goals pooled over runs, each run on its own test trees), the runs solving their paths and their chains
    (at least ``solved_at`` of their goals right), the pooled rates and the final/initial loss ratio."""
    data = limit_rates_stored() if data is None else data
    runs, m = data["theorem8"], data["settings"]["theorem8"]["m"]
    bins = [(d, d) for d in range(1, m + 2)] + [(m + 2, None)]
    rows = [{"goal depth": label, "goals": n, "path accuracy": rate_or_none(k, n), "chain accuracy": rate_or_none(kc, n),
             "seen in training": "yes" if label == str(m) else "no"}
            for (label, n, k), (_, _, kc) in zip(pooled(runs, "by_depth", bins), pooled(runs, "by_depth", bins, 2))]
    total = pooled(runs, "by_depth", [(1, None)])[0]
    chains = pooled(runs, "by_depth", [(1, None)], 2)[0]
    deeper = pooled(runs, "by_depth", [(m + 1, None)])[0]
    return {"rows": rows, "runs": len(runs),
            "paths solved": rate(sum(_solved(r["by_depth"], SETTINGS.solved_at) for r in runs), len(runs)),
            "chains solved": rate(sum(_solved(r["by_depth"], SETTINGS.solved_at, 2) for r in runs), len(runs)),
            "path": rate(total[2], total[1]), "chain": rate(chains[2], chains[1]), "deeper": rate(deeper[2], deeper[1]),
            "loss ratio": mean_interval([r["loss"][-1] / r["loss"][0] for r in runs])}


def direct_seeds(data: dict | None = None) -> list[dict]:
    """Without a chain of thought, over the stored seeds: per model the runs solving the perfect depth-``m`` trees (at
    least ``solved_at`` of their paths right), the pooled perfect-tree accuracy and the random-tree accuracy by goal
    depth."""
    data = limit_rates_stored() if data is None else data
    runs = data["direct"]
    rows = []
    for arch in dict.fromkeys(r["arch"] for r in runs):
        sub = [r for r in runs if r["arch"] == arch]
        row = {"model": sub[0]["label"], "runs": len(sub),
               "runs solving": rate(sum(r["perfect"][1] >= SETTINGS.solved_at * r["perfect"][0] for r in sub), len(sub)),
               "perfect trees": rate(sum(r["perfect"][1] for r in sub), sum(r["perfect"][0] for r in sub))}
        for label, n, k in pooled(sub, "by_depth", [(1, 1), (2, 2), (3, None)]):
            row[f"random, depth {label}"] = rate_or_none(k, n)
        rows.append(row)
    return rows


@register("trees-forward-cot", "Trees II: test paths right by goal depth over 20 seeds, the two-head model with the chain of thought and the two models trained without it")
def depth_rates(quick: bool = False):
    """Paths right on the random test trees by goal depth, pooled over the stored seeds (quick: the study's
    seconds-long version run live), with the chain of thought (:func:`theorem8_seeds`) and without it (the runs of
    :func:`direct_seeds` in the same depth bins), each with its 95% interval."""
    data = stored_study.summary(limit_rates.STUDY, quick=True) if quick else limit_rates_stored()
    t8 = theorem8_seeds(data)
    m = data["settings"]["theorem8"]["m"]
    bins = [(d, d) for d in range(1, m + 2)] + [(m + 2, None)]  # the bins of theorem8_seeds
    series = {"2 structured heads, chain of thought": [(r["goal depth"], r["path accuracy"]) for r in t8["rows"]
                                                       if r["path accuracy"] is not None]}
    for arch in dict.fromkeys(r["arch"] for r in data["direct"]):
        sub = [r for r in data["direct"] if r["arch"] == arch]
        series[f"{sub[0]['label'].split(' (')[0]}, no chain of thought"] = [
            (label, rate(k, n)) for label, n, k in pooled(sub, "by_depth", bins) if n]
    table = [{"model": name, "goal depth": d, "paths right": x.text()} for name, pts in series.items() for d, x in pts]
    fig = depth_accuracy_figure({name: [(d, x.value, x.low, x.high) for d, x in pts] for name, pts in series.items()})
    return fig, {"source": "quick live runs" if quick else Path(limit_rates.STUDY.stored).name, "table": table}


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_forward_cot.rows` of the stored 20-seed study, read
    by :func:`theorem8_seeds` and :func:`direct_seeds`."""
    data = limit_rates_stored()
    return verdicts.rows(SETTINGS, study_settings=data["settings"], theorem8=theorem8_seeds(data),
                         direct=direct_seeds(data))
