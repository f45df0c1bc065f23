"""Chapter "Variations the reviewers asked about" (``book/walks/variations.ipynb``).

Each variation changes one thing of the paper's Section 5.1 setting (``K = 6``, ``N = 97``, ``M = 1000``, zero
initialisation, ``eta = 1``, ``epsilon = 0.1``, 1000 training and 1000 test walks): a residual connection, the
``1/sqrt(d)`` logit scale, no positional vectors (with the capacity of any model without them), a parent at lag 2, a
non-circulant Markov chain (random and doubly stochastic; the seeded chain table), separate ``W_Q`` and ``W_K``, and a
linear autoregressive baseline. The experiments are :mod:`onelayer.studies.walks.variations`, :mod:`onelayer.studies.walks.chains`
and :mod:`onelayer.studies.walks.rebuttal`; this module fixes what the chapter shows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ...claims import combine, exact_class, rated
from ...formatting import near_zero_text, number_text
from ...rates import rate
from ...registry import register
from ...validation import check_choice
from ...figures import walks_variations as variation_figures
from ...studies.walks import baseline_seeds, chain_seeds, experiment, histogram_bound, no_position_bounds, rebuttal
from ...studies.walks.variations import lag as lag_study, logit_scale as logit_scale_study, no_positions, non_circulant
from ...studies.walks.variations import residual as residual_study, runs as variation_runs
from ...studies import registry
from ...studies.walks.variations import seeds as variation_seeds
from ...walks.model import WalkTransformer
from ...studies.walks.inputs import walk_model

__all__ = ["Settings", "SETTINGS", "residual", "logit_scale", "no_position", "no_position_capacity", "no_position_bound",
           "linear_rates", "lag_result",
           "lag", "lag_rows", "transition_matrix", "chain_result", "chain_first_step", "chain", "doubly_stochastic",
           "lag_table", "chain_rows", "chain_table", "chain_summary", "separate_qk_rows", "linear_baseline", "baseline_rates", "chain_explorer", "chain_explorer_default", "lag3",
           "logit_scale_speed", "seed_study", "logit_scale_seed_rates", "lag_seed_rates", "seed_rate_table",
           "seed_rate_glue", "logit_scale_verdict", "lag_verdict", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows ([ours] unless marked)."""

    #: the 1/sqrt(d) logit scale: walk parameters and GD steps of the table (quick: 5); walk parameter and steps of
    #: the reparametrisation check (quick: 3)
    logit_scale_ps: tuple[float, ...] = (0.5, 0.7)
    logit_scale_steps: int = 60
    logit_scale_quick_steps: int = 5
    equivalence_p: float = 0.7
    equivalence_steps: int = 30
    equivalence_quick_steps: int = 3
    #: walk parameters and GD steps without positional vectors (quick: 5)
    no_position_ps: tuple[float, ...] = (0.5, 0.7, 1.0)
    no_position_steps: int = 200
    no_position_quick_steps: int = 5
    #: what any model without positions can do: walks of the fitted V (fit and fresh test walks); the exact
    #: histogram-Bayes bound by dynamic programming at these walk parameters and lengths (quick: the first two lengths)
    capacity_walks: int = 20000
    bound_ps: tuple[float, ...] = (0.5, 0.7, 1.0)
    bound_Ns: tuple[int, ...] = (13, 25, 49, 97)
    #: the parent at lag 2: walk parameters (the figure shows the first), GD steps (quick: 3); a seed "selects" x_(N-2)
    #: when its test-mean attention there after step 2 is above ``lag_selected`` (the verdict over the stored seeds)
    lag_ps: tuple[float, ...] = (0.7, 0.5)
    lag_selected: float = 0.99
    lag_steps: int = 30
    lag_quick_steps: int = 3
    #: the non-circulant chains (K = 6): seeds of the random and of the doubly stochastic chain, GD steps (quick: 10)
    chain_K: int = 6
    chain_seed: int = 0
    doubly_stochastic_seed: int = 1
    chain_steps: int = 300
    chain_quick_steps: int = 10
    #: the exact first-step check of a random chain: K, N, M of the small population; the full length N
    chain_small: tuple[int, int, int] = (5, 7, 50)
    chain_N: int = 97
    #: the step size of every run ([paper], Section 5.1)
    eta: float = 1.0
    #: the seeded chain table: chains of each kind (20: the verdict is a rate over the chains, issue 22); the stored
    #: study walks-chain-seeds, which must have this many
    n_chains: int = 20
    #: separate W_Q and W_K: walk parameter and initial scales; the verdict's run length
    qk_p: float = 0.7
    qk_sigmas: tuple[float, ...] = (0.0, 0.01)
    verdict_qk_steps: int = 5
    #: the linear baseline: walk parameter, and the numbers of training walks and the seeds the verdict reads (a run
    #: counts as optimal when at least ``baseline_optimal`` of its test predictions are Bayes-optimal, [ours])
    baseline_p: float = 0.7
    verdict_baseline_ns: tuple[int, ...] = (30, 1000)
    verdict_baseline_seeds: tuple[int, ...] = tuple(range(20))
    baseline_optimal: float = 0.99
    #: the chain explorer's default (seed, Dirichlet concentration, GD steps; quick: 10)
    explore_seed: int = 0
    explore_concentration: float = 1.0
    explore_steps: int = 100
    explore_quick_steps: int = 10
    #: the lag-3 exercise: walk parameter, small population (N, M) and GD steps
    lag3_p: float = 0.7
    lag3_small: tuple[int, int] = (10, 100)
    lag3_steps: int = 5
    #: the step-size exercise: walk parameter and GD steps
    speed_p: float = 0.7
    speed_steps: int = 20


