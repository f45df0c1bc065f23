"""Chapter "Theorem 4.1: a deterministic walk is not learned" (``book/walks/theorem41.ipynb``).

The token average of a deterministic walk with ``N = rK + 1``, Lemma D.1, the symmetric state under three losses
and four step-size schedules (exact), the paper's Figures 5 and 9 in three versions, which reconstructed choices
decide Figures 4 and 5 (:mod:`onelayer.studies.walks.sensitivity`; over many training samples from the stored study
:mod:`onelayer.studies.walks.seed_rates`), and how round-off, a seeded Gram error or a
perturbation of ``q`` leaves the symmetric state (:mod:`onelayer.studies.walks.theorem41`). The sensitivity rows, the
symmetry table, the perturbation escape and Figure 9 are stored (:mod:`onelayer.studies.walks.t41_sensitivity`,
:mod:`~onelayer.studies.walks.t41_exact_runs`, :mod:`~onelayer.studies.walks.t41_fig9`); Figure 5 and the round-off
runs stay live, the player around the escape shows stored frames (:data:`PLAYER_FRAMES`). Every figure and table of the chapter is a registered function here; the runs several cells share are
cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...paths import data_path
from ...registry import register
from ...scrubber import frame_numbers, load_frames, scrub
from ...studies import registry
from ...studies.walks import (experiment, gram_errors, seed_rates, sensitivity as sens, t41_exact_runs, t41_fig9,
                               t41_sensitivity, theorem41)
from ...figures import walks as figures
from ...verdicts import walks_theorem41 as verdicts
from ...walks import theory
from ...validation import check_bool

__all__ = ["Settings", "SETTINGS", "PLAYER_FRAMES", "token_averages", "lemma_d1", "exact_runs_study", "symmetry_rows", "symmetry_table", "fig5_runs",
           "fig5", "fig5_sin_positions", "escape_player", "escape_frames", "sensitivity_study", "sensitivity_rows", "sensitivity_exact_rows",
           "sensitivity", "seed_study", "figure45_rate_rows", "figure45_rates", "gram_error_study", "gram_error_rate_rows",
           "figure45_gram_errors", "gram_error_verdict", "roundoff_machine", "roundoff_escape", "perturbation_escape", "fig9_runs", "fig9", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """What the chapter runs: ``p = 1``, ``N = rK + 1``, ``M = 1000``, ``eta = 1``, ``epsilon = 0.1`` (the paper's
    Figure 5 [paper]; defaults of :func:`onelayer.studies.walks.theorem41.deterministic_setup`)."""

    #: Figure 5: K = 6, r = 16 (N = 97) [paper]; Figure 9: K = 20, r = 5 (N = 101) [paper]
    K: int = 6
    r: int = 16
    fig9_K: int = 20
    fig9_r: int = 5
    #: lengths that are not rK + 1, for the token-average check [ours]
    other_Ns: tuple[int, ...] = (98, 100)
    #: Lemma D.1: losses, step size, epsilon [paper]
    lemma_d1_losses: tuple[str, ...] = ("log", "squared", "cross_entropy")
    eta: float = 1.0
    epsilon: float = 0.1
    #: GD steps: the symmetric-state table (quick 10), Figures 5 and 9 (quick 20) [paper: 50], the escape runs
    #: (quick 20; the machine's own round-off: quick 10) [ours]
    symmetry_steps: int = 100
    quick_symmetry_steps: int = 10
    deterministic_steps: int = 50
    quick_deterministic_steps: int = 20
    escape_steps: int = 40
    quick_escape_steps: int = 20
    quick_machine_steps: int = 10
    #: steps the Figure 5 and 9 printouts list [ours]
    fig5_shown_steps: tuple[int, ...] = (0, 10, 15, 20, 50)
    fig9_shown_steps: tuple[int, ...] = (0, 10, 20, 50)
    #: sizes of the deliberate perturbation of q (quick: every second one) [ours]
    perturbations: tuple[float, ...] = (1e-15, 1e-12, 1e-9, 1e-6, 1e-3)
    #: squared norms of the positional vectors in the sensitivity tables (M/2 is our [guess]); quick: three of them
    sensitivity_norms: tuple = ("1", 40.0, "M/8", "M/4", "M/2", "M", "2M")
    quick_sensitivity_norms: tuple = ("1", 40.0, "M/2")
    exact_norms: tuple[str, ...] = ("M/16", "M/2")
    quick_sensitivity_steps: int = 20
    quick_sensitivity_walks: int = 200
    #: the player around the escape of the sinusoidal run, and its resolution [ours]
    escape_shown_steps: tuple[int, ...] = (0, 2, 4, 6, 8, 9, 10, 11, 12, 13, 14, 16, 20, 30, 50)


SETTINGS = Settings()
#: The player's rendered frames in the data directory (``python -m tools.player_frames walks-t41-escape-frames``).
PLAYER_FRAMES = "walks/frames/theorem41_escape.json"

#: The paper's recipe with sinusoidal positions is run with a seeded Gram error (theorem41.GRAM_ERROR) that
#: dominates their round-off, so that its escape from the symmetric state is the same on every machine.
SIN = "1000 walks, sin positions + Gram error 1e-9"
POPULATION = "population, exact positions"
RECIPES = {
    POPULATION: dict(train="population", positions="exact"),
    "1000 walks, exact positions": dict(train="sample", positions="exact"),
    SIN: dict(train="sample", positions="sin", gram_error=theorem41.GRAM_ERROR),
}


def token_averages() -> list[dict]:
    """:func:`onelayer.studies.walks.theorem41.token_averages` of the exact ``p = 1`` population at ``N = rK + 1``
    and at ``other_Ns``."""
    return theorem41.token_averages(SETTINGS.K, SETTINGS.r, SETTINGS.other_Ns)


@register("walks-lemma-d1", "Theorem 4.1 (table): V after one step at p=1, N=97, exact population, against Lemma D.1 (three losses)")
def lemma_d1(quick: bool = False):
    """The entries of ``V(1)`` (smallest, largest) for each loss against the closed form of Lemma D.1."""
    s, rows = SETTINGS, []
    N = s.r * s.K + 1
    for loss in s.lemma_d1_losses:
        exp = theorem41.deterministic_setup(s.K, s.r, loss=loss)
        V1 = exp.model.train(exp.model.init(), exp.train, steps=1, lr=s.eta).params["V"]
        rows.append({"loss": loss, "V1_min": float(V1.min()), "V1_max": float(V1.max()),
                     "lemma_d1": theory.lemma_d1_entry(s.K, N, s.eta, loss, s.epsilon)})
    return None, {"K": s.K, "N": N, "eta": s.eta, "epsilon": s.epsilon, "table": rows}


@lru_cache(maxsize=None)
def _symmetry(steps: int) -> tuple:
    return tuple(theorem41.symmetry_table(steps=steps))


@lru_cache(maxsize=None)
def exact_runs_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.t41_exact_runs` (``python -m onelayer study walks-t41-exact-runs``):
    the symmetry table and the perturbation escape on the exact population; cached. ``ValueError`` when it was run
    with other settings than the chapter's."""
    data, s = t41_exact_runs.load(), SETTINGS
    expected = t41_exact_runs.Settings(losses=s.lemma_d1_losses, symmetry_steps=s.symmetry_steps,
                                       perturbations=s.perturbations, perturbation_steps=s.escape_steps)
    registry.require_settings(t41_exact_runs.STUDY.name, data["settings"], expected)
    return data


