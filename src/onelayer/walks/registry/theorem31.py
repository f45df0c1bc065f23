"""Recipes of the chapter ``theorem31``: Lemma C.1, parent log-odds, Figures 4 and 8, the direction of ``V``."""

from __future__ import annotations

import numpy as np

from ...registry import register
from .. import figures, experiment, theory
from ..data import walk_population
from ..settings import DIRECTION_PS, DIRECTION_STEPS, FIG4, FIG8, LOG_ODDS_NS, LOG_ODDS_P, LOG_ODDS_WALKS, STEPS_TABLE_P, STEPS_TABLE_SIZES, STEPS_TABLE_STEPS


def training_numbers(hist, exp) -> dict:
    """Numbers behind a :func:`onelayer.walks.figures.training_figure`: steps to optimal and a per-step table."""
    optimal = np.abs(hist["conditional_accuracy"] - exp.bayes_accuracy) < experiment.OPTIMAL_TOL
    c = exp.model.config
    return {
        "K": c.K, "N": c.N, "M": c.M, "p": exp.p, "positions": c.positions,
        "bayes_accuracy": exp.bayes_accuracy,
        "bayes_test_accuracy": exp.bayes_test_accuracy,
        "steps_to_optimal": theory.steps_to_optimal(optimal),
        "final_test_accuracy": float(hist.final("test_accuracy")),
        "final_parent_attention": float(hist.final("parent_attention")),
        "final_V_spread": float(hist.final("V").max() - hist.final("V").min()),
        "table": [
            {"step": int(t), "test_accuracy": float(a), "conditional_accuracy": float(ca), "parent_attention": float(pa),
             "train_accuracy": float(ta)}
            for t, a, ca, pa, ta in zip(hist.steps, hist["test_accuracy"], hist["conditional_accuracy"],
                                        hist["parent_attention"], hist["train_accuracy"])
        ],
    }


@register("walks-lemma-c1", "Theorem 3.1 (table + V heat-maps): first GD step against the Lemma C.1 closed form, p = 0.5, 0.7")
def _lemma_c1(quick: bool):
    rows, checks = [], {}
    for p in (0.5, 0.7):
        exact = experiment.lemma_c1_check(experiment.setup_experiment(p, N=13, M=100).model, walk_population(6, p, 13), p)
        exp = experiment.setup_experiment(p)
        checks[p] = sampled = experiment.lemma_c1_check(exp.model, exp.train, p)
        for name, N, res in (("population", 13, exact), ("1000 walks", 97, sampled)):
            # what was measured on the data (V1_*) and what the population formula says (closed_form_*), apart
            rows.append({"p": p, "data": name, "N": N, "max_error": res["max_error"], "max_entry": res["max_entry"],
                         "max_abs_q1": res["max_abs_q1"], "V1_circulant": res["V1_circulant"],
                         "V1_circulant_deviation": res["V1_circulant_deviation"],
                         "V1_column_max_offsets": " ".join(str(o) for o in res["V1_column_max_offsets"]),
                         "closed_form_circulant": res["closed_form_circulant"],
                         "closed_form_max_offsets": " ".join(str(o) for o in res["closed_form_max_offsets"])})
    fig = figures.value_heatmaps({"V(1) after one step on the sample, p=0.7": checks[0.7]["V1"],
                                  "Lemma C.1 closed form, p=0.7": checks[0.7]["closed_form"]})
    return fig, {"V1_p07": checks[0.7]["V1"], "closed_form_p07": checks[0.7]["closed_form"], "table": rows}


