"""The walks part's figures and tables for ``python -m onelayer make NAME``.

Each recipe below is registered with :func:`onelayer.registry.register` and
makes one figure (or table) of a walks chapter with the same calls, seeds and
settings as the chapter: ``quick=True`` shrinks steps, grid sizes and sample
sizes so the whole set runs in seconds (for tests); ``quick=False``
reproduces the chapter. The recipes hold no experiment logic of their own:
they call :mod:`onelayer.walks.theorem31`, :mod:`onelayer.walks.theorem41`,
:mod:`onelayer.walks.ring`, ... and :mod:`onelayer.walks.figures`, and turn
the results into the JSON/CSV numbers of the figure.

Chapters: ``ring`` (Figure 2 of the paper, the Bayes rule), ``theorem31``
(Lemma C.1, parent log-odds, Figures 4 and 8, the direction of ``V``),
``theorem41`` (Lemma D.1, the symmetric state, Figures 5 and 9, round-off
escape), ``lab`` (the default state of the widget), ``qa`` (Figures 7 and 10),
``variations``, and the walks half of the book's ``scaling`` chapter
(:mod:`onelayer.walks.scaling`). The recipes of the later chapters import
their modules when they run, so listing the figures never depends on them.
"""

from __future__ import annotations

import functools
from pathlib import PurePath

import numpy as np

from ..registry import register
from . import figures, ring, theorem31, theorem41, theory
from .data import walk_population

__all__ = ["FIG4", "FIG8", "DIRECTION_PS", "LOG_ODDS_NS", "STEPS_TABLE_SIZES", "PERTURBATIONS", "training_numbers"]

#: Figure 4 of the paper (chapter ``theorem31``): K=6, N=97, M=1000, p=0.5, 50 GD steps from zero.
FIG4 = {"p": 0.5, "K": 6, "N": 97, "steps": 50}
#: Figure 8 of the paper: the same with K=20, N=101.
FIG8 = {"p": 0.5, "K": 20, "N": 101, "steps": 50}
#: Walk parameters of the direction-of-V runs (1000 steps in the chapter).
DIRECTION_PS = (0.5, 0.7, 0.9)
#: Sequence lengths of the parent log-odds experiment.
LOG_ODDS_NS = (13, 25, 37, 49, 61, 73, 97, 121, 145, 193)
#: (K, N) pairs of the steps-to-optimal table (p=0.7).
STEPS_TABLE_SIZES = ((5, 49), (6, 49), (6, 97), (8, 97), (10, 101), (6, 145))
#: Sizes of the deliberate perturbation of q in the escape experiment.
PERTURBATIONS = (1e-15, 1e-12, 1e-9, 1e-6, 1e-3)


def training_numbers(hist, exp) -> dict:
    """Numbers behind a :func:`onelayer.walks.figures.training_figure`: steps to optimal and a per-step table."""
    optimal = np.abs(hist["conditional_accuracy"] - exp.bayes_accuracy) < theorem31.OPTIMAL_TOL
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


# --- chapter "ring" ---------------------------------------------------------------------------------------------

@register("walks-transition-matrices", "Ring walk: transition matrices Pi for K=6 and p = 0.5, 0.7, 1 (paper's Figure 2)")
def _transition_matrices(quick: bool):
    ps = (0.5, 0.7, 1.0)
    fig = figures.transition_heatmaps(6, ps)
    return fig, {"K": 6, "p": list(ps), "Pi": {f"{p:g}": ring.transition_matrix(6, p) for p in ps}}


@register("walks-mixing", "Ring walk: max |Pi^R - limit| against R for K=5 (odd) and K=6 (even), p=0.7")
def _mixing(quick: bool):
    Ks, p, R_max = (5, 6), 0.7, 60
    fig = figures.mixing_figure(Ks, p=p, R_max=R_max)
    rows = [{"K": K, "R": R, "distance": float(d)} for K in Ks for R, d in enumerate(ring.mixing_distance(K, p, R_max))]
    moduli = {str(K): np.sort(np.abs(ring.eigenvalues(K, p)))[::-1] for K in Ks}
    return fig, {"p": p, "eigenvalue_moduli": moduli, "table": rows}