def symmetry_rows(quick: bool = False) -> list[dict]:
    """:func:`onelayer.studies.walks.theorem41.symmetry_table` (3 losses x 4 schedules on the exact population), stored
    in :func:`exact_runs_study` (quick mode: live, 10 steps)."""
    return list(_symmetry(SETTINGS.quick_symmetry_steps) if quick else exact_runs_study()["symmetry"])


@register("walks-symmetry-table", "Theorem 4.1 (table): the symmetric state under GD for three losses and four step-size schedules")
def symmetry_table(quick: bool = False):
    """The worst deviation from the symmetric state over all steps, per loss and schedule."""
    steps = SETTINGS.quick_symmetry_steps if quick else SETTINGS.symmetry_steps
    return None, {"K": SETTINGS.K, "N": SETTINGS.r * SETTINGS.K + 1, "steps": steps, "table": symmetry_rows(quick)}


# -- Figures 5 and 9 ---------------------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _deterministic_runs(K: int, r: int, names: tuple, steps: int) -> dict:
    runs = {}
    for name in names:
        exp = theorem41.deterministic_setup(K, r, **RECIPES[name])
        runs[name] = (exp, experiment.run(exp, steps=steps))
    return runs


def fig5_runs(quick: bool = False) -> dict:
    """``{recipe: (experiment, history)}`` of the three Figure 5 recipes (:data:`RECIPES`); cached, shared by the
    figures and the player."""
    steps = SETTINGS.quick_deterministic_steps if quick else SETTINGS.deterministic_steps
    return dict(_deterministic_runs(SETTINGS.K, SETTINGS.r, tuple(RECIPES), steps))