SETTINGS = Settings()


@functools.lru_cache(maxsize=1)
def _residual() -> dict:
    return residual_study.residual_check()


@register("walks-variations-residual", "Variations (table): a residual connection changes neither the output nor the GD path")
def residual(quick: bool = False):
    """Outputs, gradients and five GD steps of the literal model with and without a residual connection."""
    return None, {"table": [{"quantity": k, "value": float(v)} for k, v in _residual().items() if np.isscalar(v)]}


@functools.lru_cache(maxsize=1)
def stored_runs() -> dict:
    """The stored study ``walks-variations-runs`` (:func:`onelayer.studies.walks.variations.runs.load`), checked to
    hold the chapter's logit-scale, equivalence, no-position and chain settings."""
    s = SETTINGS
    return variation_runs.load(variation_runs.Settings(
        logit_scale_ps=s.logit_scale_ps, logit_scale_steps=s.logit_scale_steps, equivalence_p=s.equivalence_p,
        equivalence_steps=s.equivalence_steps, no_position_ps=s.no_position_ps, no_position_steps=s.no_position_steps,
        chain_K=s.chain_K, chain_seed=s.chain_seed, doubly_stochastic_seed=s.doubly_stochastic_seed,
        chain_steps=s.chain_steps))


@functools.lru_cache(maxsize=2)
def _logit_scale(quick: bool) -> tuple[dict, list[dict]]:
    s = SETTINGS
    if not quick:  # the stored runs
        return stored_runs()["equivalence"], stored_runs()["logit_scale"]
    eq = logit_scale_study.logit_scale_equivalence(s.equivalence_p, steps=s.equivalence_quick_steps)
    rows = logit_scale_study.logit_scale_table(s.logit_scale_ps, steps=s.logit_scale_quick_steps)
    return eq, rows


@register("walks-variations-logit-scale", "Variations: 1/sqrt(d) logit scale against scale 1: optimal predictions and parent attention (p = 0.5, 0.7)")
def logit_scale(quick: bool = False):
    """The logit-scale lemma checked (``equivalence``) and the ``1/sqrt(d)`` scale against scale 1 (``table``)."""
    eq, rows = _logit_scale(quick)
    table = [{k: r[k] for k in ("p", "logit_scale", "T0", "final_accuracy", "parent_attention")} for r in rows]
    steps = SETTINGS.logit_scale_quick_steps if quick else SETTINGS.logit_scale_steps
    return variation_figures.figure_logit_scale(rows), {"steps": steps, "equivalence": {k: v for k, v in eq.items() if np.isscalar(v)},
                                                 "table": table}


@register("walks-variations-no-position", "Variations (table): without positional embeddings attention stays uniform and accuracy near 1/K")
def no_position(quick: bool = False):
    """Accuracy and attention of the model trained without positional vectors, for each walk parameter (the stored
    runs; quick: trained here)."""
    steps = SETTINGS.no_position_quick_steps if quick else SETTINGS.no_position_steps
    rows = no_positions.no_position_table(SETTINGS.no_position_ps, steps=steps) if quick else stored_runs()["no_position"]
    return None, {"steps": steps, "table": rows}


@functools.lru_cache(maxsize=1)
def _no_position_bounds() -> dict:
    """The stored study ``walks-no-position-bounds``, checked to hold the chapter's ``bound_ps``, ``bound_Ns`` and
    ``capacity_walks``."""
    data, s = no_position_bounds.load(), SETTINGS
    stored = data["settings"]
    if (stored.bound_ps, stored.bound_Ns, stored.walks) != (s.bound_ps, s.bound_Ns, s.capacity_walks):
        raise ValueError(f"the stored study {no_position_bounds.STUDY.name} has bound_ps={stored.bound_ps}, "
                         f"bound_Ns={stored.bound_Ns}, walks={stored.walks}; the chapter's bound_ps, bound_Ns or "
                         f"capacity_walks differ: run `python -m onelayer study {no_position_bounds.STUDY.name}`")
    return data


def no_position_capacity() -> list[dict]:
    """What any model without positions can do (the rows of
    :func:`onelayer.studies.walks.chains.no_position_capacity_table`, from the stored study
    ``walks-no-position-bounds``)."""
    return _no_position_bounds()["capacity"]


@functools.lru_cache(maxsize=2)
def _bound_rows(quick: bool) -> list[dict]:
    if not quick:  # the stored study
        return _no_position_bounds()["bound"]
    return histogram_bound.histogram_bound_table(SETTINGS.bound_ps, SETTINGS.bound_Ns[:2])


@register("walks-variations-histogram-bound", "Variations (table): the exact best accuracy of any function of the visit histogram (no positions), K=6, N=13 to 97")
def no_position_bound(quick: bool = False):
    """:func:`onelayer.studies.walks.histogram_bound.histogram_bayes_bound` for each ``p`` of ``bound_ps`` and ``N`` of
    ``bound_Ns``, with chance ``1/K`` and the Bayes accuracy (the stored study ``walks-no-position-bounds``; quick:
    the first two lengths, computed here)."""
    return None, {"K": 6, "table": _bound_rows(quick)}


