"""Chapter "Theorem 3.1: a random walk is learned" (``book/walks/theorem31.ipynb``).

The proof's steps at the paper's size: the first GD step against Lemma C.1 (on the exact population and on the
paper's 1000 sampled walks), the second step's selection of the parent (Lemma C.5) and its log-odds against ``N``,
the paper's Figures 4 and 8, the steps to Bayes-optimal predictions, the direction of ``V`` (``Pi^T`` or its
entrywise square root), and the edge of the theorem (``p`` near 1, ``K <= 4``). Claims about one training sample are
measured as rates over many samples, from the stored studies :mod:`onelayer.studies.walks.seed_rates` and
:mod:`onelayer.studies.walks.direction_slopes`; the long single-sample runs (direction of ``V``, Lemma C.7, the
log-odds, the steps to optimal, Figure 8) from :mod:`onelayer.studies.walks.theorem31_runs`; Figure 4 runs live,
its player shows stored frames (:data:`PLAYER_FRAMES`).
Every figure and table of the chapter is a registered function here; the runs several cells share are cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ... import formatting
from ...paths import data_path
from ...registry import register
from ...scrubber import frame_numbers, load_frames, scrub
from ...studies import registry
from ...studies.walks import (direction_slopes, edge, edge_seeds, experiment, first_steps, sample_rates, seed_rates,
                               theorem31_runs)
from ...figures import walks as figures
from ...verdicts import walks_theorem31 as verdicts
from ...validation import check_bool

__all__ = ["Settings", "SETTINGS", "PLAYER_FRAMES", "sample_experiment", "lemma_c1_rows", "lemma_c1", "first_step_by_counting",
           "lemma_c5_rows", "first_steps_rows", "parent_log_odds", "fig4_experiment", "fig4_run", "fig4", "steps_player", "steps_frames",
           "steps_to_optimal", "fig8", "direction_runs", "runs_study", "value_direction", "direction_slope", "loss_direction_rows", "lemma_c7",
           "seed_study", "first_step_rates", "direction_rates", "slope_study", "slope_rates", "mean_text", "edge_rate_rows", "edge_seed_study", "edge_more_seed_rows", "edge_seed_comparison", "seed_rate_tables", "pooled_edge_rates", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter runs. ``K = 6``, ``N = 97``, ``M = 1000``, 1000 + 1000 walks, ``eta = 1``,
    ``epsilon = 0.1`` are the defaults of :func:`onelayer.studies.walks.experiment.setup_experiment` (Section 5.1 [paper])."""

    #: Figure 4: p = 1/2, K = 6, N = 97, 50 GD steps [paper]; the steps its printout lists [ours]
    fig4_p: float = 0.5
    fig4_K: int = 6
    fig4_N: int = 97
    fig4_steps: int = 50
    fig4_shown_steps: tuple[int, ...] = (0, 1, 2, 3, 5, 50)
    #: GD steps of a training figure in quick mode [ours]
    quick_steps: int = 5
    #: the walk parameter of the chapter's second run (p = 0.7) [ours]
    p: float = 0.7
    #: the stored long runs on one training sample (walks-t31-runs), at the study's settings: Figure 8 (K = 20,
    #: N = 101 [paper]); the parent's log-odds after step 2 at p = 0.7 for N from 13 to 193, 8000 walks; the steps to
    #: optimal at p = 0.7 for six (K, N), 20 steps; the direction of V at p = 0.5, 0.7, 0.9 over 1000 steps and by
    #: loss over 300 steps [ours]
    runs: theorem31_runs.Settings = theorem31_runs.Settings()
    #: Lemma C.1: walk parameters; length and positional dimension of the exact population [ours]
    lemma_c1_ps: tuple[float, ...] = (0.5, 0.7)
    population_N: int = 13
    population_M: int = 100
    #: steps of the first-steps tables [ours]
    first_steps: int = 3
    #: parent log-odds after step 2 in quick mode: three lengths, 500 walks [ours]
    quick_log_odds_Ns: tuple[int, ...] = (13, 25, 37)
    quick_log_odds_walks: int = 500
    #: the player over the first GD steps of the Figure 4 run (quick: steps <= quick_steps) and its resolution [ours]
    scrub_steps: tuple[int, ...] = tuple(range(11))
    #: steps to optimal in quick mode: the first two sizes of the stored runs, 5 steps [ours]
    #: direction of V in quick mode: 30 steps, 8 records [ours]
    quick_direction_steps: int = 30
    quick_direction_records: int = 8
    #: the record from which the log-log slope of d(V, sample target) is fitted (p = 0.7) [ours]
    slope_from_record: int = 10
    #: a sample's log-log slope "is -1/2" when within this distance of it (the stored rate over samples, [ours])
    slope_tol: float = 0.05
    #: the edge of the theorem: walk parameters, ring sizes [ours]
    edge_ps: tuple[float, ...] = edge.EDGE_PS
    edge_K: int = 6
    small_Ks: tuple[int, ...] = (3, 4)
    #: the rates over training samples come from the stored study walks-seed-rates (onelayer.studies.walks.seed_rates.Settings:
    #: 400 samples at p = 0.7 for the first steps, 40 seeds per (K, p) for the edge, 40 samples at p = 0.7 for the
    #: direction of V and Lemma C.7's remainder) [ours]
    #: a sample's V(1) counts as circulant when its largest deviation is below this (exact arithmetic gives 0) [ours]
    circulant_tol: float = 1e-12
    #: the parent counts as selected at step 2 when its test-mean attention exceeds this [ours]
    selected_attention: float = 0.99
    #: Lemma C.7's remainder counts as growing when its log-log slope exceeds this (bounded: 0, sqrt(t): 1/2) [ours]
    growth_slope: float = 0.1