def _figure(runs: dict, shown: str, title: str):
    exp, hist = runs[shown]
    numbers = experiment.training_numbers(hist, exp)
    numbers["runs"] = {name: {"test_accuracy": h["test_accuracy"], "final_V_spread": float(h.final("V").max() - h.final("V").min())}
                       for name, (e, h) in runs.items()}
    return figures.training_figure(hist, exp, title=title), numbers


@register("walks-fig5", "Theorem 4.1: p=1, K=6, N=97, exact population and positions: GD stays symmetric (paper's Figure 5)")
def fig5(quick: bool = False):
    """Figure 5 in the theorem's setting (exact population and positions), with the numbers of all three recipes."""
    return _figure(fig5_runs(quick), POPULATION, "p=1, exact population and exact positions: the theorem's setting")


@register("walks-fig5-sin-positions", "Theorem 4.1: p=1, K=6, N=97, 1000 walks (one seed), sinusoidal positions with a "
                                     "seeded Gram error of 1e-9 in place of round-off: the symmetry is escaped")
def fig5_sin_positions(quick: bool = False):
    """Figure 5 with the paper's recipe (1000 walks, sinusoidal positions plus the seeded Gram error)."""
    runs = fig5_runs(quick)
    return _figure({SIN: runs[SIN]}, SIN, "p=1, 1000 walks, sinusoidal positions + seeded Gram error 1e-9 (float64)")


def _escape_steps(quick: bool = False) -> list[int]:
    steps = SETTINGS.quick_deterministic_steps if quick else SETTINGS.deterministic_steps
    return [t for t in SETTINGS.escape_shown_steps if t <= steps]


def _draw_escape(step: int, quick: bool = False):
    exp, hist = fig5_runs(quick)[SIN]
    return figures.training_frame(hist, exp, step, _escape_steps(quick))


def escape_player(live: bool = False):
    """The player over the GD steps of the sinusoidal Figure 5 run around its escape from the symmetric state: its
    stored frames (:data:`PLAYER_FRAMES`, nothing drawn), or (``live``) drawn again from the run."""
    if not check_bool("live", live):
        return load_frames(data_path(PLAYER_FRAMES))
    return scrub(_draw_escape, list(SETTINGS.escape_shown_steps), label="GD step", name="walks-t41-escape", fmt="{:d}",
                 alt="p = 1, K = 6, N = 97, sinusoidal positions with a seeded Gram error of 1e-9: accuracy over 50 GD "
                     "steps, and V and the test-mean attention over positions at GD step {value}")


