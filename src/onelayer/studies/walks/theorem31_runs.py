"""The long single-sample runs of the Theorem 3.1 chapter, stored: the study ``walks-t31-runs``.

The chapter shows, on one training sample (data seed 0) at the paper's size, the direction of ``V`` over 1000 GD
steps for three walk parameters (:func:`onelayer.studies.walks.experiment.direction_run`), the direction by loss after
300 steps (:func:`onelayer.studies.walks.direction.direction_by_loss`), Lemma C.7's remainder over 1000 steps
(:func:`onelayer.studies.walks.direction.lemma_c7_remainder`), the parent's step-2 log-odds against ``N`` on 8000
walks per length (:func:`onelayer.studies.walks.experiment.log_odds_vs_N`), the steps to Bayes-optimal predictions
for six sizes (:func:`onelayer.studies.walks.experiment.steps_to_optimal_table`) and the recorded run of the paper's
Figure 8 (``K = 20``, ``N = 101``, ``p = 1/2``, 50 steps; :func:`onelayer.studies.walks.experiment.run`). They are the same on every run and took
most of the chapter's execution: they are stored here and the chapter loads them (float64, bit for bit the live runs).

Members: ``direction-p0.50`` (one walk parameter of the direction runs), ``loss-direction``, ``lemma-c7``,
``log-odds-power`` and ``log-odds-fixed`` (the two rules for ``M``), ``steps-to-optimal``, ``fig8``. ``python -m onelayer study walks-t31-runs`` runs
it; :func:`load` gives the results with their arrays back as NumPy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...training import History
from ...walks import theory
from ..registry import load as load_study
from ..runner import Member, Study
from .direction import direction_by_loss, lemma_c7_remainder
from .experiment import direction_run, log_odds_vs_N, run, setup_experiment, steps_to_optimal_table

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load", "direction_table", "direction_slope", "log_odds_rows"]


@dataclass(frozen=True)
class Settings:
    """The direction runs' walk parameters and GD steps; the walk parameter and steps of the direction by loss and of
    Lemma C.7's remainder; the walk parameter, lengths and walks of the log-odds against ``N``; the walk parameter,
    ``(K, N)`` sizes and GD steps of the steps to optimal; the walk parameter, ring size, length and GD steps of the
    Figure 8 run."""

    direction_ps: tuple[float, ...] = (0.5, 0.7, 0.9)
    direction_steps: int = 1000
    p: float = 0.7
    loss_direction_steps: int = 300
    remainder_steps: int = 1000
    log_odds_p: float = 0.7
    log_odds_Ns: tuple[int, ...] = (13, 25, 37, 49, 61, 73, 97, 121, 145, 193)
    log_odds_walks: int = 8000
    steps_table_p: float = 0.7
    steps_table_sizes: tuple[tuple[int, int], ...] = ((5, 49), (6, 49), (6, 97), (8, 97), (10, 101), (6, 145))
    steps_table_steps: int = 20
    fig8_p: float = 0.5
    fig8_K: int = 20
    fig8_N: int = 101
    fig8_steps: int = 50


#: ``--quick``: short runs, three lengths, few walks (seconds).
QUICK = Settings(direction_ps=(0.7,), direction_steps=20, loss_direction_steps=10, remainder_steps=20,
                 log_odds_Ns=(13, 25), log_odds_walks=300, steps_table_sizes=((5, 13),), steps_table_steps=5,
                 fig8_K=5, fig8_N=13, fig8_steps=3)

#: The two rules for ``M`` of the log-odds members and the chapter's labels of them.
M_RULES = {"power": "M = ceil(N^1.5)", "fixed": "M = 1000 fixed"}


def _direction_key(p: float) -> str:
    return f"direction-p{p:.2f}"


def members(settings: Settings) -> list[Member]:
    """One member per direction run, the direction by loss, the remainder, and one per rule for ``M``; cost hint:
    GD steps (walks for the log-odds)."""
    s = settings
    return ([Member(_direction_key(p), {"kind": "direction", "p": p}, cost=float(s.direction_steps))
             for p in s.direction_ps]
            + [Member("loss-direction", {"kind": "loss-direction"}, cost=3.0 * s.loss_direction_steps),
               Member("lemma-c7", {"kind": "lemma-c7"}, cost=float(s.remainder_steps))]
            + [Member(f"log-odds-{rule}", {"kind": "log-odds", "M_rule": rule}, cost=s.log_odds_walks / 10)
               for rule in M_RULES]
            + [Member("steps-to-optimal", {"kind": "steps-to-optimal"}, cost=float(s.steps_table_steps)),
               Member("fig8", {"kind": "fig8"}, cost=float(s.fig8_steps))])


def run_member(settings: Settings, member: Member) -> dict:
    """The member's result: a direction run, ``{"rows": ...}`` of the direction by loss, the remainder, or a log-odds
    result (arrays as lists)."""
    s, f = settings, member.fields
    if f["kind"] == "direction":
        return direction_run(f["p"], steps=s.direction_steps)
    if f["kind"] == "loss-direction":
        return {"rows": direction_by_loss(s.p, steps=s.loss_direction_steps)}
    if f["kind"] == "lemma-c7":
        return lemma_c7_remainder(s.p, steps=s.remainder_steps)
    if f["kind"] == "fig8":  # every record of the run (V and the attention profile at every step)
        hist = run(setup_experiment(s.fig8_p, K=s.fig8_K, N=s.fig8_N), steps=s.fig8_steps)
        return {"steps": hist.steps, "records": hist.records}
    if f["kind"] == "steps-to-optimal":
        return {"rows": steps_to_optimal_table(s.steps_table_p, s.steps_table_sizes, steps=s.steps_table_steps)}
    return log_odds_vs_N(s.log_odds_p, s.log_odds_Ns, M_rule=f["M_rule"], n=s.log_odds_walks)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Which members the file holds."""
    return {"members": sorted(r["key"] for r in records)}