@register("walks-bayes-accuracy", "Ring walk (table): Bayes rule on simulated walks against max(p, 1-p), K=6, N=20")
def _bayes_accuracy(quick: bool):
    n = 2000 if quick else 20000
    rows = [{"p": p, "simulated": ring.simulate_bayes_accuracy(6, p, 20, n, seed=1), "max_p_1_minus_p": ring.bayes_accuracy(p)}
            for p in (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)]
    return None, {"K": 6, "N": 20, "walks": n, "seed": 1, "table": rows}


# --- chapter "theorem31" ----------------------------------------------------------------------------------------

@register("walks-lemma-c1", "Theorem 3.1 (table + V heat-maps): first GD step against the Lemma C.1 closed form, p = 0.5, 0.7")
def _lemma_c1(quick: bool):
    rows, checks = [], {}
    for p in (0.5, 0.7):
        exact = theorem31.lemma_c1_check(theorem31.setup_experiment(p, N=13, M=100).model, walk_population(6, p, 13), p)
        exp = theorem31.setup_experiment(p)
        checks[p] = sampled = theorem31.lemma_c1_check(exp.model, exp.train, p)
        for name, N, res in (("population", 13, exact), ("1000 walks", 97, sampled)):
            rows.append({"p": p, "data": name, "N": N, "max_error": res["max_error"], "max_entry": res["max_entry"],
                         "max_abs_q1": res["max_abs_q1"], "circulant": res["circulant"],
                         "max_offsets": " ".join(str(o) for o in res["max_offsets"])})
    fig = figures.value_heatmaps({"V(1) after one step on the sample, p=0.7": checks[0.7]["V1"],
                                  "Lemma C.1 closed form, p=0.7": checks[0.7]["closed_form"]})
    return fig, {"V1_p07": checks[0.7]["V1"], "closed_form_p07": checks[0.7]["closed_form"], "table": rows}


@register("walks-parent-log-odds", "Theorem 3.1: step-2 log-odds of the parent and its attention against N (M = N^1.5 and M = 1000)")
def _parent_log_odds(quick: bool):
    Ns, n = ((13, 25, 37), 500) if quick else (LOG_ODDS_NS, 8000)
    odds = {"M = ceil(N^1.5)": theorem31.log_odds_vs_N(0.7, Ns, M_rule="power", n=n),
            "M = 1000 fixed": theorem31.log_odds_vs_N(0.7, Ns, M_rule="fixed", n=n)}
    fig = figures.log_odds_figure(odds)
    rows = [{"M_rule": label, "N": int(N), "M": int(M), "median_min_log_odds": float(lo), "parent_attention": float(pa)}
            for label, res in odds.items()
            for N, M, lo, pa in zip(res["N"], res["M"], res["median_min_log_odds"], res["parent_attention"])]
    return fig, {"p": 0.7, "K": 6, "walks": n, "table": rows}


def _success_figure(setting: dict, quick: bool, title: str):
    exp = theorem31.setup_experiment(setting["p"], K=setting["K"], N=setting["N"])
    hist = theorem31.run(exp, steps=5 if quick else setting["steps"])
    return figures.training_figure(hist, exp, title=title), training_numbers(hist, exp)


@register("walks-fig4", "Theorem 3.1: K=6, N=97, p=0.5, 50 GD steps: accuracy, V, attention and its zoom (paper's Figure 4)")
def _fig4(quick: bool):
    return _success_figure(FIG4, quick, "K=6, N=97, M=1000, p=0.5 (paper's Figure 4)")


@register("walks-fig8", "Theorem 3.1: K=20, N=101, p=0.5, 50 GD steps: accuracy, V, attention and its zoom (paper's Figure 8)")
def _fig8(quick: bool):
    return _success_figure(FIG8, quick, "K=20, N=101, M=1000, p=0.5 (paper's Figure 8)")