SETTINGS = Settings()
#: The player's rendered frames in the data directory (``python -m tools.player_frames walks-t31-steps-frames``).
PLAYER_FRAMES = "walks/frames/theorem31_steps.json"


def sample_experiment(p: float, K: int = 6, N: int = 97) -> experiment.Experiment:
    """The Section 5.1 experiment (1000 sampled training and test walks, seeds 0 and 1000) at ``p``; cached (one entry
    per ``(p, K, N)``, however they are passed)."""
    return _sample_experiment(p, K, N)


@lru_cache(maxsize=None)
def _sample_experiment(p: float, K: int, N: int) -> experiment.Experiment:
    return experiment.setup_experiment(p, K=K, N=N)


# -- step 1: Lemma C.1 ------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _lemma_c1_checks() -> tuple:
    s = SETTINGS
    return experiment.lemma_c1_cases(s.lemma_c1_ps, sample_experiment, population_N=s.population_N,
                                     population_M=s.population_M)


def lemma_c1_rows() -> list[dict]:
    """One row per ``p`` and data (the exact population at ``N = 13``, the 1000 sampled walks at ``N = 97``):
    what :func:`onelayer.studies.walks.experiment.lemma_c1_check` measured on ``V(1)`` (``V1_*``) and what the closed form
    says (``closed_form_*``), apart."""
    return [{"p": p, "data": name, "N": N, **{k: check[k] for k in experiment.C1_KEYS}} for p, name, N, check in _lemma_c1_checks()]


def _sample_check(p: float) -> dict:
    return next(check for q, name, _, check in _lemma_c1_checks() if q == p and name != "population")


@register("walks-lemma-c1", "Theorem 3.1 (table + V heat-maps): first GD step against the Lemma C.1 closed form, p = 0.5, "
                           "0.7, on the exact population and on one training sample (seed 0)")
def lemma_c1(quick: bool = False):
    """The table of :func:`lemma_c1_rows` and the heat-maps of ``V(1)`` on the sample and of the closed form (p=0.7)."""
    rows = [{**r, "V1_column_max_offsets": " ".join(map(str, r["V1_column_max_offsets"])),
             "closed_form_max_offsets": " ".join(map(str, r["closed_form_max_offsets"]))} for r in lemma_c1_rows()]
    check = _sample_check(SETTINGS.p)
    fig = figures.value_heatmaps({"(a) V(1), one sample": check["V1"], "(b) closed form": check["closed_form"]})
    return fig, {"V1_p07": check["V1"], "closed_form_p07": check["closed_form"], "table": rows}


