"""Chapter "Theorem 3: gradient descent finds it" (``book/trees/backward_training.ipynb``): mini-batch SGD against
exact population gradient descent in the two scalars ``(h1, h2)``, the phases of the dynamics and the late-time rate.

Every figure of the chapter is a registered function here (the notebook and ``python -m onelayer make`` call the
same one). The SGD run, the population run beside it, the long population run of the phase figure (which the
step-size comparison reuses at step size 1) and the step-size runs are the stored study ``trees-backward-training-runs``
(:mod:`onelayer.studies.trees.backward_training_runs`), read once however many cells, figures and verdicts read them.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, fields, replace

import numpy as np

from ... import store
from ...formatting import mean_text  # the chapter prints intervals with it
from ...plots import FONT_SIZE, mark_steps, new_figure, plot_curves
from ...registry import register
from ...rates import mean_interval, rate
from ...trees.backward import dynamics
from ...studies import registry as studies
from ...studies.trees import analysis, stored_study
from ...studies.trees import backward_training_runs as runs_study
from ...studies.trees import backward_seeds as seed_study
from ...validation import check_bool
from ...verdicts import trees_backward_training as verdicts

__all__ = ["Settings", "SETTINGS", "sgd_run", "population_run", "sgd_vs_population", "h_entries", "phase_run",
           "phase_events", "phases", "rate_runs", "rate_summary", "loss_rate", "seed_summary", "verdict_rows"]


@dataclass(frozen=True)
class Settings:
    """Theorem 3.

    ``S = 31``, ``m = 4``, ``lr = 1``, ``batch_size = 256`` [summary]; 1,500 SGD steps, the longer population runs
    (3,000 steps), the step-size comparison ``rate_runs`` (step size -> steps), the recording interval, the window of
    the late residual and the seeds [guess].
    """

    S: int = 31
    m: int = 4
    steps: int = 1500
    lr: float = 1.0
    batch_size: int = 256
    seed: int = 0
    record_every: int = 10
    eval_seed: int = 5  #: the fixed batch on which H is recorded
    late_from: int = 500  #: the SGD residual is reported from this step on
    phase_steps: int = 3000  #: population run of the phase figure
    rate_runs: tuple[tuple[float, int], ...] = ((1.0, 3000), (8.0, 3000), (128.0, 4000))
    #: the SGD seeds of the stored study (:mod:`onelayer.studies.trees.backward_seeds`, one-hot family): a run "reaches a
    #: small loss" when its batch loss at the last step is below this (about 2% of the initial 0.95; population GD
    #: is at 0.0135 at step 1,500) [guess]
    loss_threshold: float = 0.02


SETTINGS = Settings()

_RUNS: dict[tuple, object] = {}


def _settings(quick: bool) -> Settings:
    """The chapter's settings; ``quick``: 100 SGD steps, a 300-step phase run, a tenth of each step-size run."""
    if check_bool("quick", quick):
        return replace(SETTINGS, steps=100, phase_steps=300,
                       rate_runs=tuple((lr, steps // 10) for lr, steps in SETTINGS.rate_runs))
    return SETTINGS


def _run_settings(quick: bool) -> runs_study.Settings:
    """The settings of the chapter's runs (:mod:`onelayer.studies.trees.backward_training_runs`)."""
    s = _settings(quick)
    return runs_study.Settings(**{f.name: getattr(s, f.name) for f in fields(runs_study.Settings)})


@functools.lru_cache(maxsize=1)
def _stored_runs() -> dict:
    """key -> History of every member of the stored study ``trees-backward-training-runs``, refused if it was made
    with other settings than the chapter's."""
    data = studies.load(runs_study.STUDY.name)
    if data["settings"] != store.to_jsonable(asdict(_run_settings(False))):
        raise ValueError(f"the stored study {runs_study.STUDY.name} has other settings than the chapter's; run "
                         f"python -m onelayer study {runs_study.STUDY.name}")
    return {m["key"]: stored_study.history(m["result"]) for m in data["members"]}


def sgd_run(quick: bool = False, *, progress: bool = False):
    """Mini-batch SGD from ``B = 0`` (one-hot embeddings, a fresh batch every step, one seed), recording the
    :func:`~onelayer.studies.trees.analysis.h_stats` of ``H`` and the attention on the correct edge on a fixed batch:
    the stored run (member ``sgd`` of ``trees-backward-training-runs``), or (``quick``) trained here once
    (``progress``: a progress bar while it trains)."""
    key = ("sgd", check_bool("quick", quick))
    if key not in _RUNS:
        _RUNS[key] = runs_study.sgd_run(_run_settings(True), progress=progress) if quick else _stored_runs()["sgd"]
    return _RUNS[key]


def population_run(quick: bool = False):
    """Exact population gradient descent in ``(h1, h2)`` over the SGD run's steps (stored; ``quick``: computed here
    once)."""
    return _population_run(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _population_run(quick: bool):
    if not quick:
        return _stored_runs()["population"]
    s = _run_settings(True)
    return runs_study.population_run(s, s.steps, s.lr)


def sgd_vs_population(quick: bool = False) -> dict:
    """How closely SGD follows population GD, and how far its ``H`` is from the symmetric span: final losses and
    ``(h1, h2)`` of both, the largest relative gap of ``h1``, the residual at the first record, its largest value from
    ``late_from`` on and at the end, the final spreads, and ``h2 / (-h1 / (S - 1))`` of both at the end."""
    s, sgd, pop = _settings(quick), sgd_run(quick), population_run(quick)
    late = sgd.steps >= s.late_from
    ratio = {name: run.final("h2") / (-run.final("h1") / (s.S - 1)) for name, run in (("sgd", sgd), ("population", pop))}
    return {"sgd_loss": sgd.final("loss"), "pop_loss": pop.final("loss"), "sgd_h1": sgd.final("h1"), "sgd_h2": sgd.final("h2"),
            "pop_h1": pop.final("h1"), "pop_h2": pop.final("h2"),
            "max_relative_h1_gap": float((np.abs(sgd["h1"] - pop["h1"])[1:] / pop["h1"][1:]).max()),
            "first_residual_step": int(sgd.steps[1]), "first_residual": float(sgd["residual"][1]),
            "max_late_residual": float(sgd["residual"][late].max()) if late.any() else float("nan"),
            "final_residual": sgd.final("residual"), "final_diag_std": sgd.final("diag_std"),
            "final_off_std": sgd.final("off_std"), "sgd_h2_ratio": ratio["sgd"], "pop_h2_ratio": ratio["population"]}


@register("trees-h-entries", "Trees I, Theorem 3: diagonal and off-diagonal of H = A^T B A under SGD and population GD, distance from the symmetric span")
def h_entries(quick: bool = False):
    """``h1`` under SGD and population GD and ``(S - 1) h2`` under SGD; the residual and the spreads of ``H`` (SGD)."""
    s, sgd, pop = _settings(quick), sgd_run(quick), population_run(quick)
    S = s.S
    fig, axes = new_figure(1, 2, width=6.5, height=6.8)
    plot_curves(axes[0], sgd.steps, {"h1 (diagonal), SGD": sgd["h1"], "h1, population GD": pop["h1"],
                                     "(S-1) h2 (off-diagonal), SGD": sgd["h2"] * (S - 1)},
                xlabel="step t", ylabel="entries of H", title="H = A^T B A (SGD: one seed)",
                styles={"h1, population GD": {"linestyle": "--", "color": "k"}})
    plot_curves(axes[1], sgd.steps[1:], {"residual / ||H||": sgd["residual"][1:], "diagonal std": sgd["diag_std"][1:],
                                         "off-diagonal std": sgd["off_std"][1:]},
                xlabel="step t", ylabel="size", logy=True, title="distance from the symmetric span (SGD)")
    for ax in axes:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    rows = [{"step": int(t), "sgd_loss": float(sgd["loss"][i]), "sgd_h1": float(sgd["h1"][i]), "sgd_h2": float(sgd["h2"][i]),
             "sgd_residual": float(sgd["residual"][i]), "pop_loss": float(pop["loss"][i]), "pop_h1": float(pop["h1"][i]),
             "pop_h2": float(pop["h2"][i])} for i, t in enumerate(sgd.steps)]
    return fig, {"S": S, "m": s.m, "lr": s.lr, "batch_size": s.batch_size, "table": rows}


def phase_run(quick: bool = False):
    """The long population run (``phase_steps`` steps at the chapter's step size; stored, ``quick``: computed here
    once)."""
    return _phase_run(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _phase_run(quick: bool):
    if not quick:
        return _stored_runs()["phase"]
    s = _run_settings(True)
    return runs_study.population_run(s, s.phase_steps, s.lr)


def phase_events(quick: bool = False) -> dict[str, dict]:
    """:func:`~onelayer.studies.trees.analysis.detect_phases` of the long population run and of the SGD run."""
    pop, sgd = phase_run(quick), sgd_run(quick)
    return {run_name: analysis.detect_phases(run.steps, run["h1"], run["h2"], run["loss"], run["correct_weight"])
            for run_name, run in (("population", pop), ("sgd", sgd))}


@register("trees-phases", "Trees I, Theorem 3: population loss, h1, h2 and attention on the correct edge with the detected phase marks")
def phases(quick: bool = False):
    """The long population run: loss, ``h1``, ``h2`` and the attention on the correct edge, with ``T_att`` and
    ``T_loss`` marked."""
    pop = phase_run(quick)
    found = analysis.detect_phases(pop.steps, pop["h1"], pop["h2"], pop["loss"], pop["correct_weight"])
    marks = {"T_att": found["T_attention"], "T_loss": found["T_loss"]}
    fig, axes = new_figure(1, 2, width=6.5, height=6.4)
    plot_curves(axes[0], pop.steps, {"loss": pop["loss"]}, xlabel="step t", ylabel="population loss", logy=True)
    plot_curves(axes[1], pop.steps, {"h1": pop["h1"], "h2": pop["h2"], "attention on correct edge": pop["correct_weight"]},
                xlabel="step t", ylabel="value")
    axes[1].legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    for ax in axes:
        mark_steps(ax, marks)
        for text in ax.texts:  # the marks' labels at the book's one font size
            text.set_fontsize(FONT_SIZE)
    rows = [{"step": int(t), "loss": float(pop["loss"][i]), "h1": float(pop["h1"][i]), "h2": float(pop["h2"][i]),
             "correct_weight": float(pop["correct_weight"][i])} for i, t in enumerate(pop.steps)]
    return fig, {"phases": found, "table": rows}


def rate_runs(quick: bool = False) -> dict:
    """Population GD at each step size of ``rate_runs`` (step size -> run); the run at the chapter's step size and
    ``phase_steps`` steps is the phase run (stored; ``quick``: computed here once)."""
    return _rate_runs(check_bool("quick", quick))  # one cache entry per mode, however it is called


@functools.lru_cache(maxsize=2)
def _rate_runs(quick: bool) -> dict:
    s = _run_settings(quick)
    return {lr: phase_run(quick) if (lr, steps) == (s.lr, s.phase_steps)
            else runs_study.population_run(s, steps, lr) if quick else _stored_runs()[runs_study.rate_key(lr)]
            for lr, steps in s.rate_runs}


def rate_summary(quick: bool = False) -> dict:
    """The late-time rate of the run at the largest step size ``eta``, against ``eta t``: the final ``eta t`` and loss,
    the log-log slope of the loss over the last decade, the margin's gain per doubling over the last 4 doublings, and
    the largest ``|log|`` ratio of the losses of the two largest step sizes at equal ``eta t``."""
    runs = rate_runs(quick)
    (lr_a, a), (lr_b, big) = sorted(runs.items())[-2:]
    et = lr_b * big.steps
    tail = et >= et[-1] / 16
    both = np.isin(lr_a * a.steps, et)
    overlap = np.abs(np.log(a["loss"][both]) - np.log(big["loss"][np.isin(et, lr_a * a.steps)]))
    return {"lr": lr_b, "final_eta_t": float(et[-1]), "final_loss": float(big.final("loss")),
            "loglog_slope_last_decade": analysis.loglog_slope(et, big["loss"], t_min=et[-1] / 10),
            "margin_gain_per_doubling": float(np.polyfit(np.log2(et[tail]), big["margin"][tail], 1)[0]),
            "compared_lr": lr_a, "max_abs_log_loss_ratio": float(overlap.max())}


@register("trees-loss-rate", "Trees I, Theorem 3: population loss and margin h1 - h2 against eta t for step sizes 1, 8 and 128")
def loss_rate(quick: bool = False):
    """Population loss (log-log) and margin against ``eta t`` for every step size, with the numbers of
    :func:`rate_summary`."""
    runs, summary = rate_runs(quick), rate_summary(quick)
    fig, axes = new_figure(2, width=9.0, height=3.3)
    for lr, run in runs.items():
        axes[0].loglog(lr * run.steps[1:], run["loss"][1:], label=f"lr {lr:g}")
        axes[1].semilogx(lr * run.steps[1:], run["margin"][1:], label=f"lr {lr:g}")
    axes[0].set(xlabel="eta * t", ylabel="population loss", title="loss against eta t")
    axes[1].set(xlabel="eta * t", ylabel="h1 - h2", title="margin against eta t")
    axes[0].legend()
    rows = [{"lr": lr, "step": int(t), "eta_t": lr * int(t), "loss": float(run["loss"][i]), "margin": float(run["margin"][i])}
            for lr, run in runs.items() for i, t in enumerate(run.steps)]
    return fig, {"loglog_slope_last_decade": summary["loglog_slope_last_decade"],
                 "margin_gain_per_doubling": summary["margin_gain_per_doubling"],
                 f"final_loss_lr{summary['lr']:g}": summary["final_loss"], "table": rows}


def seed_summary(data: dict | None = None) -> dict:
    """The SGD verdicts over the stored seeds (one-hot family of :func:`onelayer.studies.trees.backward_seeds.stored`).

    Per run: the largest residual of ``H`` from the symmetric span from ``late_from`` on, the largest relative gap of
    ``h1`` from population GD, whether ``h1`` increases at every recorded step, and whether the batch loss at the last
    step is below ``loss_threshold``. Returns the means with their intervals (``(mean, low, high)``), the largest
    value over runs, and the counts as :class:`~onelayer.rates.Rate`.
    """
    s = SETTINGS
    run = (seed_study.stored() if data is None else data)["runs"]["one_hot"]
    steps = np.asarray(run["record_steps"])
    residual, h1, loss = (np.asarray(run[k], dtype=float) for k in ("residual", "h1", "loss"))
    pop = dynamics.population_gd(run["m"], run["S"], steps=run["steps"], lr=run["lr"], record_every=int(steps[1] - steps[0]))
    late = residual[steps >= min(s.late_from, steps[-1])].max(0)  # a run shorter than late_from: its last record
    gap = (np.abs(h1[1:] - pop["h1"][1:, None]) / pop["h1"][1:, None]).max(0)
    n = residual.shape[1]
    return {"runs": n, "steps": int(steps[-1]), "late_residual": mean_interval(late), "max_late_residual": float(late.max()),
            "h1_gap": mean_interval(gap), "max_h1_gap": float(gap.max()),
            "h1_increasing": rate(int((np.diff(h1, axis=0) > 0).all(0).sum()), n),
            "loss_below": rate(int((loss[-1] < s.loss_threshold).sum()), n),
            "final_loss": mean_interval(loss[-1]), "pop_final_loss": float(pop["loss"][-1])}


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.trees_backward_training.rows` of the long population run's
    phases, the late-time rate and the stored SGD seeds."""
    return verdicts.rows(SETTINGS, population=phase_events()["population"], late_rate=rate_summary(),
                         seeds=seed_summary())