@register("walks-steps-to-optimal", "Theorem 3.1 (table): first step with Bayes-optimal test predictions for several K, N (p=0.7)")
def _steps_to_optimal(quick: bool):
    sizes, steps = (STEPS_TABLE_SIZES[:2], 5) if quick else (STEPS_TABLE_SIZES, 20)
    return None, {"p": 0.7, "steps": steps, "table": theorem31.steps_to_optimal_table(0.7, sizes, steps=steps)}


@register("walks-value-direction", "Theorem 3.1: direction of V against Pi^T and sqrt(Pi^T) (p = 0.5, 0.7, 0.9) and ||V|| against sqrt(t)")
def _value_direction(quick: bool):
    steps = 30 if quick else 1000
    runs = [theorem31.direction_run(p, steps=steps, **({"n_records": 8} if quick else {})) for p in DIRECTION_PS]
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


# --- chapter "theorem41" ----------------------------------------------------------------------------------------

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
    steps = 10 if quick else 100
    return None, {"K": 6, "N": 97, "steps": steps, "table": theorem41.symmetry_table(steps=steps)}


def _deterministic_figure(K: int, r: int, quick: bool, title: str, recipes: dict, shown: str):
    runs = {}
    for name, kw in recipes.items():
        exp = theorem41.deterministic_setup(K, r, **kw)
        runs[name] = (exp, theorem31.run(exp, steps=20 if quick else 50))
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
    steps = 20 if quick else 40
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
    deltas, steps = (PERTURBATIONS[::2], 20) if quick else (PERTURBATIONS, 40)
    pert = theorem41.perturbation_escape(deltas, steps=steps)
    fig = figures.perturbation_figure(pert)
    slope = float(np.polyfit(np.log10(pert["delta"]), pert["escape_step"], 1)[0])
    rows = [{"delta": float(d), "initial_spread": float(s0), "escape_step": float(s), "final_accuracy": float(a)}
            for d, s0, s, a in zip(pert["delta"], pert["initial_spread"], pert["escape_step"], pert["final_accuracy"])]
    return fig, {"steps_per_decade": -slope, "table": rows}


# --- chapter "lab" ----------------------------------------------------------------------------------------------

@register("walks-lab-default", "Walks lab: the default state of the widget (p=0.7, K=6, N=25, 30 GD steps)")
def _lab_default(quick: bool):
    from . import lab

    return lab.lab_figure(), {"settings": dict(lab.DEFAULTS), "summary": lab.lab_run().summary()}


# --- chapter "qa" -----------------------------------------------------------------------------------------------

def _qa_table(runs: dict) -> list[dict]:
    return [{"run": name, "step": int(t), "test_accuracy": float(h["test_accuracy"][i]), "kl": float(h["kl"][i]),
             "fruit_attention": float(h["fruit_attention"][i])}
            for name, h in runs.items() for i, t in enumerate(h.steps)]


@register("walks-fig7", "Question answering: test accuracy and KL of the linear model on Tasks 1 and 2, sigma=0.01, eta=0.1 (paper's Figure 7)")
def _fig7(quick: bool):
    from . import qa

    steps = 5 if quick else 100
    runs = {f"Task {t}": qa.run(qa.setup_task(t), steps=steps) for t in qa.TASKS}
    fig = qa.figure_curves(runs, title="linear model, sigma=0.01, eta=0.1 (paper's Figure 7)")
    return fig, {"steps": steps, "average_gap": {f"Task {t}": qa.average_gap(t) for t in qa.TASKS}, "table": _qa_table(runs)}


