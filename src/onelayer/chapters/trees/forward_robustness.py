"""Chapter "Robustness" (``book/trees/forward_robustness.ipynb``), the appendix of Trees II.

How far the forward results carry: 1-4 full heads against the training depth (the stored heads x depth study over
three seeds, :mod:`onelayer.studies.trees.forward_limits` and :mod:`~onelayer.studies.trees.forward_seeds`, and 1-4
full heads over 20 seeds at depths 2 and 3, part ``heads`` of :mod:`~onelayer.studies.trees.forward_limit_rates`),
two other token layouts (:mod:`~onelayer.studies.trees.forward_alternative_layouts`, and the runs without a turning
token over 20 seeds), and the runs past the theorems' assumptions (one live run, and 20 Gaussian embedding draws,
:mod:`~onelayer.studies.trees.forward_beyond`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ...figures.trees_forward import heads_depth_figure, rate_heatmap_figure, seeds_figure
from ...rates import Rate, rate
from ...registry import register
from ...studies.trees import beyond, forward_beyond, stored_study
from ...studies.trees import (forward_alternative_layouts as alternative_layouts, forward_edge_flag as edge_flag,
                              forward_limit_rates as limit_rates, forward_limits as limits, forward_readings as readings,
                              forward_seeds as seeds)
from ...verdicts import trees_forward_robustness as verdicts

__all__ = ["Settings", "SETTINGS", "stored", "heads_depth", "over_seeds", "merged_offsets", "heads_runs", "pooled_rate", "heads_bins",
           "limit_rates_stored", "heads_seeds", "heads_where", "heads_regions", "heads_joint", "heads_runs_below",
           "heads_rates", "heads_joint_map", "construction_layouts", "layout_tables", "layout_sensitivity", "no_turn_seeds",
           "beyond_runs", "gaussian_stored", "gaussian_seeds", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows: the thresholds and bins it reads the stored studies with [ours], and the one live run
    past the assumptions (S = 80, m = 2, 1,000 steps at lr 8, batch 64, one seed, 20 test trees of each shape [guess])."""

    #: a run "converged" when its final loss is below this fraction of its initial loss
    converged_below: float = 0.05
    #: a run "solves" its test paths when at least this share of them is right
    solved_at: float = 0.99
    #: the 20-seed full-heads study's joint profile: lower edges of the tree-size bins (node counts); goal depths are
    #: merged within a size bin until every (size, depth) bin holds at least ``min_bin_goals`` goals pooled over seeds
    heads_size_edges: tuple[int, ...] = (2, 5, 8, 12, 16, 21, 26)
    min_bin_goals: int = 100
    #: every other depth bin the chapter shows holds at least this many goals (neighbours merged)
    min_shown_goals: int = 50
    beyond_S: int = 80
    beyond_m: int = 2
    beyond_steps: int = 1000
    beyond_lr: float = 8.0
    beyond_batch: int = 64
    beyond_seeds: tuple[int, ...] = (0,)
    beyond_count: int = 20
    beyond_kinds: tuple[str, ...] = ("one_hot",)


SETTINGS = Settings()


@functools.lru_cache(maxsize=1)
def stored() -> dict:
    """The stored heads x depth runs (the study ``trees-forward-limits``)."""
    return stored_study.summary(limits.STUDY)


@register("trees-heads-depth", "Trees II: steps to converge and test whole-path accuracy of 1-4 full heads and two structured heads against training depth")
def heads_depth(quick: bool = False):
    """Steps to converge and test accuracy of the stored heads x depth runs (quick: short live runs)."""
    runs = stored_study.summary(limits.STUDY, quick=quick)["heads_depth"] if quick else stored()["heads_depth"]
    keys = ("label", "m", "S", "budget", "steps_to_converge", "final_step", "train_path_accuracy", "test_path_accuracy")
    return heads_depth_figure(runs), {"source": "quick live runs" if quick else Path(limits.STUDY.stored).name,
                                      "table": [{k: r[k] for k in keys} for r in runs]}


