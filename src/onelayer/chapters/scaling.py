"""Chapter "How the cost grows with the size of the problem" (``book/scaling.ipynb``).

Walks: steps to converge and seconds per step against the sequence length ``N`` and the positional dimension ``M``
(the grids of :mod:`onelayer.studies.walks.scaling` over 20 seeds, stored as the study ``walks-scaling-seeds``; the
stored 16-seed grid; and the smallest ``M`` that selects the parent at step 2). Quick mode runs small versions live. Trees: backward steps to converge against depth and labels (the population recursion of
:mod:`onelayer.studies.trees.scaling`, the stored SGD runs), the forward two-head steps and the seconds per step.

Every figure of the chapter is a registered function here; the runs several cells share are cached
(:func:`walks_study`, :func:`trees_runs`), so a table and its figure come from one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..figures import walks_scaling as walk_scaling_figures
from ..rates import rate
from ..registry import register
from ..studies.trees.scaling import (criteria as ts_criteria, fits as ts_fits, population as ts_population, rows as ts_rows,
                                     runs as ts_runs, stored as ts_stored)
from ..figures.trees_scaling import scaling_figure
from ..validation import check_bool
from ..studies.walks.scaling import critical as ws_critical, runs as ws_runs, seeds as ws_seeds, stored as ws_stored, summary as ws_summary
from ..verdicts import scaling as verdicts
from ..walks.positions import M_for

__all__ = ["Settings", "SETTINGS", "walks_study", "walks_table", "walks_reader_tables", "walks_glue", "walks_scaling", "walks_cost",
           "critical_sets", "walks_critical_m", "seed_exponents", "stored_walks_table", "half_p_table", "trees_runs",
           "failed_text", "trees_table", "trees_gaps", "trees_fits", "trees_scaling", "eta_table", "sgd_follows", "constant_steps",
           "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter runs beyond the defaults of :mod:`onelayer.studies.walks.scaling` and :mod:`onelayer.studies.trees.scaling`
    (grids, seeds and thresholds there: ``onelayer.studies.walks.scaling.runs.DEFAULTS``,
    ``onelayer.studies.trees.scaling.criteria.DEPTHS``, ...) [ours]."""

    #: data seeds (independent training samples) of the walks grids and of the critical-M sets: 20, so that the
    #: verdicts' exponents are means over 20 samples with their intervals (issue 22); the grids are the stored study
    #: walks-scaling-seeds, which must have these seeds; quick mode runs its 3 seeds live
    walks_seeds: tuple[int, ...] = tuple(range(20))
    #: the two readings of "the parent is selected at step 2" (legend labels of the critical-M figure)
    critical_labels: tuple[str, str] = ("mean parent attention >= 0.99", "median log-odds >= N/4")
    #: quick mode of the critical-M figure: sequence lengths and seeds
    critical_quick_Ns: tuple[int, ...] = (13, 25, 49)
    critical_quick_seeds: tuple[int, ...] = (0, 1)
    #: the stored walks grid shown: the two N axes (1000 and 4000 training walks) from N = 97 on
    stored_study: str = "p=0.7"
    stored_axes: tuple[str, ...] = ("N", "N_more_walks")
    stored_min_N: int = 97
    #: the exercise at p = 1/2: sequence lengths (M = ceil(N^1.5)) and seeds
    half_p: float = 0.5
    half_Ns: tuple[int, ...] = (25, 49, 97)
    half_seeds: tuple[int, ...] = (0, 1, 2)
    #: quick mode of the trees figure: (m, S) sizes of the depth and label grids; the timing's members, batch, steps
    trees_quick_depth: tuple[tuple[int, int], ...] = ((2, 7), (3, 15))
    trees_quick_labels: tuple[tuple[int, int], ...] = ((2, 7), (2, 9))
    trees_quick_timing: tuple[int, int, int] = (2, 8, 1)
    #: the exercise on the step size: population recursion at depth m, S labels, for these learning rates
    eta_m: int = 3
    eta_S: int = 15
    eta_lrs: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)


SETTINGS = Settings()