def linear_rates() -> dict[float, object]:
    """The fitted ``V`` of :func:`no_position_capacity` at ``N = 97`` as a rate per walk parameter: right on ``k`` of
    the ``capacity_walks`` fresh walks, with its Wilson interval (:class:`onelayer.rates.Rate`)."""
    n = SETTINGS.capacity_walks
    # the accuracy is an unweighted mean over n walks: k / n up to round-off
    return {r["p"]: rate(round(r["linear_N97"] * n), n) for r in no_position_capacity()}


@functools.lru_cache(maxsize=4)
def lag_result(p: float, steps: int) -> dict:
    """:func:`onelayer.studies.walks.variations.lag.lag_check` at lag 2 (cached: the figure, the rows and the verdicts share it)."""
    return lag_study.lag_check(p, steps=steps)


@register("walks-variations-lag", "Variations: a parent at lag 2 (p=0.7): closed-form V(1), attention after step 2, attention over the run")
def lag(quick: bool = False):
    """The lag-2 chain at the first walk parameter of ``lag_ps``: first-step formula and attention over the run."""
    res = lag_result(SETTINGS.lag_ps[0], SETTINGS.lag_quick_steps if quick else SETTINGS.lag_steps)
    keys = ("V1_error", "V1_scale", "population_V1_circulant_deviation", "population_V1_column_max_offsets",
            "sample_V1_circulant_deviation", "sample_V1_column_max_offsets", "closed_form_circulant", "closed_form_offsets",
            "steps", "lag_attention", "parent_attention", "optimal_fraction", "test_accuracy", "bayes")
    return variation_figures.figure_lag(res), {k: res[k] for k in keys}


def _first_optimal_step(res: dict) -> int:
    """The first recorded step from which every test prediction is optimal."""
    return int(res["steps"][np.flatnonzero(res["optimal_fraction"] < 1 - 1e-12)[-1] + 1])


def lag_rows() -> list[dict]:
    """For each walk parameter of ``lag_ps``: the first-step check, the attention after steps 1-3, when every
    prediction is optimal and the final accuracy."""
    rows = []
    for p in SETTINGS.lag_ps:
        r = lag_result(p, SETTINGS.lag_steps)
        rows.append({"p": p, **{k: r[k] for k in ("V1_error", "V1_scale", "population_V1_column_max_offsets",
                                                  "sample_V1_column_max_offsets", "closed_form_circulant",
                                                  "closed_form_offsets")},
                     "lag_attention_1_3": [float(a) for a in r["lag_attention"][1:4]],
                     "parent_attention_2": float(r["parent_attention"][2]), "T0": _first_optimal_step(r),
                     "test_accuracy_end": float(r["test_accuracy"][-1])})
    return rows


def lag_table() -> list[dict]:
    """:func:`lag_rows` for a table, one row per walk parameter: the error of the first-step formula on the
    population, the column-maximum offsets of ``V^(1)`` (population; 1000 sampled walks), the attention on ``x_{N-2}``
    after steps 1, 2, 3 and the first step from which every test prediction is optimal."""
    return [{"p": r["p"], "max |V1 - formula|": number_text(r["V1_error"]),
             "offsets (population)": " ".join(str(o) for o in r["population_V1_column_max_offsets"]),
             "offsets (1000 walks)": " ".join(str(o) for o in r["sample_V1_column_max_offsets"]),
             "on x_(N-2), steps 1-3": ", ".join(f"{a:.4f}" for a in r["lag_attention_1_3"]),
             "optimal from": r["T0"]} for r in lag_rows()]


def chain_rows(kind: str) -> list[dict]:
    """What the text reads off the run on the chain ``kind`` (:func:`chain_result`): the token and positional logit
    gaps and the parent's attention at step 2, the final attention, optimal fraction and accuracy against the Bayes
    rule, and the distance of ``V``'s direction to each candidate at the last step, as ``quantity, value`` rows."""
    r = chain_result(kind)
    rows = [("spread of the token logits, step 2", r["token_spread_step2"]),
            ("parent's positional logit minus the best other, step 2", r["position_gap_step2"]),
            ("attention on the parent, step 2", r["parent_step2"]),
            ("attention on the parent, last step", float(r["parent_attention"][-1])),
            ("share of Bayes-optimal predictions, last step", float(r["optimal_fraction"][-1])),
            ("test accuracy, last step", float(r["test_accuracy"][-1])),
            ("test accuracy of the Bayes rule", float(r["bayes_test"]))]
    rows += [(f"distance of V's direction to {name}", float(d[-1])) for name, d in r["d"].items()]
    return [{"quantity": q, "value": float(v)} for q, v in rows]


def transition_matrix(kind: str) -> np.ndarray:
    """The chapter's chain of ``kind`` ``"random"`` (Dirichlet rows) or ``"doubly stochastic"``."""
    return variation_runs.transition_matrix(SETTINGS, kind)


def chain_result(kind: str, quick: bool = False) -> dict:
    """:func:`onelayer.studies.walks.variations.non_circulant.chain_run` on :func:`transition_matrix` (the stored run;
    quick: trained here; cached)."""
    return _chain_result(kind, bool(quick))


