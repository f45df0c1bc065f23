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

from ...formatting import near_zero_text, number_text
from ...registry import register
from ...validation import check_choice
from ...figures import walks_variations as variation_figures
from ...studies.walks import baseline_seeds, chain_seeds, histogram_bound, no_position_bounds, rebuttal
from ...studies.walks.variations import lag as lag_study, logit_scale as logit_scale_study, no_positions, non_circulant
from ...studies.walks.variations import readings, residual as residual_study, runs as variation_runs
from ...studies import registry
from ...studies.walks.variations import seeds as variation_seeds
from ...verdicts import walks_variations as verdicts

__all__ = ["Settings", "SETTINGS", "residual", "logit_scale", "no_position", "no_position_capacity", "no_position_bound",
           "linear_rates", "lag_result",
           "lag", "lag_rows", "transition_matrix", "chain_result", "chain_first_step", "chain", "doubly_stochastic",
           "lag_table", "chain_rows", "chain_table", "chain_summary", "separate_qk_rows", "linear_baseline", "baseline_rates", "chain_explorer", "chain_explorer_default", "lag3",
           "logit_scale_speed", "seed_study", "logit_scale_seed_rates", "lag_seed_rates", "seed_rate_table",
           "seed_rate_glue", "verdict_rows"]


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
    fields = variation_runs.Settings.__dataclass_fields__
    return variation_runs.load(variation_runs.Settings(**{k: getattr(SETTINGS, k) for k in fields}))


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
    readings.check_stored(no_position_bounds.STUDY, data["settings"], {"bound_ps": s.bound_ps, "bound_Ns": s.bound_Ns,
                          "walks": s.capacity_walks}, "bound_ps, bound_Ns or capacity_walks")
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
    """The fitted ``V`` of :func:`no_position_capacity` at ``N = 97`` as a rate per walk parameter over the
    ``capacity_walks`` fresh walks (:func:`onelayer.studies.walks.variations.readings.linear_rates`)."""
    return readings.linear_rates(no_position_capacity(), SETTINGS.capacity_walks)


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


def lag_rows() -> list[dict]:
    """:func:`onelayer.studies.walks.variations.readings.lag_row` of the run at each walk parameter of ``lag_ps``."""
    return [readings.lag_row(p, lag_result(p, SETTINGS.lag_steps)) for p in SETTINGS.lag_ps]


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
    """:func:`onelayer.studies.walks.variations.readings.chain_rows` of the run on the chain ``kind``."""
    return readings.chain_rows(chain_result(kind))


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
    """:func:`onelayer.studies.walks.variations.non_circulant.chain_first_step` of the chapter's random chain."""
    s = SETTINGS
    return non_circulant.chain_first_step(transition_matrix("random"), small=s.chain_small, seed=s.chain_seed,
                                          N=s.chain_N, eta=s.eta)


@register("walks-variations-chain", "Variations: a random (non-circulant) Markov chain, K=6: Pi, final V, direction of V against the candidate targets")
def chain(quick: bool = False):
    """The random chain: ``Pi``, the final ``V`` and the direction of ``V`` against the candidate targets."""
    res = chain_result("random", quick)
    return variation_figures.figure_chain(res), readings.chain_numbers(res)


@register("walks-variations-doubly-stochastic", "Variations: a doubly stochastic non-circulant chain, K=6: learned like the ring walk")
def doubly_stochastic(quick: bool = False):
    """The doubly stochastic chain, drawn as :func:`chain`."""
    res = chain_result("doubly stochastic", quick)
    return variation_figures.figure_chain(res), readings.chain_numbers(res)