#: the chapter's tables: columns (at most six, to fit the text column) and the headers a reader sees
WALKS_GRIDS = {"N": f"N varies at M = {ws_runs.M_FIXED}", "M": f"M varies at N = {ws_runs.N_FIXED}",
               "curve": "along M = ceil(N^1.5)"}
WALKS_COLUMNS = ["N", "M", "T_parent", "T_optimal", "converged", "log_odds2"]
WALKS_HEADERS = {"T_parent": "T_parent (min-max)", "T_optimal": "T_opt (min-max)",
                 "converged": "seeds converged (parent, opt)", "log_odds2": "log-odds at step 2"}
STORED_COLUMNS = ["walks", "N", "T_parent", "parent_ok", "optimal_ok", "log_odds2"]
STORED_HEADERS = {"walks": "training walks", "T_parent": "T_parent (median)", "parent_ok": "seeds with parent selected",
                  "optimal_ok": "seeds optimal", "log_odds2": "log-odds at step 2"}
CRITICAL_COLUMNS = ["N", "criterion", "M_crit", "range", "ceil(N^1.5)", "M_crit/N^1.5"]
CRITICAL_HEADERS = {"M_crit": "M_crit (median)", "range": "min-max over seeds"}
TREES_COLUMNS = ["m", "S", "n", "population", "SGD", "converged"]
TREES_HEADERS = {"n": "nodes n", "population": "population recursion", "SGD": "SGD median (min-max)",
                 "converged": "SGD seeds converged"}


# --- walks ------------------------------------------------------------------------------------------------------

def walks_study(quick: bool = False) -> dict[str, list[dict]]:
    """The three grids (``N`` at ``M = 1000``, ``M`` at ``N = 97``, along ``M = ceil(N^1.5)``) over the
    ``walks_seeds`` of :data:`SETTINGS`, from the stored study ``walks-scaling-seeds`` (quick: three seeds, run
    here)."""
    return _walks_study(check_bool("quick", quick))  # one cache entry per mode, however it is called


@lru_cache(maxsize=2)
def _walks_study(quick: bool) -> dict[str, list[dict]]:
    return ws_runs.scaling_study(quick=True) if quick else _stored_seeds()["grids"]


@lru_cache(maxsize=1)
def _stored_seeds() -> dict:
    """The stored study ``walks-scaling-seeds`` (:func:`onelayer.studies.walks.scaling.seeds.load`), checked to hold
    the chapter's seeds."""
    data = ws_seeds.load()
    if tuple(data["seeds"]) != SETTINGS.walks_seeds:
        raise ValueError(f"the stored study {ws_seeds.STUDY.name} has seeds {data['seeds']}, the chapter's "
                         f"walks_seeds are {SETTINGS.walks_seeds}: run `python -m onelayer study {ws_seeds.STUDY.name}`")
    return data


def walks_table(quick: bool = False) -> list[dict]:
    """The rounded rows of :func:`walks_study` (one per size)."""
    return ws_summary.table(walks_study(quick))


def walks_reader_tables(quick: bool = False) -> dict[str, list[dict]]:
    """:func:`walks_table` for a reader: one table per grid (keyed by its :data:`WALKS_GRIDS` caption), the steps
    with their range over seeds in one cell and the converged seeds of both criteria in another."""
    out: dict[str, list[dict]] = {}
    for r in walks_table(quick):
        out.setdefault(WALKS_GRIDS.get(r["sweep"], r["sweep"]), []).append({
            "N": r["N"], "M": r["M"], "T_parent": f"{r['T_parent']} ({r['T_parent range']})",
            "T_optimal": f"{r['T_optimal']} ({r['T_optimal range']})",
            "converged": f"{r['T_parent ok']}, {r['T_optimal ok']}", "log_odds2": r["log_odds2"]})
    return out


def walks_glue(quick: bool = False) -> dict:
    """The numbers the prose quotes: step counts along the curve, the log-odds slopes, the smallest-``M`` row."""
    rows, fits = walks_table(quick), ws_summary.slopes(walks_study(quick))
    curve = [r for r in rows if r["sweep"] == "curve"]
    small_M = [r for r in rows if r["sweep"] == "M"][0]
    return {"w_curve_Tpar": sorted({int(r["T_parent"]) for r in curve}),
            "w_curve_Topt": sorted({int(r["T_optimal"]) for r in curve}),
            "w_curve_Nmax": max(r["N"] for r in curve),
            "w_lo_M": round(fits["log_odds2 vs M"]["slope"], 2), "w_lo_N": round(fits["log_odds2 vs N"]["slope"], 2),
            "w_smallM": small_M["M"], "w_smallM_T": int(small_M["T_parent"])}