def first_step_by_counting() -> dict:
    """``V(1)`` on the p = 0.7 sample by counting (:func:`onelayer.studies.walks.first_steps.first_step_from_counts`) against
    the trained one: ``freq`` (training label frequencies), ``column_max_labels`` (the label at each column's maximum
    of the trained ``V(1)``, :func:`~onelayer.studies.walks.first_steps.column_max_offsets`), ``top_label`` and
    ``counting_error`` (largest difference of the two ``V(1)``)."""
    return first_steps.counting_check(_sample_check(SETTINGS.p)["V1"], sample_experiment(SETTINGS.p).train)


# -- step 2: Lemma C.5 and the parent's log-odds ------------------------------------------------------------------------

def lemma_c5_rows() -> list[dict]:
    """:func:`onelayer.walks.theory.lemma_c5_check` at p = 0.7 on the exact population (``N = 13``) and on the
    1000 sampled walks (``N = 97``), one row each with its ``data`` name."""
    s = SETTINGS
    return experiment.lemma_c5_cases(s.p, sample_experiment(s.p), population_N=s.population_N,
                                     population_M=s.population_M)


@lru_cache(maxsize=None)
def first_steps_rows(p: float, train: str = "sample") -> tuple[dict, ...]:
    """:func:`onelayer.studies.walks.first_steps.first_steps_table` for steps 1-3 at ``p``, on the 1000 sampled walks
    (``train="sample"``) or on the exact population at ``N = 13``, ``M = 100`` (``"population"``); cached."""
    s = SETTINGS
    small = {"N": s.population_N, "M": s.population_M} if train == "population" else {}
    return tuple(first_steps.first_steps_table(p, steps=s.first_steps, train=train, **small))


@register("walks-parent-log-odds", "Theorem 3.1: step-2 log-odds of the parent and its attention against N (M = N^1.5 and M = 1000)")
def parent_log_odds(quick: bool = False):
    """Median over walks of ``min_j log(S_{N-1}/S_j)`` after two steps, and the parent's attention, against ``N``,
    with ``M = ceil(N^1.5)`` and with ``M = 1000``."""
    s = SETTINGS
    Ns, n = (s.quick_log_odds_Ns, s.quick_log_odds_walks) if quick else (s.runs.log_odds_Ns, s.runs.log_odds_walks)
    if quick:  # live, a few lengths
        odds = {label: experiment.log_odds_vs_N(s.runs.log_odds_p, Ns, M_rule=rule, n=n)
                for rule, label in theorem31_runs.M_RULES.items()}
    else:  # the stored study walks-t31-runs
        odds = {label: runs_study()["log_odds"][rule] for rule, label in theorem31_runs.M_RULES.items()}
    return figures.log_odds_figure(odds), {"p": s.runs.log_odds_p, "K": 6, "walks": n,
                                           "table": theorem31_runs.log_odds_rows(odds)}


# -- Figures 4 and 8, and the player -----------------------------------------------------------------------------------

def fig4_experiment() -> experiment.Experiment:
    """The experiment of Figure 4 (``p = 1/2``, ``K = 6``, ``N = 97``, Section 5.1's data); cached."""
    return sample_experiment(SETTINGS.fig4_p, K=SETTINGS.fig4_K, N=SETTINGS.fig4_N)


@lru_cache(maxsize=None)
def fig4_run(quick: bool = False):
    """``(experiment, history)`` of the Figure 4 run (every step recorded); cached, shared by the figure and the player."""
    exp = fig4_experiment()
    return exp, experiment.run(exp, steps=SETTINGS.quick_steps if quick else SETTINGS.fig4_steps)


@register("walks-fig4", "Theorem 3.1: K=6, N=97, p=0.5, 50 GD steps, one seed: accuracy, V, attention and its zoom "
                       "(paper's Figure 4)")
