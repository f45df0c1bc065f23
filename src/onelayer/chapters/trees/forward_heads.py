"""Chapter "One head or two" (``book/trees/forward_heads.ipynb``).

The authors' loss table (one head against two) beside our one-seed runs, why the structured single head stalls, and
why one full head stalls or not depending on the prompt edges' stage block: the least-squares check and the stored
20-seed study ``trees-forward-edge-flag`` (:mod:`onelayer.studies.trees.forward_edge_flag`). The one-seed runs of
the loss table are stored too (``trees-forward-limits``, :mod:`onelayer.studies.trees.forward_limits`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from ...figures.trees_forward import architecture_label, loss_table_figure, rate_heatmap_figure
from ...registry import register
from ...seeding import numpy_rng
from ...studies.registry import load
from ...studies.trees import forward_edge_flag as edge_flag, forward_limits as limits, stored_study
from ...studies.trees import forward_readings as readings
from ...studies.trees.layout_variants import EDGE_STAGES
from ...tables import interval_text
from ...trees.forward.decoding import accuracy_by_type, block_correct
from ...trees.forward.layout import perfect_forward_batch
from ...trees.forward.model import loss, single_head
from ...trees.shared import embeddings
from ...verdicts import trees_forward_heads as verdicts

__all__ = ["Settings", "SETTINGS", "stored", "loss_table", "loss_rows", "single_head_blocks", "edge_flag_stored",
           "edge_flag_minutes", "edge_flag_cells", "edge_flag_table", "value_map_check",
           "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows.

    ``S = 25``, ``m = 3`` [summary]; the 1,024 training trees the stored single head is scored on, the hard-attention
    scales and the thresholds [guess]/[ours]. The stored studies have their own settings
    (:mod:`~onelayer.studies.trees.forward_limits`, :mod:`~onelayer.studies.trees.forward_edge_flag`).
    """

    S: int = 25
    m: int = 3
    train_eval_trees: int = 1024
    train_eval_seed: int = 9
    #: the single head given head 1's construction at (lambda, mu): hard attention
    hard_at: tuple[float, float] = (20.0, 10.0)
    #: a run "converged" when its final loss is below this fraction of its initial loss [ours]; the authors' two heads
    #: end at 0.0056 of their initial loss, their single head at 0.65 [review]
    converged_below: float = 0.05
    #: a run "solves" the chains (or the paths) when at least this share of its test goals is right
    solved_at: float = 0.99


SETTINGS = Settings()


@functools.lru_cache(maxsize=1)
def stored() -> dict:
    """The stored loss-table runs (the study ``trees-forward-limits``, :mod:`onelayer.studies.trees.forward_limits`)."""
    return stored_study.summary(limits.STUDY)


@register("trees-forward-loss-table", "Trees II: training loss of two structured heads, one structured head and one full head against the authors' table")
def loss_table(quick: bool = False):
    """Our stored runs (quick: short live runs) beside the authors' table, one panel per loss normalisation."""
    runs = (stored_study.summary(limits.STUDY, quick=True) if quick else stored())["loss_table"]
    fig = loss_table_figure(runs, limits.AUTHORS_TABLE, limits.TABLE_STEPS)
    rows = limits.table_rows(runs)
    columns = list(dict.fromkeys(k for r in rows for k in r))  # the authors' rows have no test accuracy
    return fig, {"source": "quick live runs" if quick else Path(limits.STUDY.stored).name,
                 "table": [{c: r.get(c) for c in columns} for r in rows]}


def loss_rows() -> list[dict]:
    """Our runs (sum, 1) and the authors' at the table's steps: the loss, and the loss relative to step 1 (the
    authors' table starts at step 1, so every ratio of the chapter is to step 1)."""
    by = {(r["arch"], r["norm"]): dict(zip(r["steps"], r["loss"])) for r in stored()["loss_table"]}
    rows = []
    for arch in ("two_head", "full1", "single_head"):
        curve = by[(arch, "sum, 1")]
        name = f"ours: {architecture_label(arch)}"
        rows.append({"model": name, "quantity": "loss (sum, 1)", **{f"t={t}": curve[t] for t in limits.TABLE_STEPS}})
        rows.append({"model": name, "quantity": "loss / loss at t=1", **{f"t={t}": curve[t] / curve[1] for t in limits.TABLE_STEPS}})
    for name, vals in limits.AUTHORS_TABLE.items():
        rows.append({"model": name, "quantity": "loss (unit unknown)", **{f"t={t}": v for t, v in zip(limits.TABLE_STEPS, vals)}})
        rows.append({"model": name, "quantity": "loss / loss at t=1", **{f"t={t}": v / vals[0] for t, v in zip(limits.TABLE_STEPS, vals)}})
    return rows


def single_head_blocks() -> tuple[list[dict], float]:
    """The stored structured single head ("sum, 1") scored teacher-forced on ``train_eval_trees`` perfect training
    trees: accuracy of its node blocks, its stage block and the whole token by step type; and the loss of the single
    head given head 1's construction at ``hard_at`` (hard attention)."""
    s = SETTINGS
    A = embeddings.one_hot_embeddings(s.S)
    batch = perfect_forward_batch(s.m, s.S, s.train_eval_trees, numpy_rng(s.train_eval_seed))
    run = next(r for r in stored()["loss_table"] if (r["arch"], r["norm"]) == ("single_head", "sum, 1"))
    nodes_ok, stage_ok = block_correct(limits.params_from_json(run), single_head(), A, batch)
    rows = [{"block": name, **{k: round(v, 4) for k, v in accuracy_by_type(ok, batch).items()}}
            for name, ok in (("node blocks", nodes_ok), ("stage block", stage_ok), ("whole token", nodes_ok & stage_ok))]
    lam, mu = s.hard_at
    hard = {"U1": lam * torch.eye(s.S, dtype=A.dtype),
            "V1": mu * torch.tensor([[-1.0, 1.0], [0.0, -1.0]], dtype=A.dtype)}
    with torch.no_grad():
        return rows, float(loss(hard, single_head(), A, batch))