@register("walks-scaling", "Scaling (table + figure): GD steps to converge and time per step against N (M = 1000), M (N = 97) and along M = N^1.5")
def walks_scaling(quick: bool = False):
    """Steps to converge, step-2 log-odds and seconds per step against ``N`` and ``M``, with fitted power laws."""
    study = walks_study(quick)
    return walk_scaling_figures.figure(study), {"slopes": ws_summary.slopes(study), "cost_model": ws_summary.cost_model(study),
                                        "table": ws_summary.table(study, wall=True)}


def walks_cost(quick: bool = False) -> str:
    """The fitted cost of one GD step and member (wall time: machine-dependent, shown but not compared)."""
    cost = ws_summary.cost_model(walks_study(quick))
    return (f"time per step and member ~ {cost['c_us']:.0f} us + {cost['a_ns']:.1f} ns x n N + {cost['b_ns']:.2f} ns x M N"
            f"\n(largest relative error of the fit {cost['max_rel_err']:.0%})")


def critical_sets(quick: bool = False) -> dict[str, list[dict]]:
    """The smallest ``M`` that selects the parent at step 2, per ``N``, under both readings of "selected"."""
    return _critical_sets(check_bool("quick", quick))  # one cache entry per mode, however it is called


@lru_cache(maxsize=2)
def _critical_sets(quick: bool) -> dict[str, list[dict]]:
    s = SETTINGS
    if not quick:  # the stored study, one set per criterion in the order of the labels
        stored = _stored_seeds()["critical"]
        return {label: stored[criterion] for label, criterion in zip(s.critical_labels, ws_runs.CRITICAL_CRITERIA)}
    Ns, seeds = s.critical_quick_Ns, s.critical_quick_seeds
    return {s.critical_labels[0]: ws_critical.critical_M(Ns, seeds=seeds),
            s.critical_labels[1]: ws_critical.critical_M(Ns, seeds=seeds, criterion="log_odds")}


@register("walks-scaling-critical-m", "Scaling: smallest M that selects the parent at step 2 against N (attention >= 0.99 and log-odds >= N/4)")
def walks_critical_m(quick: bool = False):
    """:func:`critical_sets` as a table, its fitted slopes (``M_crit ~ N^slope``) and the log-log figure."""
    sets = critical_sets(quick)
    rows = [row for rows in sets.values() for row in ws_summary.critical_table(rows)]
    slopes = {label: ws_summary.slopes({}, rows)[f"M_crit vs N ({rows[0]['criterion']})"] for label, rows in sets.items()}
    return walk_scaling_figures.critical_figure(sets), {"slopes": slopes, "table": rows}


def seed_exponents(quick: bool = False) -> dict[str, dict]:
    """The exponents of the verdicts fitted seed by seed (each seed its own training sample), with the mean and its
    95% t interval over seeds: step-2 log-odds against ``M`` (at ``N = 97``) and against ``N`` (at ``M = 1000``), and
    the critical ``M`` against ``N`` under both readings of "selected" (:func:`onelayer.studies.walks.scaling.summary.seed_exponents`)."""
    study = walks_study(quick)
    series = {"log_odds2 vs M": ([r["M"] for r in study["M"]], [r["log_odds2_seeds"] for r in study["M"]]),
              "log_odds2 vs N": ([r["N"] for r in study["N"]], [r["log_odds2_seeds"] for r in study["N"]])}
    for label, rows in critical_sets(quick).items():
        series[label] = ([r["N"] for r in rows], [r["M_crit_seeds"] for r in rows])
    return ws_summary.seed_exponents(series)