def merged_offsets(offsets: dict[int, tuple[int, float]], min_goals: int | None = None) -> dict[int, tuple[int, float]]:
    """``offset -> (goals, accuracy)`` with neighbouring offsets merged until each holds at least ``min_goals`` (default
    ``min_shown_goals``) goals; a merged bin is keyed by its lowest offset."""
    min_goals = SETTINGS.min_shown_goals if min_goals is None else min_goals
    out = {}
    for lo, hi in readings.merge_bins({k: n for k, (n, _) in offsets.items()}, min_goals):
        n = sum(offsets[k][0] for k in offsets if lo <= k <= hi)
        hits = sum(offsets[k][0] * offsets[k][1] for k in offsets if lo <= k <= hi)
        out[lo] = (n, hits / n)
    return out


@register("trees-forward-seeds", "Trees II: test whole-path accuracy of every seed of the heads x depth sweep, and accuracy against goal depth minus training depth")
def over_seeds(quick: bool = False):
    """Every seed of the heads x depth runs (seed 0 from the limits study, seeds 1 and 2 from their own stored study), and
    the accuracy against goal depth minus training depth (quick: seed 1 of short live runs)."""
    if quick:
        seed0, seeded = stored_study.summary(limits.STUDY, quick=True), stored_study.summary(seeds.STUDY, quick=True)
    else:
        seed0, seeded = stored(), stored_study.summary(seeds.STUDY)
    runs = seeds.all_seeds(seed0, seeded)
    cells = seeds.stored_cells(runs)
    offsets = {c["arch"]: merged_offsets(seeds.depth_offset_profile(runs, c["arch"])) for c in cells}
    keys = ("arch", "m", "seeds", "converged", "steps_median", "acc_median")
    table = [{**{k: c[k] for k in keys}, "acc_min": c["acc_range"][0], "acc_max": c["acc_range"][1]} for c in cells]
    return seeds_figure(cells, offsets), {
        "source": "quick live runs" if quick else f"{Path(limits.STUDY.stored).name} (seed 0) + {Path(seeds.STUDY.stored).name}",
        "table": table, "by_depth_offset": {a: {str(k): v for k, v in o.items()} for a, o in offsets.items()}}


def heads_runs() -> list[dict]:
    """Every run of the stored heads x depth runs, seeds 0-2 (:func:`onelayer.studies.trees.forward_seeds.all_seeds`)."""
    return seeds.all_seeds(stored(), stored_study.summary(seeds.STUDY))


def pooled_rate(rates) -> Rate:
    """The rates ``rates`` (``None`` skipped) pooled into one: summed counts over summed totals."""
    rs = [r for r in rates if r is not None]
    return rate(sum(r.k for r in rs), sum(r.n for r in rs))


def heads_bins(runs: list[dict] | None = None) -> dict:
    """:func:`onelayer.studies.trees.forward_readings.heads_bins` of :func:`heads_runs` (three seeds per cell)."""
    return readings.heads_bins(heads_runs() if runs is None else runs, solved_at=SETTINGS.solved_at)


@functools.lru_cache(maxsize=1)
def limit_rates_stored() -> dict:
    """The stored 20-seed study of :mod:`onelayer.studies.trees.forward_limit_rates` (its summary)."""
    return stored_study.summary(limit_rates.STUDY)


def heads_seeds(data: dict | None = None) -> list[dict]:
    """:func:`onelayer.studies.trees.forward_readings.heads_seeds` of the stored study (or ``data``) at ``solved_at``."""
    return readings.heads_seeds(limit_rates_stored() if data is None else data, solved_at=SETTINGS.solved_at)


def heads_where(m: int, data: dict | None = None) -> tuple[int, int, int]:
    """:func:`onelayer.studies.trees.forward_readings.heads_where`: the cell at depth ``m`` with the most failing runs."""
    return readings.heads_where(limit_rates_stored() if data is None else data, m, solved_at=SETTINGS.solved_at)


def heads_regions(cell: tuple[int, int, int], data: dict | None = None) -> list[dict]:
    """:func:`onelayer.studies.trees.forward_readings.heads_regions` of one stored cell."""
    return readings.heads_regions(limit_rates_stored() if data is None else data, cell, solved_at=SETTINGS.solved_at)