@register("walks-t41-escape-frames", "Theorem 4.1 player (frames): accuracy, V and attention around the escape from "
                                     "the symmetric state (p=1, one seed, sin positions, seeded Gram error 1e-9)")
def escape_frames(quick: bool = False):
    """The numbers behind every frame of :func:`escape_player`."""
    return None, frame_numbers(lambda step: _draw_escape(step, quick), _escape_steps(quick), labels="GD step", fmt="{:d}")


def fig9_runs(quick: bool = False) -> dict:
    """``{recipe: (experiment, history)}`` of the Figure 9 runs (``K = 20``, ``N = 101``): the theorem's setting and
    the sinusoidal recipe, stored (quick mode: live, 20 steps); cached."""
    if quick:
        return dict(_deterministic_runs(SETTINGS.fig9_K, SETTINGS.fig9_r, (POPULATION, SIN), SETTINGS.quick_deterministic_steps))
    return dict(_stored_fig9_runs())


@lru_cache(maxsize=None)
def _stored_fig9_runs() -> dict:
    """The Figure 9 runs of the stored study :mod:`onelayer.studies.walks.t41_fig9` (``python -m onelayer study
    walks-t41-fig9``), each with its experiment rebuilt; ``ValueError`` when it holds other settings or recipes."""
    s, keys = SETTINGS, {POPULATION: "population", SIN: "sin"}
    data = t41_fig9.load()
    expected = t41_fig9.Settings(K=s.fig9_K, r=s.fig9_r, steps=s.deterministic_steps)
    registry.require_settings(t41_fig9.STUDY.name, (data["settings"], {name: t41_fig9.RECIPES[key] for name, key in keys.items()}),
                              (expected, {name: RECIPES[name] for name in keys}))
    return {name: (theorem41.deterministic_setup(s.fig9_K, s.fig9_r, **RECIPES[name]), data["runs"][key])
            for name, key in keys.items()}


@register("walks-fig9", "Theorem 4.1: p=1, K=20, N=101, exact population and positions (paper's Figure 9)")
def fig9(quick: bool = False):
    """Figure 9 in the theorem's setting, with the numbers of the sinusoidal recipe too."""
    return _figure(fig9_runs(quick), POPULATION, "K=20, N=101, p=1, exact population and positions (paper's Figure 9)")


# -- which reconstructed choices decide Figures 4 and 5 ------------------------------------------------------------------

@lru_cache(maxsize=None)
def _sensitivity(dtype: str, quick: bool) -> tuple:
    s = SETTINGS
    if quick:
        return tuple(sens.figure45_table(norms=s.quick_sensitivity_norms, dtypes=(dtype,), steps=s.quick_sensitivity_steps,
                                         n_train=s.quick_sensitivity_walks, n_test=s.quick_sensitivity_walks))
    return tuple(sensitivity_study()["sin"][dtype])