def fig4(quick: bool = False):
    """The paper's Figure 4 redrawn, with its numbers (:func:`onelayer.studies.walks.experiment.training_numbers`)."""
    exp, hist = fig4_run(quick)
    return (figures.training_figure(hist, exp, title="K=6, N=97, M=1000, p=0.5 (paper's Figure 4)"),
            experiment.training_numbers(hist, exp))


def _scrub_steps(quick: bool = False) -> list[int]:
    return [t for t in SETTINGS.scrub_steps if not quick or t <= SETTINGS.quick_steps]


def _draw_step(step: int, quick: bool = False):
    exp, hist = fig4_run(quick)
    return figures.training_frame(hist, exp, step, _scrub_steps(quick))


def steps_player(live: bool = False):
    """The player over GD steps 0-10 of the Figure 4 run, ``V`` and the test-mean attention at each step: its stored
    frames (:data:`PLAYER_FRAMES`, nothing drawn), or (``live``) drawn again from the run."""
    if not check_bool("live", live):
        return load_frames(data_path(PLAYER_FRAMES))
    return scrub(_draw_step, list(SETTINGS.scrub_steps), label="GD step", name="walks-t31-steps", fmt="{:d}",
                 alt="p = 1/2, K = 6, N = 97: accuracy over 50 GD steps, and the value matrix V and the test-mean "
                     "attention over positions at GD step {value}")


@register("walks-t31-steps-frames", "Theorem 3.1 player (frames): accuracy, V and attention at GD steps 0-10 of the "
                                    "paper's Figure 4 run (p=0.5, K=6, N=97, one seed)")
def steps_frames(quick: bool = False):
    """The numbers behind every frame of :func:`steps_player`."""
    return None, frame_numbers(lambda step: _draw_step(step, quick), _scrub_steps(quick), labels="GD step", fmt="{:d}")


@register("walks-steps-to-optimal", "Theorem 3.1 (table): first step with Bayes-optimal test predictions for several K, N (p=0.7)")
def steps_to_optimal(quick: bool = False):
    """:func:`onelayer.studies.walks.experiment.steps_to_optimal_table` over ``steps_table_sizes`` (``T0`` per ``(K, N)``)."""
    s = SETTINGS
    if not quick:  # the stored study walks-t31-runs
        return None, {"p": s.runs.steps_table_p, "steps": s.runs.steps_table_steps, "table": runs_study()["steps_to_optimal"]}
    return None, {"p": s.runs.steps_table_p, "steps": s.quick_steps,
                  "table": experiment.steps_to_optimal_table(s.runs.steps_table_p, s.runs.steps_table_sizes[:2], steps=s.quick_steps)}


@register("walks-fig8", "Theorem 3.1: K=20, N=101, p=0.5, 50 GD steps, one seed: accuracy, V, attention and its zoom "
                       "(paper's Figure 8)")
def fig8(quick: bool = False):
    """The paper's Figure 8 (Figure 4 with ``K = 20``, ``N = 101``) and its numbers."""
    s = SETTINGS
    exp = sample_experiment(s.runs.fig8_p, K=s.runs.fig8_K, N=s.runs.fig8_N)
    hist = experiment.run(exp, steps=s.quick_steps) if quick else runs_study()["fig8"]  # stored: walks-t31-runs
    return (figures.training_figure(hist, exp, title="K=20, N=101, M=1000, p=0.5 (paper's Figure 8)"),
            experiment.training_numbers(hist, exp))


# -- the direction of V --------------------------------------------------------------------------------------------------

def direction_runs(quick: bool = False) -> tuple:
    """:func:`onelayer.studies.walks.experiment.direction_run` for every ``direction_ps``; run once per mode."""
    return _direction_runs(check_bool("quick", quick))  # one cache entry per mode, however it is called


@lru_cache(maxsize=None)
def _direction_runs(quick: bool) -> tuple:
    s = SETTINGS
    if quick:
        return tuple(experiment.direction_run(p, steps=s.quick_direction_steps, n_records=s.quick_direction_records)
                     for p in s.runs.direction_ps)
    return runs_study()["direction"]