@functools.lru_cache(maxsize=4)
def _chain_result(kind: str, quick: bool) -> dict:  # one cache entry per kind and mode, however the call is spelt
    if not quick:  # the stored runs
        return stored_runs()["chains"][check_choice("kind", kind, variation_runs.CHAINS)]
    return non_circulant.chain_run(transition_matrix(kind), steps=SETTINGS.chain_quick_steps)


def chain_first_step() -> dict:
    """The first-step formula of a random chain: exact on a small population (``B`` walks, error), then at the full
    length against ``(eta/epsilon) mu mu^T``."""
    K, N, M = SETTINGS.chain_small
    Pi_small = non_circulant.random_transition_matrix(K, seed=SETTINGS.chain_seed)
    pop = non_circulant.markov_population(Pi_small, N)
    small = walk_model(K=K, N=N, M=M)
    V1 = small.train(small.init(), pop, steps=1).params["V"].numpy()
    Pi = transition_matrix("random")
    mu = non_circulant.stationary_distribution(Pi)
    closed = non_circulant.chain_c1_value(Pi, SETTINGS.chain_N)
    eta_over_eps = SETTINGS.eta / small.config.epsilon  # the step of WalkTransformer.train's default lr = 1
    return {"K": K, "N": N, "B": pop.B, "small_error": float(np.abs(V1 - non_circulant.chain_c1_value(Pi_small, N)).max()),
            "mu": mu, "full_N": SETTINGS.chain_N, "mu_mu_error": float(np.abs(closed - eta_over_eps * np.outer(mu, mu)).max()),
            "closed_max": float(closed.max())}


def _chain_numbers(res: dict) -> dict:
    keys = ("V1_rel_error", "token_spread_step2", "position_gap_step2", "Pi", "mu", "parent_step2", "T0", "bayes_test")
    out = {k: res[k] for k in keys}
    out["final"] = {"parent_attention": float(res["parent_attention"][-1]), "optimal_fraction": float(res["optimal_fraction"][-1]),
                    "test_accuracy": float(res["test_accuracy"][-1]), **{f"d {k}": float(d[-1]) for k, d in res["d"].items()}}
    return out


@register("walks-variations-chain", "Variations: a random (non-circulant) Markov chain, K=6: Pi, final V, direction of V against the candidate targets")
def chain(quick: bool = False):
    """The random chain: ``Pi``, the final ``V`` and the direction of ``V`` against the candidate targets."""
    res = chain_result("random", quick)
    return variation_figures.figure_chain(res), _chain_numbers(res)


@register("walks-variations-doubly-stochastic", "Variations: a doubly stochastic non-circulant chain, K=6: learned like the ring walk")
def doubly_stochastic(quick: bool = False):
    """The doubly stochastic chain, drawn as :func:`chain`."""
    res = chain_result("doubly stochastic", quick)
    return variation_figures.figure_chain(res), _chain_numbers(res)


@functools.lru_cache(maxsize=1)
def chain_table() -> list[dict]:
    """``n_chains`` seeded chains of each kind (the rows of :func:`onelayer.studies.walks.chains.chain_table`), from
    the stored study ``walks-chain-seeds``, checked to hold the chapter's number of chains; cached."""
    data = chain_seeds.load()
    if data["settings"].n_chains != SETTINGS.n_chains:
        raise ValueError(f"the stored study {chain_seeds.STUDY.name} has {data['settings'].n_chains} chains per kind, "
                         f"the chapter's n_chains is {SETTINGS.n_chains}: run `python -m onelayer study "
                         f"{chain_seeds.STUDY.name}`")
    return data["rows"]


def separate_qk_rows() -> list[dict]:
    """Separate ``W_Q`` and ``W_K`` from each initial scale (:func:`onelayer.studies.walks.rebuttal.separate_qk_run`)."""
    return [{"sigma": sigma, **{k: v for k, v in rebuttal.separate_qk_run(SETTINGS.qk_p, sigma=sigma).items() if np.isscalar(v)}}
            for sigma in SETTINGS.qk_sigmas]


@functools.lru_cache(maxsize=1)
def linear_baseline() -> list[dict]:
    """The linear autoregressive baseline against the transformer (:func:`onelayer.studies.walks.rebuttal.linear_baseline_table`)."""
    return rebuttal.linear_baseline_table(SETTINGS.baseline_p)


@functools.lru_cache(maxsize=1)
def baseline_rates() -> dict:
    """The baseline over ``verdict_baseline_seeds`` (each seed its own training and test walks) at each of
    ``verdict_baseline_ns`` (the stored study ``walks-baseline-seeds``, checked to hold the chapter's settings):
    ``{n: {"linear": Rate, "transformer": Rate, "linear_ahead": Rate}}``, the seeds whose run
    is optimal (at least ``baseline_optimal`` of the test predictions Bayes-optimal) and those where the linear model
    has the larger share."""
    data = baseline_seeds.load()  # the stored study walks-baseline-seeds
    s = data["settings"]
    if (s.p, s.ns, s.seeds) != (SETTINGS.baseline_p, SETTINGS.verdict_baseline_ns, SETTINGS.verdict_baseline_seeds):
        raise ValueError(f"the stored study {baseline_seeds.STUDY.name} has p={s.p}, ns={s.ns}, seeds={s.seeds}; the "
                         f"chapter's baseline_p, verdict_baseline_ns and verdict_baseline_seeds differ: run "
                         f"`python -m onelayer study {baseline_seeds.STUDY.name}`")
    rows = data["rows"]
    out = {}
    for r in rows:
        lin, tra = r["linear_optimal_seeds"], r["transformer_optimal_seeds"]
        n = len(lin)
        out[r["n"]] = {"linear": rate(sum(x >= SETTINGS.baseline_optimal for x in lin), n),
                       "transformer": rate(sum(x >= SETTINGS.baseline_optimal for x in tra), n),
                       "linear_ahead": rate(sum(a > b for a, b in zip(lin, tra)), n)}
    return out