@lru_cache(maxsize=None)
def sensitivity_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.t41_sensitivity` (``python -m onelayer study walks-t41-sensitivity``):
    the rows of :func:`onelayer.studies.walks.sensitivity.figure45_row` on one training sample; cached. ``ValueError``
    when it was run with other norms than the chapter's."""
    data, s = t41_sensitivity.load(), SETTINGS
    registry.require_settings(t41_sensitivity.STUDY.name, data["settings"],
                              t41_sensitivity.Settings(norms=s.sensitivity_norms, exact_norms=s.exact_norms))
    return data


def sensitivity_rows(dtype: str = "float64", quick: bool = False) -> list[dict]:
    """:func:`onelayer.studies.walks.sensitivity.figure45_table` over ``sensitivity_norms`` (sinusoidal positions with the
    seeded Gram error) in one precision, stored in :func:`sensitivity_study` (quick mode: live, three norms, short runs).
    Float32 rows are the round-off of the machine that ran the study."""
    return list(_sensitivity(dtype, quick))


def sensitivity_exact_rows() -> list[dict]:
    """The same with exactly orthogonal positions and no Gram error, float64 and float32 (stored)."""
    return list(sensitivity_study()["exact"])


@register("walks-sensitivity", "Theorem 4.1: Figure 4's parent attention and Figure 5's escape step against ||p_i||^2, "
                            "float64 and float32, one training sample (seed 0)")
def sensitivity(quick: bool = False):
    """The sensitivity figure over the float64 and float32 rows (quick mode: three norms, float64 only)."""
    rows = sensitivity_rows("float64", quick) + ([] if quick else sensitivity_rows("float32"))
    return figures.figure45_figure(rows), {"table": [{k: (str(v) if k == "norm" else v) for k, v in r.items()} for r in rows]}


# -- over many training samples (the stored study) ----------------------------------------------------------------------

@lru_cache(maxsize=None)
def seed_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.seed_rates` (``python -m onelayer study walks-seed-rates``) in its
    first layout (:func:`onelayer.studies.walks.seed_rates.payload`); cached."""
    return seed_rates.payload(registry.load(seed_rates.STUDY.name))


def figure45_rate_rows(rows: list[dict] | None = None) -> list[dict]:
    """:func:`onelayer.studies.walks.sensitivity.figure45_rates` of the stored Figure 4/5 runs (40 training samples per
    positional reading and squared norm; float64, 50 steps), sinusoidal reading first."""
    return sens.figure45_rates(seed_study()["figure45"] if rows is None else rows)


#: The columns of the rates table as the chapter prints them.
RATE_COLUMNS = ("positions", "norm", "samples", "fig4", "fig5", "both")


@register("walks-figure45-rates", "Theorem 4.1 (table): share of 40 training samples that reproduce Figure 4, "
                                  "Figure 5 and both, per positional reading and ||p_i||^2, with 95% intervals")
def figure45_rates(quick: bool = False):
    """The table of :func:`figure45_rate_rows` (quick mode reads the same stored file)."""
    table = [{k: (str(r[k]) if k == "norm" else r[k]) for k in RATE_COLUMNS} for r in figure45_rate_rows()]
    return None, {"source": seed_rates.STUDY.stored, "table": table}


@lru_cache(maxsize=None)
def gram_error_study() -> dict:
    """The stored study :mod:`onelayer.studies.walks.gram_errors` (``python -m onelayer study walks-figure45-gram-errors``)
    in its first layout (:func:`onelayer.studies.walks.gram_errors.payload`); cached."""
    return gram_errors.payload(registry.load(gram_errors.STUDY.name))


def gram_error_rate_rows(rows: list[dict] | None = None) -> list[dict]:
    """:func:`onelayer.studies.walks.sensitivity.figure45_rates` over the seeded Gram error's size: the stored error study
    plus the exactly orthogonal runs without error of the seed study (error 0), sinusoidal positions first."""
    if rows is None:
        rows = gram_error_study()["rows"] + [r for r in seed_study()["figure45"] if r["relative_gram_error"] == 0.0]
    return sens.figure45_rates(rows)


@register("walks-figure45-gram-errors", "Theorem 4.1: share of 40 training samples that reproduce Figure 5 and "
                                        "both figures against the size of the seeded Gram error, one line per "
                                        "squared norm of the exactly orthogonal positions, with 95% intervals")
def figure45_gram_errors(quick: bool = False):
    """(a) Figure 5 and (b) both figures against the relative Gram error (0 and the stored sizes), one line per
    squared norm, for exactly orthogonal positions; the numbers hold every reading's rates and whether the sinusoidal
    reading gives the same counts (quick mode reads the same stored files)."""
    rates = gram_error_rate_rows()
    fig = figures.gram_error_figure([r for r in rates if r["positions"] == "exact"], verdicts.norm_name)
    table = [{"positions": r["positions"], "gram_error": verdicts.error_name(r["gram_error"]), "norm": str(r["norm"]),
              "fig4": r["fig4"], "fig5": r["fig5"], "both": r["both"]} for r in rates]
    return fig, {"sources": [gram_errors.STUDY.stored, seed_rates.STUDY.stored], "same_counts_both_readings": verdicts.same_counts(rates),
                 "table": table}


# -- round-off and perturbations -----------------------------------------------------------------------------------------

@register("walks-roundoff-machine", "Theorem 4.1: logit spread at p=1 with round-off alone (one training sample; sin and exact positions, "
                                   "float64 and float32); "
                                   "the machine's own rounding")
def roundoff_machine(quick: bool = False):
    """Escape runs with round-off alone (sinusoidal and exact positions, float64 and float32): the machine's own."""
    s = SETTINGS
    steps = s.quick_machine_steps if quick else s.escape_steps
    escape = {}
    for dtype in ("float64", "float32"):
        for positions in ("sin", "exact"):
            e = theorem41.deterministic_setup(s.K, s.r, train="sample", positions=positions, dtype=dtype)
            escape[f"{positions}, {dtype}"] = theorem41.escape_run(e, steps=steps)
    return figures.escape_figure(escape), {"steps": steps, "table": theorem41.escape_rows(escape, spread=True)}