@register("walks-parent-log-odds", "Theorem 3.1: step-2 log-odds of the parent and its attention against N (M = N^1.5 and M = 1000)")
def _parent_log_odds(quick: bool):
    Ns, n = ((13, 25, 37), 500) if quick else (LOG_ODDS_NS, LOG_ODDS_WALKS)
    odds = {"M = ceil(N^1.5)": experiment.log_odds_vs_N(LOG_ODDS_P, Ns, M_rule="power", n=n),
            "M = 1000 fixed": experiment.log_odds_vs_N(LOG_ODDS_P, Ns, M_rule="fixed", n=n)}
    fig = figures.log_odds_figure(odds)
    rows = [{"M_rule": label, "N": int(N), "M": int(M), "median_min_log_odds": float(lo), "parent_attention": float(pa)}
            for label, res in odds.items()
            for N, M, lo, pa in zip(res["N"], res["M"], res["median_min_log_odds"], res["parent_attention"])]
    return fig, {"p": LOG_ODDS_P, "K": 6, "walks": n, "table": rows}


def _success_figure(setting: dict, quick: bool, title: str):
    exp = experiment.setup_experiment(setting["p"], K=setting["K"], N=setting["N"])
    hist = experiment.run(exp, steps=5 if quick else setting["steps"])
    return figures.training_figure(hist, exp, title=title), training_numbers(hist, exp)


@register("walks-fig4", "Theorem 3.1: K=6, N=97, p=0.5, 50 GD steps: accuracy, V, attention and its zoom (paper's Figure 4)")
def _fig4(quick: bool):
    return _success_figure(FIG4, quick, "K=6, N=97, M=1000, p=0.5 (paper's Figure 4)")


@register("walks-fig8", "Theorem 3.1: K=20, N=101, p=0.5, 50 GD steps: accuracy, V, attention and its zoom (paper's Figure 8)")
def _fig8(quick: bool):
    return _success_figure(FIG8, quick, "K=20, N=101, M=1000, p=0.5 (paper's Figure 8)")


@register("walks-steps-to-optimal", "Theorem 3.1 (table): first step with Bayes-optimal test predictions for several K, N (p=0.7)")
def _steps_to_optimal(quick: bool):
    sizes, steps = (STEPS_TABLE_SIZES[:2], 5) if quick else (STEPS_TABLE_SIZES, STEPS_TABLE_STEPS)
    return None, {"p": STEPS_TABLE_P, "steps": steps, "table": experiment.steps_to_optimal_table(STEPS_TABLE_P, sizes, steps=steps)}


@register("walks-value-direction", "Theorem 3.1: direction of V against Pi^T and sqrt(Pi^T) (p = 0.5, 0.7, 0.9) and ||V|| against sqrt(t)")
def _value_direction(quick: bool):
    steps = 30 if quick else DIRECTION_STEPS
    runs = [experiment.direction_run(p, steps=steps, **({"n_records": 8} if quick else {})) for p in DIRECTION_PS]
    fig = figures.direction_figure(runs)
    rows = [{"p": r["p"], "steps": int(r["steps"][-1]), "d_Pi": float(r["d_Pi"][-1]), "d_sqrt": float(r["d_sqrt"][-1]),
             "d_empirical": float(r["d_empirical"][-1]), "sampling_floor": float(r["sampling_floor"]),
             "ratio": float(r["ratio"][-1]), "sqrt_odds": float(np.sqrt(r["p"] / (1 - r["p"]))), "odds": r["p"] / (1 - r["p"]),
             "norm_over_sqrt_2t": float(r["norm"][-1] / np.sqrt(2 * r["steps"][-1])),
             "out_Pi": float(r["out_Pi"][-1]), "out_sqrt": float(r["out_sqrt"][-1])} for r in runs]
    reduced = {f"{p:g}": float(theory.reduced_value_dynamics(p, 6, steps)[-1] / theory.reduced_value_dynamics(1 - p, 6, steps)[-1])
               for p in (0.7, 0.9)}
    mid = runs[1]  # p = 0.7: decay of the distance to the sample's own target, from the 11th record on (as the chapter)
    slope = float(np.polyfit(np.log(mid["steps"][10:]), np.log(mid["d_empirical"][10:]), 1)[0]) if len(mid["steps"]) > 12 else None
    return fig, {"reduced_dynamics_ratio": reduced, "loglog_slope_d_empirical_p07": slope, "table": rows}