@functools.lru_cache(maxsize=1)
def chain_table() -> list[dict]:
    """``n_chains`` seeded chains of each kind (the rows of :func:`onelayer.studies.walks.chains.chain_table`), from
    the stored study ``walks-chain-seeds``, checked to hold the chapter's number of chains; cached."""
    data = chain_seeds.load()
    readings.check_stored(chain_seeds.STUDY, data["settings"], {"n_chains": SETTINGS.n_chains}, "n_chains")
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
    """:func:`onelayer.studies.walks.variations.readings.baseline_rates` of the stored study ``walks-baseline-seeds``
    (each seed its own training and test walks), checked to hold the chapter's ``baseline_p``,
    ``verdict_baseline_ns`` and ``verdict_baseline_seeds``; optimal: ``baseline_optimal``."""
    data, s = baseline_seeds.load(), SETTINGS
    readings.check_stored(baseline_seeds.STUDY, data["settings"], {"p": s.baseline_p, "ns": s.verdict_baseline_ns,
                          "seeds": s.verdict_baseline_seeds}, "baseline_p, verdict_baseline_ns and verdict_baseline_seeds")
    return readings.baseline_rates(data["rows"], s.baseline_optimal)


def chain_summary() -> list[dict]:
    """:func:`onelayer.studies.walks.variations.readings.chain_kinds` of :func:`chain_table` as text: the rate of
    learned chains, the range of the stationary law's spread and of the final attention on the parent."""
    def span(lo_hi, text):
        return f"{text(lo_hi[0], 2)} to {text(lo_hi[1], 2)}"
    return [{"kind": r["kind"], "learned": r["learned"].text(2), "mu spread": span(r["mu_spread"], near_zero_text),
             "parent attention": span(r["parent_attention"], number_text)} for r in readings.chain_kinds(chain_table())]


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
    return fig, {"seed": s.explore_seed, "concentration": s.explore_concentration, "steps": steps, **readings.chain_numbers(res)}


def lag3() -> dict:
    """The exercise: the lag-3 chain (first-step formula on a small population, then a short run at full size)."""
    return lag_study.lag_check(SETTINGS.lag3_p, lag=3, small=SETTINGS.lag3_small, steps=SETTINGS.lag3_steps)


def logit_scale_speed() -> float:
    """The exercise: :func:`onelayer.studies.walks.variations.logit_scale.logit_scale_speed` (0 up to round-off)."""
    return logit_scale_study.logit_scale_speed(SETTINGS.speed_p, steps=SETTINGS.speed_steps)


# -- rates over seeds (the stored study walks-variations-seeds) --------------------------------------------------------

@functools.lru_cache(maxsize=1)
def seed_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.variations.seeds` (``python -m onelayer study walks-variations-seeds``)."""
    return registry.load(variation_seeds.STUDY.name)


def logit_scale_seed_rates(rows: list[dict] | None = None) -> list[dict]:
    """:func:`onelayer.studies.walks.variations.readings.logit_scale_rates` of the stored study (or ``rows``), ``T0``
    of both scales as text."""
    rows = seed_study()["summary"]["logit_scale"] if rows is None else rows
    return [{**r, "T0_one": verdicts.steps_text(r["T0_one"]), "T0_scaled": verdicts.steps_text(r["T0_scaled"])}
            for r in readings.logit_scale_rates(rows)]


def lag_seed_rates(rows: list[dict] | None = None) -> list[dict]:
    """:func:`onelayer.studies.walks.variations.readings.lag_rates` of the stored study (or ``rows``) above
    ``lag_selected``, ``T0`` as text."""
    rows = seed_study()["summary"]["lag"] if rows is None else rows
    return [{**r, "T0": verdicts.steps_text(r["T0"])} for r in readings.lag_rates(rows, SETTINGS.lag_selected)]


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


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.walks_variations.rows` of the chapter's checks and runs
    and of the stored seed, chain and baseline studies."""
    s = SETTINGS
    return verdicts.rows(s, residual=_residual(), scale_rates=logit_scale_seed_rates(), lag_rates=lag_seed_rates(),
                         study_settings=seed_study()["settings"], lag2=lag_result(s.lag_ps[0], s.lag_steps),
                         linear=linear_rates(), bound_rows=_bound_rows(False), chains=chain_table(),
                         separate_qk=rebuttal.separate_qk_run(s.qk_p, sigma=0.0, steps=s.verdict_qk_steps),
                         baseline=baseline_rates())