STUDY = Study(name="walks-t31-runs", stored="walks/data/t31_runs.json", kind="walks-t31-runs", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorem 3.1: the chapter's long single-sample runs (direction of V, direction by "
                          "loss, Lemma C.7's remainder, the parent's log-odds against N)")


def _arrays(result: dict) -> dict:
    """``result`` with its lists of numbers back as NumPy arrays (what the live functions returned: JSON keeps ints
    and floats apart)."""
    return {k: np.asarray(v) if isinstance(v, list) else v for k, v in result.items()}


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`), ``direction`` (the runs in
    the order of ``direction_ps``), ``loss_direction`` (rows), ``lemma_c7``, ``log_odds`` (rule -> result) and
    ``steps_to_optimal`` (rows) and ``fig8`` (the run's :class:`~onelayer.training.History`, records only)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{k: (tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v)
                           for k, v in data["settings"].items()})
    by_key = {r["key"]: r["result"] for r in data["members"]}
    return {"settings": settings,
            "direction": tuple(_arrays(by_key[_direction_key(p)]) for p in settings.direction_ps),
            "loss_direction": tuple(by_key["loss-direction"]["rows"]),
            "lemma_c7": _arrays(by_key["lemma-c7"]),
            "log_odds": {rule: _arrays(by_key[f"log-odds-{rule}"]) for rule in M_RULES},
            "steps_to_optimal": by_key["steps-to-optimal"]["rows"],
            "fig8": History(steps=np.asarray(by_key["fig8"]["steps"]), records=_arrays(by_key["fig8"]["records"]))}


def direction_table(runs, steps: int) -> tuple[list[dict], dict]:
    """The final values of each :func:`~onelayer.studies.walks.experiment.direction_run` of ``runs`` (one per ``p``):
    the distances of ``V``'s direction to ``Pi^T``, ``sqrt(Pi^T)`` and the sample's own target, the sampling floor,
    the clockwise/counter-clockwise ratio against ``sqrt(p/(1-p))`` and ``p/(1-p)``, ``||V||/sqrt(2t)`` and the
    output shares; and the reduced scalar dynamics' ratio after ``steps`` steps for every ``p`` but the first."""
    rows = [{"p": r["p"], "steps": int(r["steps"][-1]), "d_Pi": float(r["d_Pi"][-1]), "d_sqrt": float(r["d_sqrt"][-1]),
             "d_empirical": float(r["d_empirical"][-1]), "sampling_floor": float(r["sampling_floor"]),
             "ratio": float(r["ratio"][-1]), "sqrt_odds": float(np.sqrt(r["p"] / (1 - r["p"]))), "odds": r["p"] / (1 - r["p"]),
             "norm_over_sqrt_2t": float(r["norm"][-1] / np.sqrt(2 * r["steps"][-1])),
             "out_Pi": float(r["out_Pi"][-1]), "out_sqrt": float(r["out_sqrt"][-1])} for r in runs]
    reduced = {f"{p:g}": float(theory.reduced_value_dynamics(p, 6, steps)[-1] / theory.reduced_value_dynamics(1 - p, 6, steps)[-1])
               for p in [r["p"] for r in runs][1:]}
    return rows, reduced


def direction_slope(run: dict, from_record: int) -> tuple[float | None, int | None]:
    """The log-log slope of the distance of ``V``'s direction to the sample's own target in one direction ``run``,
    fitted from record ``from_record`` on, and the step of that record (``(None, None)`` with too few records)."""
    if len(run["steps"]) <= from_record + 2:
        return None, None
    return (float(np.polyfit(np.log(run["steps"][from_record:]), np.log(run["d_empirical"][from_record:]), 1)[0]),
            int(run["steps"][from_record]))


def log_odds_rows(odds: dict) -> list[dict]:
    """One row per rule for ``M`` (``odds``: label -> :func:`~onelayer.studies.walks.experiment.log_odds_vs_N`'s
    arrays) and length ``N``: ``M``, the median over walks of the smallest log-odds of the parent, its attention."""
    return [{"M_rule": label, "N": int(N), "M": int(M), "median_min_log_odds": float(lo), "parent_attention": float(pa)}
            for label, res in odds.items()
            for N, M, lo, pa in zip(res["N"], res["M"], res["median_min_log_odds"], res["parent_attention"])]
