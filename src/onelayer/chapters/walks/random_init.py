"""Chapter "Random initialisation" (``book/walks/random_init.ipynb``): Section 5.2 and Appendix F.3 of the walks paper.

The chapter reads the stored study over the recipe's three unknowns (:mod:`onelayer.studies.walks.random_init`),
recomputes one stored run, and draws the paper's Figures 6, 11, 12 and 13 from the stored runs; its player shows
stored frames. The runs, readings and figures are the core package's; this module fixes which of them it shows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import PurePath

from ...paths import data_path
from ...registry import register
from ...scrubber import frame_numbers, load_frames, scrub_grid
from ...figures import walks_random_init as random_init_figures
from ...studies import registry
from ...studies.walks.random_init import readings as ri_readings, runs as ri_runs, stored as ri_stored
from ...studies.walks.random_init import initial_attention
from ...validation import check_bool
from ...verdicts import walks_random_init as verdicts

__all__ = ["Settings", "SETTINGS", "PLAYER_FRAMES", "study", "initial_attention_rows", "live_check", "literal_runs",
           "fig6", "ordering", "setting_rates", "ordering_counts", "learned_half_rates", "table_variances",
           "closest_ranking", "closest_reading", "closest_runs", "fig13", "fig6_closest", "fig11_run", "fig11",
           "fig12", "value_rows", "explorer", "explorer_default", "study_player", "study_frames", "equivalence",
           "lock_rows", "NORMALIZE_NAMES", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter shows (the study's own grid and sizes are those of ``STUDY`` of :mod:`onelayer.studies.walks.random_init.stored`;
    the quick variant's are :data:`onelayer.studies.walks.random_init.stored.QUICK`)."""

    #: the paper's literal reading: keys and query normalised ([guess]: the scope is unstated), mean loss, eta = 0.01
    #: ([paper]), and the walks of Figure 6 ([paper])
    literal: tuple[str, str, float] = ("keys_and_query", "mean", 0.01)
    ps: tuple[float, ...] = (0.5, 1.0)
    #: steps of the live re-run compared with the stored study
    live_steps: int = 100
    #: "learned": the optimal fraction stays at least this from some recorded step on ([ours])
    learned_threshold: float = 0.95
    #: Figure 11: a learned p = 1/2 run "attends to" a position holding more than this of the final attention ([ours])
    attention_threshold: float = 0.9
    #: Figure 13: the authors' picture holds in a run when its example token stays within this of 1/6 at every step of
    #: the table while the variance grows ([ours])
    drift: float = 0.05
    #: the book's minimum number of seeds per setting for a rate about training runs
    min_seeds: int = 20
    #: readings printed in the ranking by distance to the authors' table
    top_ranked: int = 5
    #: the second reading of the closest-reading figure: a three times larger step on the mean loss
    larger_step: tuple[str, float] = ("mean", 3.0)
    #: the seed of the stored runs the figures, the explorer and the player show
    seed: int = 0
    #: the sum/mean equivalence exercise: steps, recording, and the two readings (sum with eta, mean with 1000 eta)
    equivalence_steps: int = 30
    equivalence_record_every: int = 10
    equivalence_readings: tuple[tuple[str, float], ...] = (("sum", 0.01), ("mean", 10.0))
    #: the lock-on exercise: keys-only normalisation, mean loss, eta = 0.01, p = 1/2
    lock_reading: tuple[str, str, float] = ("keys", "mean", 0.01)


SETTINGS = Settings()
#: The player's rendered frames in the data directory (``python -m tools.player_frames walks-random-init-sweep-frames``).
PLAYER_FRAMES = "walks/frames/random_init_sweep.json"