def heads_joint(cell: tuple[int, int, int], data: dict | None = None) -> dict:
    """:func:`onelayer.studies.trees.forward_readings.heads_joint` of one stored cell with the chapter's bins."""
    return readings.heads_joint(limit_rates_stored() if data is None else data, cell,
                                size_edges=SETTINGS.heads_size_edges, min_bin_goals=SETTINGS.min_bin_goals)


def heads_runs_below(cell: tuple[int, int, int], archs, sizes: tuple[int, int], depths: tuple[int, int] = (1, 99),
                     data: dict | None = None):
    """:func:`onelayer.studies.trees.forward_readings.heads_runs_below` in one stored cell."""
    return readings.heads_runs_below(limit_rates_stored() if data is None else data, cell, archs, sizes, depths,
                                     solved_at=SETTINGS.solved_at)


def _heads_data(quick: bool) -> dict:
    return stored_study.summary(limit_rates.STUDY, quick=True) if quick else limit_rates_stored()


@register("trees-forward-heads-rates", "Trees II: 1-4 full heads over 20 seeds at training depths 2 and 3: runs below 99% on their random test trees and test paths right, per setting")
def heads_rates(quick: bool = False):
    """Heat maps of :func:`heads_seeds` (quick: the study's seconds-long version run live); the rows are the numbers."""
    hs = heads_seeds(_heads_data(quick))
    settings = list(dict.fromkeys((r["m"], r["batch"], r["steps"]) for r in hs))
    models = list(dict.fromkeys(r["model"] for r in hs))
    by = {(r["m"], r["batch"], r["steps"], r["model"]): r for r in hs}
    rows = [f"m = {c[0]}, {verdicts.setting_text(c)}" for c in settings]
    columns = [m.split(" ")[0] for m in models]  # "1 full head" -> "1", "2-4 full heads" -> "2-4"
    below = [[by[(*c, m)]["below 99% on test"] for m in models] for c in settings]
    paths = [[by[(*c, m)]["paths right"] for m in models] for c in settings]
    fig = rate_heatmap_figure([
        {"title": "runs below 99% on test (of 20; 60 for 2-4)", "rows": rows, "columns": columns,
         "colorbar": "share of runs", "xlabel": "full heads",
         "values": [[r.value for r in line] for line in below], "texts": [[f"{r.k}" for r in line] for line in below]},
        {"title": "test paths right (pooled)", "rows": rows, "columns": columns, "colorbar": "share of goals",
         "xlabel": "full heads", "vmin": 0.5, "values": [[r.value for r in line] for line in paths],
         "texts": [[f"{r.value:.2f}" for r in line] for line in paths]}], width=6.0)
    return fig, {"source": "quick live runs" if quick else Path(limit_rates.STUDY.stored).name,
                 "table": [{k: (v.text() if hasattr(v, "text") else v) for k, v in r.items()} for r in hs]}


@register("trees-forward-heads-joint", "Trees II: 1-4 full heads over 20 seeds: test paths right by tree size and goal depth together, in the setting with the most failing runs at each training depth")
def heads_joint_map(quick: bool = False):
    """Heat maps of :func:`heads_joint` at each training depth's :func:`heads_where` cell (quick: live short runs); the
    numbers hold the joint rows (``table``) and the same cells' :func:`heads_regions` (``regions``)."""
    data = _heads_data(quick)
    panels, table, regions = [], [], []
    for m in dict.fromkeys(c[0] for c in readings.heads_settings(data)):
        cell = heads_where(m, data)
        regions += [{"m": m, **{k: (v.text() if hasattr(v, "text") else v) for k, v in r.items()}}
                    for r in heads_regions(cell, data)]
        joint = heads_joint(cell, data)
        models = joint["models"]
        panels.append({"title": f"m = {m} ({verdicts.setting_text(cell)})", "columns": [x.split(" ")[0] for x in models],
                       "xlabel": "full heads",
                       "rows": [f"{r['tree size']} nodes, depth {r['goal depth']}" for r in joint["rows"]],
                       "values": [[float("nan") if r[x] is None else r[x].value for x in models] for r in joint["rows"]],
                       "vmin": 0.5, "colorbar": "test paths right (pooled)"})
        table += [{"m": m, "batch": cell[1], "steps": cell[2], **{k: (v.text() if hasattr(v, "text") else v)
                                                                  for k, v in r.items()}} for r in joint["rows"]]
    return rate_heatmap_figure(panels, width=5.0), {
        "source": "quick live runs" if quick else Path(limit_rates.STUDY.stored).name, "table": table, "regions": regions}