@functools.lru_cache(maxsize=1)
def edge_flag_stored() -> dict:
    """The stored one-against-two-heads study under both edge-stage readings (:mod:`onelayer.studies.trees.forward_edge_flag`)."""
    return stored_study.summary(edge_flag.STUDY)


def edge_flag_minutes() -> float:
    """Minutes of one core the stored one-against-two-heads study took: its run's wall time, or for members adopted
    from the pre-runner script, the minutes that script recorded for its two parts."""
    made = load(edge_flag.STUDY.name)["provenance"]
    if "adopted" in made:
        made = made["adopted"]["made"]
        return made["minutes"] + made["extra"]["minutes"]
    return round(made["wall_seconds"] / 60, 1)


def edge_flag_cells(runs: list[dict] | None = None, settings: dict | None = None) -> list[dict]:
    """:func:`onelayer.studies.trees.forward_readings.edge_flag_cells` of a study part (default: the stored main part)
    at the chapter's ``converged_below`` and ``solved_at``."""
    if runs is None:
        runs, settings = edge_flag_stored()["runs"], edge_flag_stored()["settings"]
    return readings.edge_flag_cells(runs, settings, converged_below=SETTINGS.converged_below, solved_at=SETTINGS.solved_at)


def _setting_label(c: dict) -> str:
    stage = "edges 0" if c["edge stage"] == "empty" else "edges s_b"
    return f"{stage}, {c['loss'].split(',')[0]}, lr {c['lr']:g}"


@register("trees-forward-edge-flag", "Trees II: one full head, two heads and the structured single head over 20 seeds, prompt edges with an empty stage block or with s_b, sum and mean loss: runs converged and test chains right")
def edge_flag_table(quick: bool = False):
    """The stored study (quick: its seconds-long version run live) as heat maps (runs converged, test chains right
    pooled over the runs) and one table of rates with 95% intervals (the numbers)."""
    if quick:
        data = stored_study.summary(edge_flag.STUDY, quick=True)
        parts = [(data["runs"], data["settings"])]
        source = "quick live runs"
    else:
        data = edge_flag_stored()
        parts = [(data["runs"], data["settings"]), (data["extra"]["runs"], data["extra"]["settings"])]
        source = Path(edge_flag.STUDY.stored).name
    cells = [c for runs, settings in parts for c in edge_flag_cells(runs, settings)]
    table = [{**{k: c[k] for k in ("edge stage", "loss", "lr", "steps", "model", "runs", "diverged")},
              **{k: c[k].text() for k in ("converged", "chains solved", "paths solved", "chain goals", "path goals")},
              "final/initial loss": interval_text(c["loss ratio"])} for c in cells]
    settings = list(dict.fromkeys(_setting_label(c) for c in cells))
    archs = [a for a in edge_flag.MODELS if any(c["arch"] == a for c in cells)]
    by = {(_setting_label(c), c["arch"]): c for c in cells}

    def grid(key, text):
        values = [[by[(s, a)][key].value if (s, a) in by else float("nan") for a in archs] for s in settings]
        texts = [[text(by[(s, a)][key]) if (s, a) in by else "" for a in archs] for s in settings]
        return values, texts

    short = {"full1": "1 F", "full2": "2 F", "two_head": "2 S", "single_head": "1 S"}
    columns = [short[a] for a in archs]
    conv, conv_t = grid("converged", lambda r: f"{r.k}/{r.n}")
    chain, chain_t = grid("chain goals", lambda r: f"{r.value:.2f}")
    fig = rate_heatmap_figure([
        {"title": "runs converged", "rows": settings, "columns": columns, "values": conv, "texts": conv_t,
         "colorbar": "share of runs", "xlabel": "heads: F full, S structured"},
        {"title": "test chains right (pooled)", "rows": settings, "columns": columns, "values": chain, "texts": chain_t,
         "colorbar": "share of goals", "xlabel": "heads: F full, S structured"}])
    return fig, {"source": source, "converged_below": SETTINGS.converged_below, "solved_at": SETTINGS.solved_at,
                 "table": table}


def value_map_check(S: int | None = None) -> list[dict]:
    """The least-squares check of :func:`onelayer.studies.trees.forward_edge_flag.value_map_residual` under both readings."""
    return [edge_flag.value_map_residual(SETTINGS.S if S is None else S, stage) for stage in EDGE_STAGES]


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_forward_heads.rows` of the stored one-against-two
    study's parts, read by :func:`edge_flag_cells`."""
    data = edge_flag_stored()
    parts = [(data["settings"], edge_flag_cells())]
    if "extra" in data:
        parts.append((data["extra"]["settings"], edge_flag_cells(data["extra"]["runs"], data["extra"]["settings"])))
    return verdicts.rows(SETTINGS, parts=parts)