@register("walks-fig10", "Question answering with a hidden ReLU layer (m=19): accuracy and KL on Tasks 1 and 2 (paper's Figure 10)")
def _fig10(quick: bool):
    from . import qa

    steps, seeds = (5, (0,)) if quick else (100, (0, 1))
    runs = {f"Task {t} (ReLU), seed {s}": qa.run(qa.setup_task(t, hidden=19, seed=s), steps=steps, seed=s)
            for s in seeds for t in qa.TASKS}
    fig = qa.figure_curves({f"Task {t} (ReLU)": runs[f"Task {t} (ReLU), seed 0"] for t in qa.TASKS},
                           title="hidden ReLU layer, m = 19 (paper's Figure 10)")
    return fig, {"steps": steps, "seeds": list(seeds), "table": _qa_table(runs)}


@register("walks-qa-normalization", "Question answering (table): final accuracy and attention on the fruits for three input normalisations")
def _qa_normalization(quick: bool):
    from . import qa

    steps = 5 if quick else 100
    rows = []
    for normalize in ("keys_and_query", "keys", "none"):
        runs = {t: qa.run(qa.setup_task(t, normalize=normalize), steps=steps, record_every=10 if steps >= 10 else 1) for t in qa.TASKS}
        rows.append({"normalize": normalize, "task1_accuracy": float(runs[1].final("test_accuracy")),
                     "task2_accuracy": float(runs[2].final("test_accuracy")),
                     "task1_fruit_attention_start": float(runs[1]["fruit_attention"][0]),
                     "task1_fruit_attention_end": float(runs[1].final("fruit_attention"))})
    return None, {"steps": steps, "table": rows}


# --- chapter "variations" ---------------------------------------------------------------------------------------

@register("walks-variations-residual", "Variations (table): a residual connection changes neither the output nor the GD path")
def _variations_residual(quick: bool):
    from . import variations

    res = variations.residual_check()
    return None, {"table": [{"quantity": k, "value": float(v)} for k, v in res.items() if np.isscalar(v)]}


@register("walks-variations-scaling", "Variations: 1/sqrt(d) logit scaling against scale 1: optimal predictions and parent attention (p = 0.5, 0.7)")
def _variations_scaling(quick: bool):
    from . import variations

    steps = 5 if quick else 60
    eq = variations.scaling_equivalence(0.7, steps=3 if quick else 30)
    rows = variations.scaling_table((0.5, 0.7), steps=steps)
    fig = variations.figure_scaling(rows)
    table = [{k: r[k] for k in ("p", "logit_scale", "T0", "final_accuracy", "parent_attention")} for r in rows]
    return fig, {"steps": steps, "equivalence": {k: v for k, v in eq.items() if np.isscalar(v)}, "table": table}


@register("walks-variations-no-position", "Variations (table): without positional embeddings attention stays uniform and accuracy near 1/K")
def _variations_no_position(quick: bool):
    from . import variations

    steps = 5 if quick else 200
    return None, {"steps": steps, "table": variations.no_position_table(steps=steps)}


@register("walks-variations-lag", "Variations: a parent at lag 2 (p=0.7): closed-form V(1), attention after step 2, attention over the run")
def _variations_lag(quick: bool):
    from . import variations

    res = variations.lag_check(0.7, steps=3 if quick else 30)
    fig = variations.figure_lag(res)
    keys = ("V1_error", "V1_scale", "V1_offsets", "circulant", "steps", "lag_attention", "parent_attention", "optimal_fraction",
            "test_accuracy", "bayes")
    return fig, {k: res[k] for k in keys}


def _chain_numbers(res: dict) -> dict:
    keys = ("V1_rel_error", "token_spread_step2", "position_gap_step2", "Pi", "mu", "parent_step2", "T0", "bayes_test")
    out = {k: res[k] for k in keys}
    out["final"] = {"parent_attention": float(res["parent_attention"][-1]), "optimal_fraction": float(res["optimal_fraction"][-1]),
                    "test_accuracy": float(res["test_accuracy"][-1]), **{f"d {k}": float(d[-1]) for k, d in res["d"].items()}}
    return out


@register("walks-variations-chain", "Variations: a random (non-circulant) Markov chain, K=6: Pi, final V, direction of V against the candidate targets")
def _variations_chain(quick: bool):
    from . import variations

    res = variations.chain_run(variations.random_transition_matrix(6, seed=0), steps=10 if quick else 300)
    return variations.figure_chain(res), _chain_numbers(res)


