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

from ...claims import exact_class, rated
from ...formatting import near_zero_text, number_text
from ...paths import data_path
from ...registry import register
from ...scrubber import frame_numbers, load_frames, scrub
from ...studies import registry
from ...studies.walks import (experiment, gram_errors, seed_rates, sensitivity as sens, t41_exact_runs, t41_fig9,
                               t41_sensitivity, theorem41)
from ...figures import walks as figures
from ...walks import theory
from ...walks.data import walk_population
from ...validation import check_bool

__all__ = ["Settings", "SETTINGS", "PLAYER_FRAMES", "token_averages", "lemma_d1", "exact_runs_study", "symmetry_rows", "symmetry_table", "fig5_runs",
           "fig5", "fig5_sin_positions", "escape_player", "escape_frames", "sensitivity_study", "sensitivity_rows", "sensitivity_exact_rows",
           "sensitivity", "seed_study", "figure45_rate_rows", "figure45_rates", "figure45_verdict", "gram_error_study", "gram_error_rate_rows",
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
    """The token average of every walk of the exact ``p = 1`` population: for ``N = rK + 1`` its largest distance to
    ``1/K`` (``max_dev``), for each of ``other_Ns`` the largest spread between walks (``spread``)."""
    s = SETTINGS
    N = s.r * s.K + 1
    pop = walk_population(s.K, 1.0, N)
    rows = [{"N": N, "walks": pop.B, "max_dev": float((pop.token_average() - 1 / s.K).abs().max())}]
    for n in s.other_Ns:
        avg = walk_population(s.K, 1.0, n).token_average()
        rows.append({"N": n, "walks": avg.shape[0], "spread": float((avg.max(0).values - avg.min(0).values).max())})
    return rows


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
    if data["settings"] != expected:
        raise ValueError(f"the stored study {t41_exact_runs.STUDY.name} was run with {data['settings']}, the chapter "
                         f"needs {expected}: run 'python -m onelayer study {t41_exact_runs.STUDY.name}'")
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
    V = np.stack([np.asarray(hist.at("V", t)) for t in _escape_steps(quick)])
    return figures.mark_player_frame(figures.training_figure(hist, exp, step=step), step, (float(V.min()), float(V.max())))


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
    if data["settings"] != expected or any(t41_fig9.RECIPES[key] != RECIPES[name] for name, key in keys.items()):
        raise ValueError(f"the stored study {t41_fig9.STUDY.name} was run with {data['settings']} and the recipes "
                         f"{t41_fig9.RECIPES}, the chapter needs {expected} and {RECIPES}: run "
                         f"'python -m onelayer study {t41_fig9.STUDY.name}'")
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
    stored = data["settings"]
    if stored != t41_sensitivity.Settings(norms=s.sensitivity_norms, exact_norms=s.exact_norms):
        raise ValueError(f"the stored study {t41_sensitivity.STUDY.name} was run with {stored}, the chapter needs the "
                         f"norms {s.sensitivity_norms} and {s.exact_norms} at the study's defaults: run "
                         f"'python -m onelayer study {t41_sensitivity.STUDY.name}'")
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


def _error_name(error: float) -> str:
    return "0" if error == 0 else _power(error)


def _error_tick(error: float) -> str:
    """``0``, ``10^-15`` or ``2*10^-12`` as a figure's tick label (mathtext)."""
    if error == 0:
        return "0"
    mantissa, exponent = f"{error:.0e}".split("e")
    return (f"${mantissa}\\cdot" if mantissa != "1" else "$") + f"10^{{{int(exponent)}}}$"


def _same_counts(rates: list[dict]) -> bool:
    """Whether both positional readings give the same counts at every (error, norm) they share."""
    by = {(r["positions"], r["gram_error"], str(r["norm"])): tuple(r[f"{k}_rate"].k for k in ("fig4", "fig5", "both"))
          for r in rates}
    shared = [(e, n) for (pos, e, n) in by if pos == "sin" and ("exact", e, n) in by]
    return bool(shared) and all(by[("sin", e, n)] == by[("exact", e, n)] for e, n in shared)


@register("walks-figure45-gram-errors", "Theorem 4.1: share of 40 training samples that reproduce Figure 5 and "
                                        "both figures against the size of the seeded Gram error, one line per "
                                        "squared norm of the exactly orthogonal positions, with 95% intervals")
def figure45_gram_errors(quick: bool = False):
    """(a) Figure 5 and (b) both figures against the relative Gram error (0 and the stored sizes), one line per
    squared norm, for exactly orthogonal positions; the numbers hold every reading's rates and whether the sinusoidal
    reading gives the same counts (quick mode reads the same stored files)."""
    rates = gram_error_rate_rows()
    exact = [r for r in rates if r["positions"] == "exact"]
    errors = sorted({r["gram_error"] for r in exact})
    series = {}
    for norm in dict.fromkeys(str(r["norm"]) for r in exact):  # in the rates' order: by squared norm
        sub = {r["gram_error"]: r for r in exact if str(r["norm"]) == norm}
        series[_norm_name(sub[errors[0]]["norm"]).split(" = ")[0]] = [sub[e] for e in errors]
    fig = figures.rate_by_level_figure([_error_tick(e) for e in errors], series,
                                       {"(a) Figure 5 reproduced": "fig5_rate", "(b) both figures": "both_rate"},
                                       xlabel="relative Gram error", legend_title="squared norm |p_i|^2")
    table = [{"positions": r["positions"], "gram_error": _error_name(r["gram_error"]), "norm": str(r["norm"]),
              "fig4": r["fig4"], "fig5": r["fig5"], "both": r["both"]} for r in rates]
    return fig, {"sources": [gram_errors.STUDY.stored, seed_rates.STUDY.stored], "same_counts_both_readings": _same_counts(rates),
                 "table": table}


# -- round-off and perturbations -----------------------------------------------------------------------------------------

def _escape_rows(escape: dict, *, spread: bool = False) -> list[dict]:
    rows = []
    for name, h in escape.items():
        summary = theorem41.escape_summary(h)
        rows.append({"run": name, "escape_step": summary["escape_step"], "final_test_accuracy": summary["test_accuracy"],
                     "final_class_mass": summary["class_mass"], "final_top_attention": summary["top_attention"],
                     **({"max_logit_spread": float(np.max(h["logit_spread"]))} if spread else {})})
    return rows


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
    return figures.escape_figure(escape), {"steps": steps, "table": _escape_rows(escape, spread=True)}


@register("walks-roundoff-escape", "Theorem 4.1: logit spread and accuracy at p=1 (one training sample) when a seeded Gram error of the "
                                  "exact positions (1e-9, 1e-5) stands in for float64/float32 round-off")
def roundoff_escape(quick: bool = False):
    """Escape runs on exact positions with a seeded Gram error of each size in ``GRAM_ERROR_SIZES``."""
    steps = SETTINGS.quick_escape_steps if quick else SETTINGS.escape_steps
    escape = theorem41.gram_error_escape(theorem41.GRAM_ERROR_SIZES, steps=steps)
    return figures.escape_figure(escape), {"steps": steps, "gram_errors": list(theorem41.GRAM_ERROR_SIZES),
                                           "table": _escape_rows(escape)}


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

def _power(x: float) -> str:
    """``2*10^-12`` for ``2e-12``: a setting, written so that it does not read as a round-off digit."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}*10^{int(exponent)}"


def _norm_name(norm) -> str:
    return f"{norm:g}" if isinstance(norm, float) else f"{norm} = {number_text(_NORM2[norm], 3)}"


_NORM2 = {"M/16": 62.5, "M/8": 125.0, "M/4": 250.0, "M/2": 500.0, "M": 1000.0}

#: What each positional reading of the seed study is, as the verdict rows name it.
READING_NAMES = {"sin": ("sinusoidal positions rescaled to |p_i|^2, with the seeded relative Gram error "
                         f"{_power(sens.RELATIVE_GRAM_ERROR)} standing in for round-off [ours]"),
                 "exact": "exactly orthogonal positions rescaled to |p_i|^2, no Gram error [ours]"}


def figure45_verdict(reading: str, rates: list[dict] | None = None) -> dict:
    """The verdict row on Figures 4 and 5 together under one positional reading, from the rates over training
    samples (:func:`figure45_rate_rows`): "holds" at a norm only where the interval of the share of samples that
    reproduce both lies above 1/2."""
    rates = [r for r in (figure45_rate_rows() if rates is None else rates) if r["positions"] == reading]
    if not rates:
        raise ValueError(f"no rates for the reading {reading!r}")
    names = [_norm_name(r["norm"]) for r in rates]
    most = [n for n, r in zip(names, rates) if r["both_rate"].low > 0.5]
    few = [n for n, r in zip(names, rates) if r["both_rate"].high < 0.5]
    fig5_all = all(r["fig5_rate"].low > 0.5 for r in rates)
    best = max(zip(names, rates), key=lambda nr: nr[1]["both_rate"].k)
    if len(most) == len(rates):
        verdict = "holds at every norm tried"
    elif most:
        verdict = (f"depends on the norm: both in most samples only at |p|^2 in {{{', '.join(most)}}}; "
                   + ("Figure 5 holds at every norm, Figure 4 needs a large enough norm" if fig5_all else
                      "elsewhere one of the two fails"))
    elif len(few) == len(rates):
        verdict = (f"fails: at every norm tried most samples miss one figure (best |p|^2 = {best[0]}: both in "
                   f"{best[1]['both']})")
    else:
        verdict = "undecided: no norm where most samples reproduce both, but not every interval excludes 1/2"
    s = seed_study()["meta"]["settings"]
    return {
        "claim": "Figures 4 and 5 together (zero init, 50 steps: p=1/2 learned, p=1 stays at 1/6)", "source": "[paper]",
        "reading": READING_NAMES[reading] + ("; Figure 4 reproduced: every test prediction optimal at step 50 with "
                                             "attention >= 0.99 on the parent; Figure 5: logit spread < 0.1 and "
                                             "accuracy < 1/K + 0.05 for 50 steps [ours]"),
        "settings": (f"K=6, N=97, M=1000, 1000 training and 1000 test walks per sample, float64, "
                     f"{s['figure45_seeds']} training samples (data seeds) per norm, |p_i|^2 in "
                     f"{{{', '.join(names)}}} (our guess M/2)"),
        "measurement": "; ".join(f"|p|^2={n}: Fig. 4 {r['fig4']}, Fig. 5 {r['fig5']}, both {r['both']}"
                                 for n, r in zip(names, rates)),
        "verdict": verdict,
        **rated({f"Figures 4 and 5, |p|^2={n}": r["both_rate"] for n, r in zip(names, rates)}),
        "chapter": "theorem41",
    }


def gram_error_verdict(rates: list[dict] | None = None) -> dict:
    """The verdict row on Figures 4 and 5 together against the size of the seeded Gram error, from
    :func:`gram_error_rate_rows`: an error size reproduces both where the interval of the share of samples that
    reproduce both lies above 1/2 at some norm."""
    rates = gram_error_rate_rows() if rates is None else rates
    exact = [r for r in rates if r["positions"] == "exact"]
    if not exact:
        raise ValueError("rates must hold rows of exactly orthogonal positions")
    errors = sorted({r["gram_error"] for r in exact})
    parts, good = [], []
    for e in errors:
        sub = [r for r in exact if r["gram_error"] == e]
        most = [_norm_name(r["norm"]) for r in sub if r["both_rate"].low > 0.5]
        best = max(sub, key=lambda r: r["both_rate"].k)
        no5 = [_norm_name(r["norm"]) for r in sub if r["fig5_rate"].high < 0.5]
        good += [e] if most else []
        parts.append(f"error {_error_name(e)}: both " + (f"in most samples at |p|^2 in {{{', '.join(most)}}}" if most else
                     f"at best in {best['both']} (|p|^2 = {_norm_name(best['norm'])})")
                     + (f", Figure 5 in a minority at |p|^2 in {{{', '.join(no5)}}}" if no5 else ", Figure 5 at every norm"))
    if len(good) == len(errors):
        verdict = "holds at every error size tried"
    elif good:
        verdict = (f"depends on the error: both figures in most samples only at error {', '.join(map(_error_name, good))}; "
                   f"from {_error_name(min(e for e in errors if e not in good))} on Figure 5 fails at the norms where "
                   "Figure 4 holds")
    else:
        verdict = "fails at every error size tried"
    same = _same_counts(rates)
    samples = sorted({r["samples"] for r in rates})
    return {
        "claim": "Figures 4 and 5 together (zero init, 50 steps: p=1/2 learned, p=1 stays at 1/6)", "source": "[paper]",
        "reading": ("the size of the seeded relative Gram error that stands in for round-off [ours], exactly orthogonal "
                    "positions (sinusoidal ones give " + ("the same counts" if same else "other counts") +
                    " at every error size and norm both were run at); criteria as in the rows above [ours]"),
        "settings": (f"K=6, N=97, M=1000, 1000 training and 1000 test walks per sample, float64, "
                     f"{'/'.join(map(str, samples))} training samples (data seeds) per cell, errors "
                     f"{', '.join(map(_error_name, errors))}, |p_i|^2 in "
                     f"{{{', '.join(dict.fromkeys(_norm_name(r['norm']) for r in exact))}}}"),
        "measurement": "; ".join(parts),
        "verdict": verdict,
        **rated({f"Figures 4 and 5, error {_error_name(r['gram_error'])}, |p|^2={_norm_name(r['norm'])}": r["both_rate"]
                 for r in exact}),
        "chapter": "theorem41",
    }


def verdict_rows() -> list[dict]:
    """The chapter's verdicts: the exact symmetric state (Theorem 4.1), and Figures 4 and 5 together, one row per
    positional reading, as rates over training samples."""
    s, rows = SETTINGS, []
    sym = symmetry_rows()
    lo, hi = number_text(min(r["min_accuracy"] for r in sym), 3), number_text(max(r["max_accuracy"] for r in sym), 3)
    acc = lo if lo == hi else f"from {lo} to {hi}"
    spread = max(r["max_logit_spread"] for r in sym)
    exact = spread < 1e-12 and abs(min(r["min_accuracy"] for r in sym) - 1 / s.K) < 1e-12 \
        and abs(max(r["max_accuracy"] for r in sym) - 1 / s.K) < 1e-12  # tol: round-off of weighted sums
    rows.append({
        "claim": "Theorem 4.1: for p=1, N=rK+1, any loss and step size, attention stays uniform, V ~ 11^T, accuracy 1/K",
        "source": "[paper]", "reading": "the paper's model in exact symmetry (exactly orthogonal positions) [ours]",
        "settings": (f"exact population (deterministic: no sampling, so no interval), exactly orthogonal positions, "
                     f"K=6, N=97, {len(s.lemma_d1_losses)} losses x "
                     f"{len(theorem41.SCHEDULES)} step-size schedules, {s.symmetry_steps} steps"),
        "measurement": (f"largest real-token logit spread {near_zero_text(spread)}; "
                        f"accuracy at every step {acc} (1/K = {number_text(1 / s.K, 3)})"),
        "verdict": "holds exactly" if exact else "fails",
        "class": exact_class(bool(exact)),
        "chapter": "theorem41",
    })
    for reading in ("sin", "exact"):
        rows.append(figure45_verdict(reading))
    rows.append(gram_error_verdict())
    return rows