@lru_cache(maxsize=None)
def runs_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.theorem31_runs` (``python -m onelayer study walks-t31-runs``):
    the long runs on one training sample (direction of ``V``, direction by loss, Lemma C.7, the parent's log-odds);
    cached. ``ValueError`` when it was run with other settings than the chapter's."""
    data = theorem31_runs.load()
    registry.require_settings(theorem31_runs.STUDY.name, data["settings"], SETTINGS.runs)
    return data


@register("walks-value-direction", "Theorem 3.1: direction of V against Pi^T and sqrt(Pi^T) (p = 0.5, 0.7, 0.9; one "
                                  "seed each) and ||V|| against sqrt(t)")
def value_direction(quick: bool = False):
    """The direction of ``V`` against ``Pi^T`` and ``sqrt(Pi^T)`` over a long run, one row per ``p`` (final
    values), the reduced scalar dynamics' clockwise/counter-clockwise ratio and the log-log slope of the distance
    to the sample's own target (p = 0.7, from record ``slope_from_record`` on)."""
    runs = direction_runs(quick)
    rows, reduced = theorem31_runs.direction_table(runs, SETTINGS.quick_direction_steps if quick else SETTINGS.runs.direction_steps)
    slope, from_step = direction_slope(runs)
    return figures.direction_figure(list(runs)), {"reduced_dynamics_ratio": reduced, "loglog_slope_d_empirical_p07": slope,
                                                  "loglog_from_step": from_step, "table": rows}


def direction_slope(runs: tuple | None = None) -> tuple[float | None, int | None]:
    """The log-log slope of the distance of ``V``'s direction to the sample's own target in the p = 0.7 run of
    :func:`direction_runs` (one training sample), fitted from record ``slope_from_record`` on, and the step of that
    record (``(None, None)`` when the run has too few records)."""
    return theorem31_runs.direction_slope((direction_runs() if runs is None else runs)[1], SETTINGS.slope_from_record)


def loss_direction_rows() -> tuple[dict, ...]:
    """:func:`onelayer.studies.walks.direction.direction_by_loss` at p = 0.7 (log, squared and cross-entropy loss),
    stored in :func:`runs_study`."""
    return runs_study()["loss_direction"]


def lemma_c7() -> dict:
    """:func:`onelayer.studies.walks.direction.lemma_c7_remainder` at p = 0.7 over ``direction_steps``, stored in
    :func:`runs_study`."""
    return runs_study()["lemma_c7"]


# -- rates over training samples (the stored study) ------------------------------------------------------------------------

@lru_cache(maxsize=None)
def seed_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.seed_rates` (``python -m onelayer study walks-seed-rates``) in its
    first layout (:func:`onelayer.studies.walks.seed_rates.payload`); cached."""
    return seed_rates.payload(registry.load(seed_rates.STUDY.name))


def first_step_rates(rows: list[dict] | None = None) -> dict:
    """:func:`onelayer.studies.walks.sample_rates.first_step_rates` of the stored first-steps samples of
    :func:`seed_study` (or ``rows``) with the chapter's ``circulant_tol`` and ``selected_attention``."""
    return sample_rates.first_step_rates(seed_study()["first_steps"] if rows is None else rows,
                                         circulant_tol=SETTINGS.circulant_tol, selected_attention=SETTINGS.selected_attention)

def direction_rates(rows: list[dict] | None = None) -> dict:
    """:func:`onelayer.studies.walks.sample_rates.direction_rates` of the stored direction samples of :func:`seed_study`
    (or ``rows``) with the chapter's ``growth_slope``."""
    return sample_rates.direction_rates(seed_study()["direction"] if rows is None else rows,
                                        growth_slope=SETTINGS.growth_slope)