def stored_walks_table() -> list[dict]:
    """The stored 16-seed grid (``book/walks/data/scaling.json``): the ``N`` axes with 1000 and 4000 walks (at
    ``M = 1000``), one row per size with the number of training walks, the median step and the converged seeds."""
    s = SETTINGS
    study = ws_stored.load()["studies"][s.stored_study]
    walks = {axis: rows[0]["n_train"] for axis, rows in study.items() if rows}
    rows = ws_summary.table(study)
    return [{"walks": walks[r["sweep"]], "N": r["N"], "M": r["M"], "T_parent": r["T_parent"],
             "parent_ok": r["T_parent ok"], "optimal_ok": r["T_optimal ok"], "log_odds2": r["log_odds2"]}
            for r in rows if r["sweep"] in s.stored_axes and r["N"] >= s.stored_min_N]


def half_p_table() -> list[dict]:
    """The exercise: steps to converge along ``M = ceil(N^1.5)`` at ``p = 1/2``."""
    s = SETTINGS
    sizes = [(N, M_for(N)) for N in s.half_Ns]
    return ws_runs.measure(sizes, p=s.half_p, seeds=s.half_seeds, axis="curve")


# --- trees ------------------------------------------------------------------------------------------------------

def trees_runs(quick: bool = False) -> dict[str, list[dict]]:
    """The backward rows against depth and labels (population recursion and stored SGD runs), the forward two-head
    steps against depth (the limits chapter's study) and the seconds per step: stored (quick: run here), read once."""
    return _trees_runs(check_bool("quick", quick))  # one cache entry per mode, however it is called


@lru_cache(maxsize=2)
def _trees_runs(quick: bool) -> dict[str, list[dict]]:
    s = SETTINGS
    if quick:
        stored = ts_stored.compute()  # the study's quick members, run here
        depth = ts_rows.scaling_rows("depth", sizes=list(s.trees_quick_depth), stored=stored)
        labels = ts_rows.scaling_rows("labels", sizes=list(s.trees_quick_labels), stored=stored)
        members, batch_size, steps = s.trees_quick_timing
        times = ts_runs.step_times(list(s.trees_quick_depth), members=members, batch_size=batch_size, steps=steps)
    else:  # the stored study trees-scaling-population
        population = ts_population.load(ts_population.Settings())
        depth, labels = (ts_rows.scaling_rows(g, population=population["population"][g]) for g in ("depth", "labels"))
        times = population["times"]
    return {"depth": depth, "labels": labels, "forward": ts_rows.forward_steps_vs_depth(), "times": times}


def trees_table(quick: bool = False) -> dict[str, list[dict]]:
    """The rounded rows of the depth grid and of the labels grid (keyed by grid), the SGD median with its range over
    seeds in one cell (``-`` where no SGD runs are stored)."""
    runs = trees_runs(quick)
    out = {}
    for grid in ("depth", "labels"):
        rows = ts_rows.scaling_table(runs[grid])
        out[grid] = [{**r, "SGD": "-" if r.get("SGD median") is None
                      else f"{r['SGD median']:g} ({r['SGD min']:g}-{r['SGD max']:g})",
                      "converged": r.get("converged") or "-"} for r in rows]
    return out


@lru_cache(maxsize=1)
def trees_gaps() -> list[dict]:
    """Per depth: the largest gap of a stored SGD run's attention to the population curve, and its step (stored)."""
    return ts_population.load(ts_population.Settings())["gaps"]


def trees_fits(quick: bool = False) -> tuple[list[dict], dict]:
    """The fitted power laws (labels, depth, forward) and the numbers the prose quotes (slopes, the two-term model)."""
    runs = trees_runs(quick)
    fits = ts_fits.fit_table(runs["depth"], runs["labels"], forward_rows=runs["forward"])
    by_key = {(f["series"], f["x"]): f for f in fits}
    model_fit = ts_fits.linear_model(runs["depth"])
    glue = {"t_lab_slope": round(by_key[("labels: population", "S")]["slope"], 2),
            "t_depth_slope": round(by_key[("depth: population", "n_nodes")]["slope"], 2),
            "t_depth_sgd_slope": round(by_key[("depth: sampled median", "n_nodes")]["slope"], 2),
            "t_c1": round(model_fit["c1"], 2), "t_c0": round(model_fit["c0"], 1),
            "t_model_err": round(100 * model_fit["max_rel_error"], 1),
            "t_local": ", ".join(f"{x:.2f}" for x in ts_fits.local_slopes(runs["depth"])),
            "t_ratio_max": round(max(r["ratio"] for r in runs["depth"] + runs["labels"] if r.get("ratio") is not None), 3)}
    return fits, glue