def construction_layouts() -> list[dict]:
    """The constructions decoded in the R-F layout and without a turning token
    (:func:`onelayer.studies.trees.forward_alternative_layouts.construction_check`)."""
    return alternative_layouts.construction_check()


def layout_tables(quick: bool = False) -> tuple[list[dict], list[dict]]:
    """Every model with and without the turning token: the single-head comparison and the heads x depth protocol,
    one row per (R-F, no turning token) pair."""
    data = stored_study.summary(alternative_layouts.STUDY, quick=quick)
    return alternative_layouts.comparison_rows(data["table"]), alternative_layouts.comparison_rows(data["cells"])


@register("trees-forward-layouts", "Trees II (table): every forward model with and without the turning token (alternative layout), and the child-first check")
def layout_sensitivity(quick: bool = False):
    """The stored layout runs (quick: short live runs): :func:`layout_tables` in one table, and the child-first check."""
    single, cells = layout_tables(quick)
    return None, {"source": "quick live runs" if quick else Path(alternative_layouts.STUDY.stored).name,
                  "table": single + cells,
                  "child_first": stored_study.summary(alternative_layouts.STUDY, quick=quick).get("child_first")}


def no_turn_seeds(data: dict | None = None, with_turn: list[dict] | None = None) -> list[dict]:
    """One full head and the two-head model with the turning token (the stored one-against-two study's empty-stage,
    sum-loss cells) and without it (the stored 20-seed study): edge-flag cells
    (:func:`onelayer.studies.trees.forward_readings.edge_flag_cells`) with a ``turning`` key."""
    data = limit_rates_stored() if data is None else data
    s = data["settings"]["no_turn"]
    archs = s["models"]
    if with_turn is None:
        with_turn = [r for r in stored_study.summary(edge_flag.STUDY)["runs"]
                     if (r["edge_stage"], r["reduction"]) == ("empty", s["reduction"])]
    rows = []
    for turning, runs in (("yes", with_turn), ("no", data["no_turn"])):
        for c in readings.edge_flag_cells([r for r in runs if r["arch"] in archs], s,
                                          converged_below=SETTINGS.converged_below, solved_at=SETTINGS.solved_at):
            rows.append({**c, "turning": turning})
    return sorted(rows, key=lambda c: (archs.index(c["arch"]), c["turning"] == "no"))


@functools.lru_cache(maxsize=1)
def beyond_runs() -> list[dict]:
    """The two-head model past the theorems' assumptions (:func:`onelayer.studies.trees.beyond.forward_beyond`), one list of
    runs over ``beyond_kinds`` of embeddings."""
    s = SETTINGS
    return [r for kind in s.beyond_kinds
            for r in beyond.forward_beyond(kind, S=s.beyond_S, m=s.beyond_m, steps=s.beyond_steps, lr=s.beyond_lr,
                                           seeds=s.beyond_seeds, count=s.beyond_count, batch_size=s.beyond_batch)]


@functools.lru_cache(maxsize=1)
def gaussian_stored() -> dict:
    """The stored 20-draw study :mod:`onelayer.studies.trees.forward_beyond` (its summary)."""
    return forward_beyond.stored()


def gaussian_seeds(data: dict | None = None) -> dict:
    """:func:`onelayer.studies.trees.forward_readings.gaussian_rates` of the stored draws at ``solved_at``."""
    return readings.gaussian_rates(gaussian_stored() if data is None else data, solved_at=SETTINGS.solved_at)


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_forward_robustness.rows` of the stored 20-seed study,
    its runs without a turning token (:func:`no_turn_seeds`) and the Gaussian-embedding draws (:func:`gaussian_seeds`)."""
    data = limit_rates_stored()
    return verdicts.rows(SETTINGS, limit_rates=data, no_turn=no_turn_seeds(data), gaussian=gaussian_seeds(),
                         gaussian_study=gaussian_stored())