@register("walks-variations-doubly-stochastic", "Variations: a doubly stochastic non-circulant chain, K=6: learned like the ring walk")
def _variations_doubly_stochastic(quick: bool):
    from . import variations

    res = variations.chain_run(variations.random_doubly_stochastic(6, seed=1), steps=10 if quick else 300)
    return variations.figure_chain(res), _chain_numbers(res)


# --- chapter "random_init" --------------------------------------------------------------------------------------

#: Tiny sizes of the quick variants (those of ``python -m onelayer.walks.random_init --quick``).
RANDOM_INIT_QUICK = {"steps": 20, "record_every": 5, "N": 13, "M": 100, "n_train": 50, "n_test": 50,
                     "table_steps": (5, 10), "snapshot_steps": (10, 20)}


@functools.lru_cache(maxsize=2)
def random_init_sweep(quick: bool = False) -> dict:
    """The sweep the random-initialisation recipes select from: the stored file, or (``quick``) a tiny live sweep."""
    from . import random_init as ri

    if quick:
        return ri.sweep(normalizations=("keys_and_query",), readings=(("mean", 0.01), ("sum", 0.1)), seeds=(0,),
                        **RANDOM_INIT_QUICK)
    return ri.load()


def _rerun(run: dict, quick: bool) -> dict:
    """Run a stored setting again from scratch (the quick sweep is already live)."""
    from . import random_init as ri

    return run if quick else ri.run_config(ri.RunConfig(**run["config"]))


def _closest_reading(data: dict) -> tuple:
    """``(normalize, reduction, lr)`` whose ``p = 1`` runs have the smallest mean :func:`table_distance` over seeds."""
    from . import random_init as ri

    dist = {}
    for r in data["runs"]:
        c = r["config"]
        if c["p"] == 1.0:
            dist.setdefault((c["normalize"], c["reduction"], c["lr"]), []).append(ri.table_distance(r))
    score = {k: (np.mean(d) if np.all(np.isfinite(d)) else np.inf) for k, d in dist.items()}
    return min(score, key=score.get)


@register("walks-fig6", "Random init (sigma=0.01, eta=0.01, keys and query normalised): optimal predictions, KL and attention, p = 0.5 and 1 (paper's Figure 6)")
def _fig6(quick: bool):
    from . import random_init as ri

    sizes = RANDOM_INIT_QUICK if quick else {}
    runs = {f"p = {p:g}": ri.run_config(ri.RunConfig(p=p), **sizes) for p in (0.5, 1.0)}
    fig = ri.figure_curves(runs, title="keys and query normalised, mean loss, eta = 0.01 (the paper's numbers)")
    rows = [{"run": name, "step": int(t), **{k: r["curves"][k][i] for k in ri.RECORD_KEYS}}
            for name, r in runs.items() for i, t in enumerate(r["steps"])]
    return fig, {"setting": dict(ri.PAPER), "table": rows}


@register("walks-random-init-ordering", "Random init: which of p = 0.5 and p = 1 is learned first, for every normalisation, loss reduction, step size and seed")
def _random_init_ordering(quick: bool):
    from . import random_init as ri

    data = random_init_sweep(quick)
    rows = ri.ordering_table(data)
    return ri.figure_ordering(rows), {"source": "quick live sweep" if quick else PurePath(ri.STORED).name,
                                      "paper_pattern_count": sum(r["paper_pattern"] for r in rows), "table": rows}


@register("walks-fig11", "Random init, p=0.5: V over training and the final attention of the run that attends most to the parent (paper's Figure 11)")
def _fig11(quick: bool):
    from . import random_init as ri

    data = random_init_sweep(quick)
    half = [r for r in data["runs"] if r["config"]["p"] == 0.5]
    learned = [r for r in half if r["curves"]["optimal_fraction"][-1] >= 0.95] or half
    run = _rerun(max(learned, key=lambda r: r["curves"]["parent_attention"][-1]), quick)
    return ri.figure_value_snapshots(run), {"config": run["config"], "final": {k: v[-1] for k, v in run["curves"].items()},
                                            "profile": run["profile"]}