@lru_cache(maxsize=None)
def slope_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.direction_slopes` (``python -m onelayer study walks-direction-slopes``)."""
    return registry.load(direction_slopes.STUDY.name)


def slope_rates(rows: list[dict] | None = None) -> dict:
    """:func:`onelayer.studies.walks.sample_rates.slope_rates` of the samples of :func:`slope_study` (or ``rows``) with
    the chapter's ``slope_tol``."""
    return sample_rates.slope_rates(slope_study()["summary"]["samples"] if rows is None else rows,
                                    slope_tol=SETTINGS.slope_tol)

def mean_text(interval, digits: int = 3) -> str:
    """``"mean [low, high]"``, 3 significant digits unless told (:func:`onelayer.formatting.mean_text`)."""
    return formatting.mean_text(interval, digits)


def edge_rate_rows(Ks: tuple[int, ...] = (6,)) -> list[dict]:
    """:func:`onelayer.studies.walks.edge.edge_rates` of the stored edge runs (40 seeds per ``(K, p)``) for ring sizes ``Ks``."""
    return edge.edge_rates([r for r in seed_study()["edge"] if r["K"] in Ks])


@lru_cache(maxsize=None)
def edge_seed_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.edge_seeds` (``python -m onelayer study walks-edge-seeds``): the
    edge at ``K = 6``, ``p`` in ``{0.99, 0.999}``, over 200 training samples per ``p`` (seeds ``0 .. 199``, a superset
    of the 40 of ``walks-seed-rates``); cached."""
    return registry.load(edge_seeds.STUDY.name)


def edge_more_seed_rows() -> list[dict]:
    """The stored edge runs at ``K = 6`` with the runs of :func:`edge_seed_study` in place of the 40 per ``p`` where it
    has more (its ``p``): the rows the verdict reads."""
    return sample_rates.with_more_seeds(seed_study()["edge"], SETTINGS.edge_K, edge_seed_study()["members"])


def edge_seed_comparison() -> list[dict]:
    """:func:`onelayer.studies.walks.sample_rates.edge_seed_comparison` of :func:`edge_seed_study` against the 40
    stored samples per ``p`` of :func:`seed_study`."""
    old = {r["p"]: r for r in edge_rate_rows((SETTINGS.edge_K,))}
    return sample_rates.edge_seed_comparison(old, edge_seed_study()["summary"]["cells"])


@register("walks-t31-seed-rates", "Theorem 3.1 (table): over many training samples, the columns of V(1) at the most "
                                  "frequent label (p=0.7) and the edge runs (K=3, 4, 6, p near 1) with 95% intervals")
def seed_rate_tables(quick: bool = False):
    """The rates of :func:`first_step_rates` and :func:`edge_rate_rows` (all stored ring sizes), from the stored
    study (quick mode reads the same file)."""
    fs = first_step_rates()
    first = {k: (v.text(3) if hasattr(v, "text") else v) for k, v in fs.items()}
    table = [{k: r[k] for k in ("K", "p", "runs", "optimal_parent", "other_lag", "other_lags")} for r in edge_rate_rows(tuple(sorted({r["K"] for r in seed_study()["edge"]})))]
    return None, {"source": seed_rates.STUDY.stored, "first_steps": first, "table": table}


def pooled_edge_rates(rows: list[dict] | None = None) -> dict:
    """:func:`onelayer.studies.walks.sample_rates.pooled_edge_rates` of the stored edge runs of :func:`seed_study`
    (or ``rows``)."""
    return sample_rates.pooled_edge_rates(seed_study()["edge"] if rows is None else rows)


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.walks_theorem31.rows` of the rates over the stored training
    samples, read with the chapter's settings, and of the exact population."""
    s = SETTINGS
    return verdicts.rows(
        s, population=next(r for r in lemma_c1_rows() if r["p"] == s.p and r["data"] == "population"),
        population_steps=first_steps_rows(s.p, "population"), first_steps=first_step_rates(),
        direction=direction_rates(), slopes=slope_rates(), slope_steps=slope_study()["settings"]["steps"],
        swept=seed_study()["meta"]["settings"], edge_rates=edge.edge_rates(edge_more_seed_rows()),
        pooled=pooled_edge_rates())