def study(quick: bool = False) -> dict:
    """The runs the chapter reads (:func:`onelayer.studies.walks.random_init.stored.payload`): the stored study
    ``walks-random-init``, or (``quick``) its quick settings run here (one normalisation, two readings, one seed);
    read once per mode."""
    return _study(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _study(quick: bool) -> dict:
    return ri_stored.quick_payload() if quick else ri_stored.payload(registry.load(ri_stored.STUDY.name))


def _find(data: dict, p: float, reading: tuple) -> dict:
    normalize, reduction, lr = reading
    return ri_readings.find_run(data, p=p, normalize=normalize, reduction=reduction, lr=lr, seed=SETTINGS.seed)


def live_check() -> dict:
    """The literal reading for ``p = 1`` recomputed for ``live_steps`` steps against the stored run: the largest
    difference of the recorded curves and of ``V`` at the last step."""
    T = SETTINGS.live_steps
    live = ri_runs.reading_run(1.0, SETTINGS.literal, steps=T, table_steps=(T,), snapshot_steps=(T,))
    return ri_readings.run_difference(live, _find(study(), 1.0, SETTINGS.literal), step=T)


def literal_runs(quick: bool = False) -> dict:
    """``{"p = 0.5": run, "p = 1": run}`` under the literal reading: the stored runs (``quick``: tiny live runs)."""
    if quick:
        return {f"p = {p:g}": ri_runs.reading_run(p, SETTINGS.literal, **ri_stored.run_sizes(ri_stored.QUICK)) for p in SETTINGS.ps}
    return {f"p = {p:g}": _find(study(), p, SETTINGS.literal) for p in SETTINGS.ps}


@register("walks-fig6", "Random init (sigma=0.01, eta=0.01, keys and query normalised): optimal predictions, KL and attention, p = 0.5 and 1 (paper's Figure 6)")
def fig6(quick: bool = False):
    """The paper's Figure 6 under its literal numbers (the stored runs of seed 0)."""
    runs = literal_runs(quick)
    fig = random_init_figures.figure_curves(runs, title="keys and query normalised, mean loss, eta = 0.01 (the paper's numbers)")
    return fig, {"setting": dict(ri_runs.PAPER), "table": ri_readings.curve_rows(runs)}


@register("walks-random-init-ordering", "Random init: which of p = 0.5 and p = 1 is learned first, for every normalisation, loss reduction, step size and seed")
def ordering(quick: bool = False):
    """When each walk is learned, for every setting and seed of the study, and which comes first."""
    rows = ri_readings.ordering_table(study(quick), threshold=SETTINGS.learned_threshold)
    return random_init_figures.figure_ordering(rows), {"source": "quick live run" if quick else PurePath(ri_stored.STUDY.stored).name,
                                      "paper_pattern_count": sum(r["paper_pattern"] for r in rows), "table": rows}


def setting_rates(quick: bool = False) -> list[dict]:
    """:func:`onelayer.studies.walks.random_init.readings.setting_rates` of the study: per setting, the rate of every outcome."""
    return ri_readings.setting_rates(ri_readings.ordering_table(study(quick), threshold=SETTINGS.learned_threshold))


def ordering_counts(quick: bool = False) -> dict:
    """:func:`onelayer.studies.walks.random_init.readings.ordering_counts` of the study's ordering table."""
    return ri_readings.ordering_counts(ri_readings.ordering_table(study(quick), threshold=SETTINGS.learned_threshold))


def learned_half_rates(quick: bool = False) -> dict:
    """:func:`onelayer.studies.walks.random_init.readings.learned_attention` of the study (the chapter's thresholds)."""
    return ri_readings.learned_attention(study(quick), threshold=SETTINGS.learned_threshold,
                                attention=SETTINGS.attention_threshold)


def table_variances(quick: bool = False) -> dict:
    """:func:`onelayer.studies.walks.random_init.readings.table_variances` of the closest reading over all its seeds."""
    normalize, reduction, lr = closest_reading(quick)
    return ri_readings.table_variances(study(quick), normalize=normalize, reduction=reduction, lr=lr, drift=SETTINGS.drift)


def closest_ranking(quick: bool = False) -> list[tuple[tuple, list[float]]]:
    """:func:`onelayer.studies.walks.random_init.readings.reading_distances` of the study: every reading with the
    distances of its ``p = 1`` runs to the authors' table, closest first."""
    return ri_readings.reading_distances(study(quick))


def closest_reading(quick: bool = False) -> tuple:
    """``(normalize, reduction, lr)`` whose ``p = 1`` runs are closest to the authors' table on average."""
    return closest_ranking(quick)[0][0]


def closest_runs(quick: bool = False) -> tuple[dict, dict]:
    """The ``p = 1`` and ``p = 1/2`` runs (seed 0) of the closest reading."""
    data, best = study(quick), closest_reading(quick)
    return _find(data, 1.0, best), _find(data, 0.5, best)


@register("walks-fig13", "Random init, p=1: weighted average token X S of one sequence with its variance, ours against the authors' table (paper's Figure 13)")
def fig13(quick: bool = False):
    """The paper's Figure 13: the weighted token of the closest reading's ``p = 1`` run against the authors' table."""
    run = closest_runs(quick)[0]
    return random_init_figures.figure_weighted_token(run), {"config": run["config"], "table_distance": ri_readings.table_distance(run),
                                           "table": ri_readings.weighted_token_steps(run)}


@register("walks-fig6-closest-reading", "Random init: Figure 6 under the reading closest to the authors' table and with a 3x larger step (seed 0)")
def fig6_closest(quick: bool = False):
    """Figure 6 again under the closest reading and with ``larger_step`` (the stored runs of seed 0)."""
    data = study(quick)
    normalize, reduction, lr = closest_reading(quick)
    readings = [(reduction, lr)] + ([] if quick else [SETTINGS.larger_step])
    runs = {f"p = {p:g}, {red}, lr={step:g}": _find(data, p, (normalize, red, step))
            for p in SETTINGS.ps for red, step in readings}
    fig = random_init_figures.figure_curves(runs, title=f"Figure 6 under the closest reading ({normalize}, seed 0)\nand with a 3x larger step")
    return fig, {"closest_reading": {"normalize": normalize, "reduction": reduction, "lr": lr},
                 "final": {name: {k: v[-1] for k, v in r["curves"].items()} for name, r in runs.items()}}


def fig11_run(quick: bool = False) -> dict:
    """:func:`onelayer.studies.walks.random_init.readings.most_parent_run` of the study (the learned threshold)."""
    return ri_readings.most_parent_run(study(quick), threshold=SETTINGS.learned_threshold)


@register("walks-fig11", "Random init, p=0.5: V over training and the final attention of the run that attends most to the parent (paper's Figure 11)")
def fig11(quick: bool = False):
    """The paper's Figure 11: ``V`` over training and the final attention of :func:`fig11_run`."""
    run = fig11_run(quick)
    return random_init_figures.figure_value_snapshots(run), {"config": run["config"], "final": {k: v[-1] for k, v in run["curves"].items()},
                                            "profile": run["profile"]}


@register("walks-fig12", "Random init, p=1: V at steps 100, 400, 700, 1000 under the reading closest to the authors' table (paper's Figure 12)")
def fig12(quick: bool = False):
    """The paper's Figure 12: ``V`` along the closest reading's ``p = 1`` run."""
    run = closest_runs(quick)[0]
    return random_init_figures.figure_value_snapshots(run), {"config": run["config"], "V": run["V"]}


def value_rows() -> list[dict]:
    """``V`` of the closest reading's ``p = 1`` run at each snapshot: its mean entry and its spread relative to it."""
    return ri_readings.value_spread(closest_runs()[0])


def explorer():
    """The live menus (in a kernel) over the stored study: normalisation, reading and seed."""
    return random_init_figures.study_widget(study())


@register("walks-random-init-explorer-default", "Random init: the sweep explorer's default state: stored curves of keys and query normalised, mean loss, lr=0.01, seed 0")
def explorer_default(quick: bool = False):
    """The explorer's figure at its default (the literal reading, seed 0) and the stored curves it plots."""
    data = study(quick)
    normalize, reduction, lr = SETTINGS.literal
    runs = {f"p = {p:g}": _find(data, p, SETTINGS.literal) for p in data["meta"]["ps"]}
    return random_init_figures.study_explorer(data), {"source": "quick live run" if quick else PurePath(ri_stored.STUDY.stored).name,
                                     "normalize": normalize, "reduction": reduction, "lr": lr, "seed": SETTINGS.seed,
                                     "table": ri_readings.curve_rows(runs)}


def _player_grid(data: dict):
    """The player's ``draw(normalize, reading)`` (one KL axis for every frame), normalisations and readings."""
    return random_init_figures.study_frame_grid(data, seed=SETTINGS.seed,
                                                kl_limits=ri_readings.kl_limits(data, seed=SETTINGS.seed))


def study_player(live: bool = False):
    """The player of the HTML book over the stored curves of every normalisation and reading (seed 0): its stored
    frames (:data:`PLAYER_FRAMES`, nothing drawn), or (``live``) drawn again from the stored study."""
    if not check_bool("live", live):
        return load_frames(data_path(PLAYER_FRAMES))
    draw, norms, readings = _player_grid(study())
    return scrub_grid(draw, norms, readings, labels=("normalize", "loss, step"), name="walks-random-init-sweep",
                      fmt=("{}", "{}"), alt=random_init_figures.STUDY_FRAME_ALT)


@register("walks-random-init-sweep-frames", "Random init player (frames): stored curves of p = 0.5 and 1 (seed 0) for "
                                            "every normalisation and reading of the sweep")
def study_frames(quick: bool = False):
    """The numbers behind every frame of :func:`study_player`."""
    draw, norms, readings = _player_grid(study(quick))
    return None, frame_numbers(draw, norms, readings, labels=("normalize", "loss, step"), fmt=("{}", "{}"))


def equivalence() -> float:
    """The largest ``|V|`` difference after ``equivalence_steps`` between the summed loss with ``eta`` and the mean
    loss with ``1000 eta`` (``p = 1/2``; 0 up to round-off)."""
    return ri_runs.reading_difference(SETTINGS.equivalence_readings, p=0.5, steps=SETTINGS.equivalence_steps,
                                      record_every=SETTINGS.equivalence_record_every)


def lock_rows() -> list[dict]:
    """The ``p = 1/2`` runs of ``lock_reading`` by seed: the largest final attention weight, its position (1-based),
    its lag ``N - position`` and the final optimal fraction."""
    normalize, reduction, lr = SETTINGS.lock_reading
    return ri_readings.lock_rows(study(), normalize=normalize, reduction=reduction, lr=lr)


#: How a verdict row names each normalisation of the study.
NORMALIZE_NAMES = {"none": "nothing normalised", "keys": "keys normalised", "keys_and_query": "keys and query normalised"}


@functools.lru_cache(maxsize=1)
def initial_attention_rows() -> list[dict]:
    """Per normalisation, the attention at step 0 of the stored runs (the study ``walks-initial-attention``, 2 walks
    x 20 seeds each): the largest attention weight (mean over runs of the test-walk mean; largest over runs and
    walks), the entropy relative to ``log N`` (mean; smallest), the logits' spread over the positions (mean; largest),
    ``1/N``, and whether the start is inside the small-initialisation regime of Section 5.2 (``small_init``: the
    largest spread below ``regime_spread``) with a label for the table."""
    summary = registry.load(initial_attention.STUDY.name)["summary"]
    return [{**r, "regime_spread": summary["regime_spread"], "label": (
        "inside the small-initialisation regime" if r["small_init"] else
        "OUTSIDE the small-initialisation regime of Section 5.2")} for r in summary["by_normalization"]]


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.walks_random_init.rows` of the stored study and of the
    stored initial attention."""
    return verdicts.rows(SETTINGS, setting_rates=setting_rates(), initial_attention=initial_attention_rows(),
                         normalize_names=NORMALIZE_NAMES, closest=closest_reading(), table_variances=table_variances(),
                         learned_half=learned_half_rates(), seeds=ordering_counts()["seeds"])