def chain_summary() -> list[dict]:
    """:func:`chain_table` by kind: how many chains, the rate of learned chains, the range of the stationary law's
    spread and the smallest final attention on the parent."""
    rows = chain_table()
    out = []
    for kind in ("doubly stochastic", "non-uniform"):
        mine = [r for r in rows if r["kind"] == kind]
        spread = [r["mu_spread"] for r in mine]
        attention = [r["parent_attention"] for r in mine]
        out.append({"kind": kind, "learned": rate(sum(r["learned"] for r in mine), len(mine)).text(2),
                    "mu spread": f"{near_zero_text(min(spread), 2)} to {near_zero_text(max(spread), 2)}",
                    "parent attention": f"{number_text(min(attention), 2)} to {number_text(max(attention), 2)}"})
    return out


def chain_explorer():
    """The live sliders (in a kernel): the chain's seed and Dirichlet concentration."""
    return variation_figures.chain_widget()


@register("walks-variations-chain-explorer", "Variations: the chain explorer's default state: a random chain (seed 0, Dirichlet 1), N=49, M=400, 100 GD steps")
def chain_explorer_default(quick: bool = False):
    """The chain explorer's figure at its default state, and the numbers of its run."""
    s = SETTINGS
    steps = s.explore_quick_steps if quick else s.explore_steps
    res = non_circulant.chain_explorer_run(s.explore_seed, s.explore_concentration, steps)
    fig = variation_figures.chain_explorer(s.explore_seed, s.explore_concentration, steps)
    return fig, {"seed": s.explore_seed, "concentration": s.explore_concentration, "steps": steps, **_chain_numbers(res)}


def lag3() -> dict:
    """The exercise: the lag-3 chain (first-step formula on a small population, then a short run at full size)."""
    return lag_study.lag_check(SETTINGS.lag3_p, lag=3, small=SETTINGS.lag3_small, steps=SETTINGS.lag3_steps)


def logit_scale_speed() -> float:
    """The exercise: the largest ``|V|`` difference after ``speed_steps`` between the paper's model and the
    ``1/sqrt(d)``-scaled one trained with step ``d = K + M`` on ``W`` (0 up to round-off)."""
    e = experiment.setup_experiment(SETTINGS.speed_p)
    scaled = walk_model(e.model.config.replace(logit_scale="inv_sqrt_d"))
    h_paper = e.model.train(e.model.init(), e.train, steps=SETTINGS.speed_steps, lr=1.0)
    h_scaled = scaled.train(scaled.init(), e.train, steps=SETTINGS.speed_steps, lr={"V": 1.0, "q": float(scaled.D)})
    return float((h_paper.params["V"] - h_scaled.params["V"]).abs().max())


# -- rates over seeds (the stored study walks-variations-seeds) --------------------------------------------------------