@register("walks-roundoff-escape", "Theorem 4.1: logit spread and accuracy at p=1 (one training sample) when a seeded Gram error of the "
                                  "exact positions (1e-9, 1e-5) stands in for float64/float32 round-off")
def roundoff_escape(quick: bool = False):
    """Escape runs on exact positions with a seeded Gram error of each size in ``GRAM_ERROR_SIZES``."""
    steps = SETTINGS.quick_escape_steps if quick else SETTINGS.escape_steps
    escape = theorem41.gram_error_escape(theorem41.GRAM_ERROR_SIZES, steps=steps)
    return figures.escape_figure(escape), {"steps": steps, "gram_errors": list(theorem41.GRAM_ERROR_SIZES),
                                           "table": theorem41.escape_rows(escape)}


@register("walks-perturbation-escape", "Theorem 4.1: escape step of the symmetric state against the size of a perturbation of q")
def perturbation_escape(quick: bool = False):
    """Escape step against the size ``delta`` of a perturbation of the initial ``q`` (theorem's setting), and the
    fitted steps per decade of ``delta``."""
    s = SETTINGS
    if quick:
        pert = theorem41.perturbation_escape(s.perturbations[::2], steps=s.quick_escape_steps)
    else:  # the stored study walks-t41-exact-runs
        pert = exact_runs_study()["perturbation"]
    slope = float(np.polyfit(np.log10(pert["delta"]), pert["escape_step"], 1)[0])
    rows = [{"delta": float(d), "initial_spread": float(s0), "escape_step": float(st), "final_accuracy": float(a)}
            for d, s0, st, a in zip(pert["delta"], pert["initial_spread"], pert["escape_step"], pert["final_accuracy"])]
    return figures.perturbation_figure(pert), {"steps_per_decade": -slope, "table": rows}


# -- verdicts -----------------------------------------------------------------------------------------------------------

def gram_error_verdict() -> dict:
    """:func:`onelayer.verdicts.walks_theorem41.gram_error` of :func:`gram_error_rate_rows` (the row the prose quotes)."""
    return verdicts.gram_error(gram_error_rate_rows())


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.walks_theorem41.rows` of the exact symmetric runs and of
    the rates over the stored training samples."""
    return verdicts.rows(SETTINGS, symmetry=symmetry_rows(), schedules=len(theorem41.SCHEDULES),
                         figure45_rates=figure45_rate_rows(),
                         samples=seed_study()["meta"]["settings"]["figure45_seeds"],
                         gram_error_rates=gram_error_rate_rows())