@register("trees-scaling", "Trees: backward steps to converge against depth and labels (population and stored SGD runs), forward two-head steps, seconds per step")
def trees_scaling(quick: bool = False):
    """The four panels of the trees half: steps against labels and depth, the forward steps, the seconds per step."""
    runs = trees_runs(quick)
    fig = scaling_figure(runs["depth"], runs["labels"], runs["forward"], runs["times"])
    return fig, {"criterion": ts_criteria.Criterion().describe(),
                 "table": ts_rows.scaling_table(runs["depth"] + runs["labels"]),
                 "fits": ts_fits.fit_table(runs["depth"], runs["labels"], runs["times"], runs["forward"]),
                 "forward": runs["forward"]}


def eta_table() -> list[dict]:
    """The exercise: population steps ``T`` at depth ``eta_m``, ``eta_S`` labels for each learning rate, and ``lr T``."""
    s = SETTINGS
    rows = []
    for lr in s.eta_lrs:
        steps = ts_runs.population_steps(s.eta_m, s.eta_S, lr=lr)
        rows.append({"lr": lr, "T": steps, "lr x T": lr * steps})
    return rows


def sgd_follows(threshold: float = 0.1) -> dict:
    """The stored SGD runs of the depth grid whose attention on the correct edge stays within ``threshold`` of the
    population curve at every recorded step: a rate over runs (seeds x depths), and the largest gap of any run."""
    gaps = trees_gaps()
    per_run = [g for row in gaps for g in row["seed_max_gaps"]]
    return {"rate": rate(sum(g < threshold for g in per_run), len(per_run)), "threshold": threshold,
            "largest": max(per_run), "depths": [row["m"] for row in gaps]}


# --- verdicts ---------------------------------------------------------------------------------------------------

def constant_steps(min_N: int = 49) -> dict:
    """Theorem 3.1's verdict: along ``M = ceil(N^1.5)`` from ``N = min_N`` on, the runs (seeds x sizes) whose test
    predictions all become optimal within the step budget (a rate), the upper-median steps seen (``Ns``: the sizes),
    the steps of the runs that converged, and the runs that did not (``failed``: ``N``, seed and the lag their
    attention settled on, 1 being the parent)."""
    rows = [r for r in walks_study()["curve"] if r["N"] >= min_N]
    seeds = SETTINGS.walks_seeds
    failed = [{"N": r["N"], "seed": seed, "lag": lag} for r in rows
              for seed, T, lag in zip(seeds, r["T_optimal_seeds"], r["top_lag_seeds"]) if not np.isfinite(T)]
    ok = sum(int(r["T_optimal_converged"]) for r in rows)
    return {"rate": rate(ok, sum(int(r["seeds"]) for r in rows)), "Ns": [r["N"] for r in rows],
            "steps": sorted({int(r["T_optimal"]) for r in rows if np.isfinite(r["T_optimal"])}),
            "run_steps": sorted({int(T) for r in rows for T in r["T_optimal_seeds"] if np.isfinite(T)}),
            "failed": failed}


def failed_text(failed: list[dict]) -> str:
    """The runs of :func:`constant_steps` that never became optimal, in words (``""`` if none)."""
    lags = {1: "x_(N-1)", 2: "x_(N-2)"}
    return "; ".join(f"N={f['N']}, seed {f['seed']}: attention settles on {lags.get(f['lag'], 'lag ' + str(f['lag']))}"
                     for f in failed)


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.scaling.rows` of the stored walks grids and critical-M
    sets, the trees' population recursion and the stored SGD runs."""
    const = constant_steps()
    return verdicts.rows(SETTINGS, constant=const, failed=failed_text(const["failed"]), exponents=seed_exponents(),
                         label_sizes=[r["S"] for r in trees_runs()["labels"]],
                         label_slope=trees_fits()[1]["t_lab_slope"], follows=sgd_follows())