@functools.lru_cache(maxsize=1)
def seed_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.variations.seeds` (``python -m onelayer study walks-variations-seeds``)."""
    return registry.load(variation_seeds.STUDY.name)


def _steps_text(values) -> str:
    """``"median (min-max)"`` of steps, ``never`` counted separately (a ``nan`` is a run never optimal)."""
    v = np.asarray(values, dtype=float)
    done = v[np.isfinite(v)]
    if done.size == 0:
        return "never"
    text = f"{number_text(float(np.median(done)), 3)} ({number_text(float(done.min()), 3)}-{number_text(float(done.max()), 3)})"
    return text + (f", {v.size - done.size} never" if done.size < v.size else "")


def logit_scale_seed_rates(rows: list[dict] | None = None) -> list[dict]:
    """Per walk parameter of the stored logit-scale runs: ``T0`` of both scales over the seeds (median and range), the
    seeds slower with ``1/sqrt(d)`` than with scale 1 on the same sample (a run never optimal counts as slower) and
    the seeds that reach the same end state with ``1/sqrt(d)`` (every test prediction optimal and attention on the
    parent above 0.99 at the last step), each a :class:`~onelayer.rates.Rate`; the seeds that do not reach it
    (``other_seeds``) and their largest final attention on the parent (``other_parent_max``)."""
    rows = seed_study()["summary"]["logit_scale"] if rows is None else rows
    out = []
    for p in sorted({r["p"] for r in rows}):
        sub = [r for r in rows if r["p"] == p]
        one = np.array([r["T0_one"] for r in sub], dtype=float)
        scaled = np.array([r["T0_inv_sqrt_d"] for r in sub], dtype=float)
        slower = sum(not np.isfinite(b) or (np.isfinite(a) and b > a) for a, b in zip(one, scaled))
        ends = [r["optimal_inv_sqrt_d"] >= 1 - 1e-12 and r["parent_inv_sqrt_d"] > 0.99 for r in sub]  # tol: a fraction, 1 up to round-off
        others = [r for r, e in zip(sub, ends) if not e]
        out.append({"p": p, "seeds": len(sub), "T0_one": _steps_text(one), "T0_scaled": _steps_text(scaled),
                    "slower": rate(slower, len(sub)), "same_end": rate(sum(ends), len(sub)),
                    "other_seeds": [r["seed"] for r in others],
                    "other_parent_max": max((r["parent_inv_sqrt_d"] for r in others), default=float("nan"))})
    return out


def lag_seed_rates(rows: list[dict] | None = None) -> list[dict]:
    """Per walk parameter of the stored lag-2 runs: the seeds whose test-mean attention on ``x_(N-2)`` after step 2 is
    above ``lag_selected``, the seeds attending most to ``x_(N-2)`` at the end, and the seeds whose every test
    prediction is optimal at the end (:class:`~onelayer.rates.Rate`), with the lowest step-2 attention, ``T0`` and
    the lags other seeds attend to most at the end (``other_lags``)."""
    rows = seed_study()["summary"]["lag"] if rows is None else rows
    thr = SETTINGS.lag_selected
    out = []
    for p in sorted({r["p"] for r in rows}, reverse=True):
        sub = [r for r in rows if r["p"] == p]
        step2 = [r["lag_attention"][1] for r in sub]
        out.append({"p": p, "seeds": len(sub), "selected_2": rate(sum(a > thr for a in step2), len(sub)),
                    "lowest_2": min(step2), "on_lag_end": rate(sum(r["top_lag_end"] == r["lag"] for r in sub), len(sub)),
                    "optimal_end": rate(sum(r["optimal_end"] >= 1 - 1e-12 for r in sub), len(sub)),  # tol: as above
                    "other_lags": sorted({r["top_lag_end"] for r in sub if r["top_lag_end"] != r["lag"]}),
                    "T0": _steps_text([r["T0"] for r in sub])})
    return out


@register("walks-variations-seed-rates", "Variations (table): the 1/sqrt(d) logit scale and the parent at lag 2 over "
                                         "20 seeds per p, rates with 95% Wilson intervals")
def seed_rate_table(quick: bool = False):
    """The rates of :func:`logit_scale_seed_rates` and :func:`lag_seed_rates` as two tables, from the stored study
    (quick mode reads the same file)."""
    scale = [{"p": r["p"], "seeds": r["seeds"], "T0 (scale 1)": r["T0_one"], "T0 (1/sqrt(d))": r["T0_scaled"],
              "slower": r["slower"].text(), "same end state": r["same_end"].text()} for r in logit_scale_seed_rates()]
    lag_rows = [{"p": r["p"], "seeds": r["seeds"], f"x_(N-2) > {SETTINGS.lag_selected:g} at step 2": r["selected_2"].text(),
                 "on x_(N-2) at the end": r["on_lag_end"].text(), "optimal at the end": r["optimal_end"].text(),
                 "T0": r["T0"]} for r in lag_seed_rates()]
    return None, {"source": variation_seeds.STUDY.stored, "logit_scale": scale, "lag": lag_rows}


def seed_rate_glue() -> dict:
    """The numbers the prose quotes from the stored seed study: per walk parameter (tag ``05``, ``07``) the logit
    scale's ``T0`` and rates (``var_ls_*``) and the lag-2 rates (``var_lag_*``), the study's steps, the seeds at
    ``p = 0.5`` that miss the scaled end state with their largest parent attention, and where the other lag-2 seeds
    attend at the end."""
    scale = {r["p"]: r for r in logit_scale_seed_rates()}
    lag2 = {r["p"]: r for r in lag_seed_rates()}
    tags = {0.5: "05", 0.7: "07"}
    out = {f"var_ls_T0_{tags[p]}": r["T0_scaled"] for p, r in scale.items()}
    out.update({f"var_ls_{key}_{tags[p]}": r[field].text() for p, r in scale.items()
                for key, field in (("slower", "slower"), ("same", "same_end"))})
    out.update({f"var_lag_{key}_{tags[p]}": r[field].text() for p, r in lag2.items()
                for key, field in (("sel", "selected_2"), ("opt", "optimal_end"), ("end", "on_lag_end"))
                if (key, p) != ("end", 0.7)})  # the prose quotes the lag-2 end state at p = 0.5 only
    out.update(var_ls_steps=int(seed_study()["settings"]["scale_steps"]),
               var_ls_other_05=len(scale[0.5]["other_seeds"]),
               var_ls_other_parent_05=number_text(scale[0.5]["other_parent_max"], 2),
               var_lag_low_05=number_text(lag2[0.5]["lowest_2"], 3),
               var_lag_other_05=", ".join(f"x_(N-{lag})" for lag in lag2[0.5]["other_lags"]) or "none")
    return out


def logit_scale_verdict(rates: list[dict]) -> str:
    """"holds in every seed" / "holds in most seeds" (both rates' intervals above 1/2 at every ``p``) / "fails"."""
    if all(r["slower"].k == r["slower"].n and r["same_end"].k == r["same_end"].n for r in rates):
        return "holds in every seed"
    if all(r["slower"].low > 0.5 and r["same_end"].low > 0.5 for r in rates):
        return "holds in most seeds"
    return "fails in a large share of seeds"


def lag_verdict(rates: list[dict], exact: bool) -> str:
    """The lag-2 verdict: the formula's exactness and, per ``p``, whether the step-2 selection holds in every seed,
    in most (interval above 1/2), or not; "holds" where it does in most seeds at every ``p``, else "partly"."""
    if not exact:
        return "fails (the first-step formula)"
    parts, most = [], True
    for r in rates:
        sel = r["selected_2"]
        word = "every seed" if sel.k == sel.n else "most seeds" if sel.low > 0.5 else "a minority of seeds" \
            if sel.high < 0.5 else "about half of the seeds"
        most &= sel.low > 0.5 or sel.k == sel.n
        parts.append(f"{word} at p={r['p']:g}")
    return ("holds" if most else "partly") + ": formula exact; attention on x_(N-2) after step 2 in " + ", ".join(parts)


def share_text(r, what: str) -> str:
    """``what`` in every run, in none, or in ``k/n`` of the runs of the rate ``r``."""
    if r.k == r.n:
        return f"confirmed: {what} in every seed ({r.k}/{r.n})"
    if r.k == 0:
        return f"not confirmed: {what} in no seed (0/{r.n})"
    return f"partly: {what} in {r.k}/{r.n} seeds"


def verdict_rows() -> list[dict]:
    """The chapter's verdicts: the residual connection, the logit scale and the lag-2 parent (the authors'
    expectations), what any model without positions can do, the uniform stationary law, separate ``W_Q`` and ``W_K``
    from zero, and the linear baseline (reviewers' questions). Claims whose outcome can vary with the draw are rates
    over 20 chains or seeds with their Wilson intervals (the logit scale and the lag-2 parent from the stored study
    :mod:`onelayer.studies.walks.variations.seeds`); the others say "one run" (an exact identity) or "one seed"."""
    def f(x, digits=3):
        return number_text(x, digits)

    res = _residual()
    diffs = [res[k] for k in ("output_diff", "grad_V_diff", "grad_W_diff", "V_diff", "W_diff")]
    scale_rates, lag_rates = logit_scale_seed_rates(), lag_seed_rates()
    study_settings = seed_study()["settings"]
    lag2 = lag_result(SETTINGS.lag_ps[0], SETTINGS.lag_steps)
    lin, n_walks = linear_rates(), SETTINGS.capacity_walks
    chance = 1.0 / 6
    bound = {(r["p"], r["N"]): r["bound"] for r in _bound_rows(False)}
    bound_ps = SETTINGS.bound_ps
    beats = [p for p in bound_ps if lin[p].low > chance]       # some V beats chance beyond its sampling interval
    flat = [p for p in bound_ps if bound[p, 97] <= chance + 1e-12]  # tol: the bound is 1/K up to round-off
    top = max(bound[p, 97] for p in bound_ps)
    if not beats:
        nopos_verdict = "holds (no fitted V beats chance)"
    else:
        nopos_verdict = (f"false as stated for p = {', '.join(f'{p:g}' for p in beats)}: a fitted V beats chance; "
                         f"but no model of this form exceeds {f(top)} at N = 97, far below the Bayes accuracy"
                         + (f"; holds at p = {', '.join(f'{p:g}' for p in flat)}" if flat else ""))
    ch = chain_table()
    n = SETTINGS.n_chains
    ok = {k: sum(r["learned"] for r in ch if r["kind"] == k) for k in ("doubly stochastic", "non-uniform")}
    learned = {k: rate(v, n) for k, v in ok.items()}
    qk = rebuttal.separate_qk_run(SETTINGS.qk_p, sigma=0.0, steps=SETTINGS.verdict_qk_steps)
    base = baseline_rates()
    small, big = SETTINGS.verdict_baseline_ns
    n_seeds = len(SETTINGS.verdict_baseline_seeds)
    return [
        {"claim": "a residual connection changes nothing", "source": "[review]", "reading": "the literal model (autograd)",
         "settings": "K=6, N=13, M=100, p=0.7, 300 walks, 5 steps; one run (an exact identity: no seed can change it)",
         "measurement": f"largest difference of outputs, gradients, V and W after 5 steps: {f(max(diffs))}",
         "verdict": "holds exactly" if max(diffs) == 0 else "fails",  # exact: the same operations plus zeros
         "class": exact_class(bool(max(diffs) == 0)), "chapter": "variations"},
        {"claim": "1/sqrt(d) logit scaling gives the same conclusions, only more iterations", "source": "[review]",
         "reading": "the scale on the merged W (ours)",
         "settings": (f"p in {[r['p'] for r in scale_rates]}, {study_settings['scale_steps']} steps, "
                      f"{'/'.join(str(n) for n in sorted({r['seeds'] for r in scale_rates}))} seeds per p (training and "
                      f"test walks), both scales on each seed's sample"),
         "measurement": "; ".join(f"p={r['p']:g}: optimal from step {r['T0_scaled']} with 1/sqrt(d) vs {r['T0_one']} "
                                  f"with scale 1 (median (min-max)); slower than scale 1 in {r['slower'].text()}; "
                                  f"same end state (every prediction optimal, parent attention > 0.99) in "
                                  f"{r['same_end'].text()}" for r in scale_rates),
         "verdict": logit_scale_verdict(scale_rates),
         **rated({f"{k.replace('_', ' ')}, p={r['p']:g}": r[k] for r in scale_rates for k in ("slower", "same_end")}),
         "chapter": "variations"},
        {"claim": "with a parent at lag 2, the first-step V is circulant and the attention selects x_(N-2)",
         "source": "[review]", "reading": "s_i = s_(i-2) +- 1 (ours)",
         "settings": (f"p in {[r['p'] for r in lag_rates]}, K=6, N=97, M=1000, {study_settings['lag_steps']} steps, "
                      f"{'/'.join(str(n) for n in sorted({r['seeds'] for r in lag_rates}))} seeds per p (training and "
                      f"test walks); formula on the exact population of N=13"),
         "measurement": (f"closed form circulant {lag2['closed_form_circulant']}, max error on the population "
                         f"{number_text(lag2['V1_error'])}; "
                         + "; ".join(f"p={r['p']:g}: attention on x_(N-2) after step 2 above {SETTINGS.lag_selected:g} in "
                                     f"{r['selected_2'].text()} (lowest {f(r['lowest_2'])}), every prediction optimal "
                                     f"at step {study_settings['lag_steps']} in {r['optimal_end'].text()}"
                                     for r in lag_rates)),
         "verdict": lag_verdict(lag_rates, bool(lag2["closed_form_circulant"]) and lag2["V1_error"] < 1e-12),
         **rated({f"lag 2 selected, p={r['p']:g}": r["selected_2"] for r in lag_rates},
                 checks=[exact_class(bool(lag2["closed_form_circulant"]) and lag2["V1_error"] < 1e-12)]),
         "chapter": "variations"},
        {"claim": "without positions no one-layer transformer of this form beats a random guess", "source": "[review]",
         "reading": "-",
         "settings": (f"K=6, p in {[p for p in bound_ps]}: a V fitted on {n_walks} walks of length 97, right on k of "
                      f"{n_walks} fresh walks; exact best function of the histogram at N = 97 (dynamic programme)"),
         "measurement": ("; ".join(f"p={p:g}: fitted V {lin[p].text()}, bound {f(bound[p, 97])}" for p in bound_ps)
                         + f"; chance {f(chance)} (95% Wilson intervals over the fresh walks; one fitted V per p)"),
         "verdict": nopos_verdict,
         "class": combine("fails" if p in beats else "holds" for p in bound_ps),  # a fitted V above chance refutes it
         "chapter": "variations"},
        {"claim": "the mechanism needs a uniform stationary law (non-circulant chains)", "source": "[ours]",
         "reading": "-",
         "settings": (f"{n} doubly stochastic and {n} non-uniform-stationary seeded chains (chain seeds 0 to {n - 1}), "
                      f"20 steps (as in the chapter)"),
         "measurement": (f"learned (95% Wilson intervals): doubly stochastic {learned['doubly stochastic'].text()}, "
                         f"non-uniform {learned['non-uniform'].text()}"),
         "verdict": (f"supported on every chain tried ({n} of each kind)" if ok["doubly stochastic"] == n
                     and ok["non-uniform"] == 0 else
                     f"mostly supported: every doubly stochastic chain is learned, and a minority of the non-uniform "
                     f"ones ({ok['non-uniform']}/{n})" if ok["doubly stochastic"] == n and learned["non-uniform"].high < 0.5
                     else "not supported on every chain tried"),
         # learned where the stationary law is uniform, not learned where it is not
         **rated({"doubly stochastic chains learned": learned["doubly stochastic"],
                  "non-uniform chains not learned": rate(n - ok["non-uniform"], n)}),
         "chapter": "variations"},
        {"claim": "separate W_Q, W_K from zero: both gradients stay zero", "source": "[review]",
         "reading": "the literal model with separate W_Q, W_K (ours)",
         "settings": (f"K=6, N=13, M=100, 300 walks, {SETTINGS.verdict_qk_steps} steps, literal model with autograd; "
                      f"one run (an exact identity: every gradient has a zero factor)"),
         "measurement": f"max |grad W_Q| = {number_text(qk['max_grad_WQ'])}, max |grad W_K| = {number_text(qk['max_grad_WK'])}",
         "verdict": ("confirmed: the attention stays uniform" if qk["max_grad_WQ"] == 0 and qk["max_grad_WK"] == 0  # exact: 0 * x
                     else "fails"),
         "class": exact_class(bool(qk["max_grad_WQ"] == 0 and qk["max_grad_WK"] == 0)),
         "chapter": "variations"},
        {"claim": "a linear autoregressive model f = V x_(N-1) also solves the task", "source": "[review]",
         "reading": "-",
         "settings": (f"p={SETTINGS.baseline_p:g}, {small} and {big} training walks, 50 steps from zero, {n_seeds} seeds "
                      f"(training and test walks); optimal: at least {SETTINGS.baseline_optimal:g} of 1000 test "
                      f"predictions Bayes-optimal"),
         "measurement": (f"{big} walks: optimal runs, linear {base[big]['linear'].text()}, transformer "
                         f"{base[big]['transformer'].text()}; {small} walks: the linear model has the larger share of "
                         f"optimal predictions in {base[small]['linear_ahead'].text()} (95% Wilson intervals)"),
         "verdict": (share_text(base[big]["linear"], "linear model optimal")
                     + (f"; ahead of the transformer with {small} walks in most seeds"
                        if base[small]["linear_ahead"].low > 0.5 else "")),
         **rated({"linear model optimal": base[big]["linear"]}), "chapter": "variations"},
    ]
