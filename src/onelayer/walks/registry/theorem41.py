"""Recipes of the chapter ``theorem41``: Lemma D.1, the symmetric state, Figures 5 and 9, round-off escape."""

from __future__ import annotations

import numpy as np

from ...registry import register
from .. import figures, experiment, theorem41, theory
from ..settings import DETERMINISTIC_STEPS, ESCAPE_STEPS, PERTURBATIONS, SYMMETRY_STEPS
from .theorem31 import training_numbers


@register("walks-lemma-d1", "Theorem 4.1 (table): V after one step at p=1, N=97, exact population, against Lemma D.1 (three losses)")
def _lemma_d1(quick: bool):
    rows = []
    for loss in ("log", "squared", "cross_entropy"):
        exp = theorem41.deterministic_setup(6, 16, loss=loss)
        V1 = exp.model.train(exp.model.init(), exp.train, steps=1, lr=1.0).params["V"]
        rows.append({"loss": loss, "V1_min": float(V1.min()), "V1_max": float(V1.max()),
                     "lemma_d1": theory.lemma_d1_entry(6, 97, 1.0, loss, 0.1)})
    return None, {"K": 6, "N": 97, "eta": 1.0, "epsilon": 0.1, "table": rows}


@register("walks-symmetry-table", "Theorem 4.1 (table): the symmetric state under GD for three losses and four step-size schedules")
def _symmetry_table(quick: bool):
    steps = 10 if quick else SYMMETRY_STEPS
    return None, {"K": 6, "N": 97, "steps": steps, "table": theorem41.symmetry_table(steps=steps)}


def _deterministic_figure(K: int, r: int, quick: bool, title: str, recipes: dict, shown: str):
    runs = {}
    for name, kw in recipes.items():
        exp = theorem41.deterministic_setup(K, r, **kw)
        runs[name] = (exp, experiment.run(exp, steps=20 if quick else DETERMINISTIC_STEPS))
    exp, hist = runs[shown]
    numbers = training_numbers(hist, exp)
    numbers["runs"] = {name: {"test_accuracy": h["test_accuracy"], "final_V_spread": float(h.final("V").max() - h.final("V").min())}
                       for name, (e, h) in runs.items()}
    return figures.training_figure(hist, exp, title=title), numbers


#: The paper's recipe with sinusoidal positions is run with a seeded Gram error (theorem41.GRAM_ERROR) that
#: dominates their round-off, so that its escape from the symmetric state is the same on every machine.
_SIN = "1000 walks, sin positions + Gram error 1e-9"
_FIG5_RECIPES = {
    "population, exact positions": dict(train="population", positions="exact"),
    "1000 walks, exact positions": dict(train="sample", positions="exact"),
    _SIN: dict(train="sample", positions="sin", gram_error=theorem41.GRAM_ERROR),
}


@register("walks-fig5", "Theorem 4.1: p=1, K=6, N=97, exact population and positions: GD stays symmetric (paper's Figure 5)")
def _fig5(quick: bool):
    return _deterministic_figure(6, 16, quick, "p=1, exact population and exact positions: the theorem's setting",
                                 _FIG5_RECIPES, "population, exact positions")


@register("walks-fig5-sin-positions", "Theorem 4.1: p=1, K=6, N=97, 1000 walks, sinusoidal positions with a seeded "
                                     "Gram error of 1e-9 in place of round-off: the symmetry is escaped")
def _fig5_sin(quick: bool):
    return _deterministic_figure(6, 16, quick, "p=1, 1000 walks, sinusoidal positions + seeded Gram error 1e-9",
                                 {_SIN: _FIG5_RECIPES[_SIN]}, _SIN)


@register("walks-fig9", "Theorem 4.1: p=1, K=20, N=101, exact population and positions (paper's Figure 9)")
def _fig9(quick: bool):
    recipes = {"population, exact positions": _FIG5_RECIPES["population, exact positions"], _SIN: _FIG5_RECIPES[_SIN]}
    return _deterministic_figure(20, 5, quick, "K=20, N=101, p=1, exact population and positions (paper's Figure 9)",
                                 recipes, "population, exact positions")