def _closest_run(quick: bool) -> dict:
    from . import random_init as ri

    data = random_init_sweep(quick)
    normalize, reduction, lr = _closest_reading(data)
    return _rerun(ri.find_run(data, p=1.0, normalize=normalize, reduction=reduction, lr=lr, seed=0), quick)


@register("walks-fig12", "Random init, p=1: V at steps 100, 400, 700, 1000 under the reading closest to the authors' table (paper's Figure 12)")
def _fig12(quick: bool):
    from . import random_init as ri

    run = _closest_run(quick)
    return ri.figure_value_snapshots(run), {"config": run["config"], "V": run["V"]}


@register("walks-fig13", "Random init, p=1: weighted average token X S of one sequence with its variance, ours against the authors' table (paper's Figure 13)")
def _fig13(quick: bool):
    from . import random_init as ri

    run = _closest_run(quick)
    rows = []
    for step, entry in sorted(run["table"].items(), key=lambda kv: int(kv[0])):
        authors = ri.AUTHORS_TABLE.get(int(step))
        for k, (ex, var) in enumerate(zip(entry["example"], entry["variance"])):
            rows.append({"step": int(step), "coordinate": k + 1, "example": ex, "variance": var,
                         "authors_example": authors[0][k] if authors else None,
                         "authors_variance": authors[1][k] if authors else None})
    return ri.figure_weighted_token(run), {"config": run["config"], "table_distance": ri.table_distance(run), "table": rows}


@register("walks-fig6-closest-reading", "Random init: Figure 6 under the reading closest to the authors' table and with a 3x larger step (seed 0)")
def _fig6_closest(quick: bool):
    from . import random_init as ri

    data = random_init_sweep(quick)
    normalize, reduction, lr = _closest_reading(data)
    readings = [(reduction, lr)] + ([] if quick else [("mean", 3.0)])
    runs = {f"p = {p:g}, {red}, lr={step:g}": _rerun(ri.find_run(data, p=p, normalize=normalize, reduction=red, lr=step), quick)
            for p in (0.5, 1.0) for red, step in readings}
    fig = ri.figure_curves(runs, title=f"Figure 6 under the closest reading and with a 3x larger step ({normalize}, seed 0)")
    return fig, {"closest_reading": {"normalize": normalize, "reduction": reduction, "lr": lr},
                 "final": {name: {k: v[-1] for k, v in r["curves"].items()} for name, r in runs.items()}}


@register("walks-scaling", "Scaling (table + figure): GD steps to converge and time per step against N (M = 1000), M (N = 97) and along M = N^1.5")
def _scaling(quick: bool):
    from . import scaling

    study = scaling.scaling_study(quick=quick)
    return scaling.figure(study), {"slopes": scaling.slopes(study), "cost_model": scaling.cost_model(study),
                                   "table": scaling.table(study, wall=True)}


@register("walks-scaling-critical-m", "Scaling: smallest M that selects the parent at step 2 against N (attention >= 0.99 and log-odds >= N/4)")
def _scaling_critical_m(quick: bool):
    from . import scaling

    Ns, seeds = ((13, 25, 49), (0, 1)) if quick else (scaling.CRITICAL_N, scaling.DEFAULTS["seeds"])
    sets = {"mean parent attention >= 0.99": scaling.critical_M(Ns, seeds=seeds),
            "median log-odds >= N/4": scaling.critical_M(Ns, seeds=seeds, criterion="log_odds")}
    rows = [row for rows in sets.values() for row in scaling.critical_table(rows)]
    slopes = {label: scaling.slopes({}, rows)[f"M_crit vs N ({rows[0]['criterion']})"] for label, rows in sets.items()}
    return scaling.critical_figure(sets), {"slopes": slopes, "table": rows}