@register("walks-roundoff-escape", "Theorem 4.1: logit spread and accuracy at p=1 when a seeded Gram error of the "
                                  "exact positions (1e-9, 1e-5) stands in for float64/float32 round-off")
def _roundoff_escape(quick: bool):
    steps = 20 if quick else ESCAPE_STEPS
    escape = theorem41.gram_error_escape(theorem41.GRAM_ERROR_SIZES, steps=steps)
    fig = figures.escape_figure(escape)
    rows = []
    for name, h in escape.items():
        summary = theorem41.escape_summary(h)
        rows.append({"run": name, "escape_step": summary["escape_step"], "final_test_accuracy": summary["test_accuracy"],
                     "final_class_mass": summary["class_mass"], "final_top_attention": summary["top_attention"]})
    return fig, {"steps": steps, "gram_errors": list(theorem41.GRAM_ERROR_SIZES), "table": rows}


@register("walks-perturbation-escape", "Theorem 4.1: escape step of the symmetric state against the size of a perturbation of q")
def _perturbation_escape(quick: bool):
    deltas, steps = (PERTURBATIONS[::2], 20) if quick else (PERTURBATIONS, ESCAPE_STEPS)
    pert = theorem41.perturbation_escape(deltas, steps=steps)
    fig = figures.perturbation_figure(pert)
    slope = float(np.polyfit(np.log10(pert["delta"]), pert["escape_step"], 1)[0])
    rows = [{"delta": float(d), "initial_spread": float(s0), "escape_step": float(s), "final_accuracy": float(a)}
            for d, s0, s, a in zip(pert["delta"], pert["initial_spread"], pert["escape_step"], pert["final_accuracy"])]
    return fig, {"steps_per_decade": -slope, "table": rows}


#: The norms of the chapter's sensitivity table (Figures 4 and 5 against ||p_i||^2).
_SENSITIVITY_NORMS = ("1", 40.0, "M/8", "M/4", "M/2", "M", "2M")


@register("walks-sensitivity", "Theorem 4.1: Figure 4's parent attention and Figure 5's escape step against ||p_i||^2, float64 and float32")
def _sensitivity(quick: bool):
    from .. import sensitivity

    if quick:  # three norms, float64 only (float32 round-off is the machine's own)
        rows = sensitivity.figure45_table(norms=("1", 40.0, "M/2"), dtypes=("float64",), steps=20, n_train=200, n_test=200)
    else:  # the chapter's two tables, float64 then float32
        rows = (sensitivity.figure45_table(norms=_SENSITIVITY_NORMS, dtypes=("float64",))
                + sensitivity.figure45_table(norms=_SENSITIVITY_NORMS, dtypes=("float32",)))
    return sensitivity.figure45_figure(rows), {"table": [{k: (str(v) if k == "norm" else v) for k, v in r.items()} for r in rows]}


@register("walks-roundoff-machine", "Theorem 4.1: logit spread at p=1 with round-off alone (sin and exact positions, float64 and float32); "
                                   "the machine's own rounding")
def _roundoff_machine(quick: bool):
    steps = 10 if quick else ESCAPE_STEPS
    escape = {}
    for dtype in ("float64", "float32"):
        for positions in ("sin", "exact"):
            e = theorem41.deterministic_setup(6, 16, train="sample", positions=positions, dtype=dtype)
            escape[f"{positions}, {dtype}"] = theorem41.escape_run(e, steps=steps)
    rows = []
    for name, h in escape.items():
        summary = theorem41.escape_summary(h)
        rows.append({"run": name, "escape_step": summary["escape_step"], "final_test_accuracy": summary["test_accuracy"],
                     "final_class_mass": summary["class_mass"], "final_top_attention": summary["top_attention"],
                     "max_logit_spread": float(np.max(h["logit_spread"]))})
    return figures.escape_figure(escape), {"steps": steps, "table": rows}
