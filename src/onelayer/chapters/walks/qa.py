"""Chapter "Beyond random walks: two question-answering tasks" (``book/walks/qa.ipynb``): Section 6 and Appendix F.2.

The token averages, the tie of the two Task-2 questions from zero (our lemma), Figures 7 and 10, the attention
normalisations, a bias term (issue 13), the explorer and its player. The single runs are the stored study
``walks-qa-runs`` (:mod:`onelayer.studies.walks.qa_runs`), the rates ``walks-qa-seeds`` and ``walks-qa-frozen``
(:mod:`onelayer.studies.walks.qa_readings`); only the explorer's default state trains here.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ...formatting import near_zero_text, rounded
from ...rates import rate
from ...registry import register
from ...scrubber import frame_numbers, scrub_grid
from ...validation import check_choice
from ...figures import walks_qa as qa_figures
from ...studies.walks import qa, qa_frozen, qa_runs, qa_seeds
from ...studies.walks.qa_readings import attention_verdict, find, frozen_study, rate_rows, seed_rates, seed_study
from ...walks import qa as qa_tasks
from ...verdicts import walks_qa as verdicts

__all__ = ["Settings", "SETTINGS", "runs", "symmetry_rows", "symmetry_table", "linear_runs", "fig7", "curves_rows",
           "fig7_findings", "normalization", "normalization_table", "relu_runs", "fig10", "relu_rows", "bias_table",
           "explorer", "explorer_default", "explorer_player", "explorer_frames", "long_run", "relu_from_zero",
           "frozen_glue", "seeds", "seed_table", "seed_glue", "verdict_rows"]


@dataclasses.dataclass(frozen=True)
class Settings:
    """What the chapter shows."""

    #: the single runs (seed 0; the ReLU variant seeds 0 and 1): the stored study ``walks-qa-runs``, whose settings
    #: are these (Section 6: 100 GD steps, sigma = 0.01, eta = 0.1, [paper]; the ReLU width m = 19 of Appendix F.2;
    #: "keys_and_query" is our reading of Section 5.2, [guess]; the bias placements of issue 13, [summary]; the long
    #: Task-2 run of the first exercise; the player's grid of initial scales by step sizes)
    runs: qa_runs.Settings = qa_runs.Settings()
    #: GD steps of the quick variant of the command line (live runs)
    quick_steps: int = 5
    #: steps printed in the Figure 7 table ([ours]) and the steps of the bias table
    table_steps: tuple[int, ...] = (0, 1, 2, 3, 5, 10, 20, 50, 100)
    bias_steps: tuple[int, ...] = (20, 100)
    #: the second exercise: the ReLU model from zero, this many steps (live)
    frozen_steps: int = 5
    #: the explorer's default, trained live (Section 6: sigma = 0.01, eta = 0.1, [paper]) and its steps
    explore_sigma: float = 0.01
    explore_lr: float = 0.1
    explore_normalize: str = "keys_and_query"
    explore_steps: int = 100
    #: the runs over many seeds (issue 22): the stored study ``STUDY`` of :mod:`onelayer.studies.walks.qa_seeds` (40 seeds, each a
    #: training sample and an initialisation, scored on the exact task) and the steps at which "learned" is read
    #: (step 20: the bias claim; step 100: Figure 7)
    seed_check_steps: tuple[int, ...] = (20, 100)


SETTINGS = Settings()


def _run_settings(quick: bool) -> qa_runs.Settings:
    """``SETTINGS.runs``, or (``quick``) fewer steps, the first ReLU seed and the explorer's first two frames."""
    s = SETTINGS.runs
    return s if not quick else dataclasses.replace(
        s, steps=SETTINGS.quick_steps, relu_seeds=s.relu_seeds[:1], explore_sigmas=s.explore_sigmas[:2],
        explore_lrs=s.explore_lrs[:1], explore_steps=SETTINGS.quick_steps)


@functools.lru_cache(maxsize=64)
def runs(key: str, quick: bool = False):
    """The single run (or explorer frame) ``key`` of :mod:`onelayer.studies.walks.qa_runs`: stored (the study run
    with ``SETTINGS.runs``), or (``quick``) trained here with the quick settings."""
    return qa_runs.run_one(_run_settings(True), key) if quick else _stored()[key]


@functools.lru_cache(maxsize=1)
def _stored() -> dict:
    return qa_runs.load(SETTINGS.runs)


def symmetry_rows() -> list[dict]:
    """:func:`onelayer.studies.walks.qa_runs.symmetry_rows` of the stored runs."""
    return qa_runs.symmetry_rows(_stored(), SETTINGS.runs)


def symmetry_table(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """The rows of :func:`symmetry_rows` as the chapter shows them (differences below 1e-12 as ``"< 1e-12"``, since
    their digits are round-off), and the column names."""
    columns = ["initialisation", "positions", "step 0", "largest", "step 100", "test accuracy"]
    out = [dict(zip(columns, (r["init"], r["positions"], near_zero_text(r["gap_start"], 3), near_zero_text(r["gap_max"], 3),
                              near_zero_text(r["gap_end"], 3), rounded(r["test_accuracy"], 3)))) for r in rows]
    return out, columns


def linear_runs(normalize: str = "keys_and_query", quick: bool = False) -> dict:
    """``{"Task 1": History, "Task 2": History}``: the linear model of Section 6, recorded at every step."""
    return {f"Task {t}": runs(f"linear-{normalize}-t{t}", quick) for t in qa_tasks.TASKS}


@register("walks-fig7", "Question answering: test accuracy and KL of the linear model on Tasks 1 and 2, sigma=0.01, eta=0.1, one seed (paper's Figure 7)")
def fig7(quick: bool = False):
    """The paper's Figure 7: test accuracy and KL of both tasks over the run."""
    runs = linear_runs(quick=quick)
    fig = qa_figures.figure_curves(runs, title="linear model, sigma=0.01, eta=0.1, one seed (paper's Figure 7)")
    return fig, {"steps": _run_settings(quick).steps, "average_gap": {f"Task {t}": qa_tasks.average_gap(t) for t in qa_tasks.TASKS},
                 "table": qa_runs.curve_table(runs)}


def curves_rows() -> list[dict]:
    """Figure 7 at ``SETTINGS.table_steps``: accuracy and KL of each task (3 significant digits)."""
    return [{"step": t, **{f"{name} {what}": rounded(float(h.at(key, t)), 3) for name, h in linear_runs().items()
                           for what, key in (("acc", "test_accuracy"), ("KL", "kl"))}} for t in SETTINGS.table_steps]


def fig7_findings() -> dict:
    """What the text reads off Figure 7: the first step from which Task 1 is always right, the final accuracy of
    Task 2, the final KL and attention on the fruits of Task 1 (3 significant digits)."""
    t1, t2 = linear_runs().values()
    return {"first_perfect": int(t1.steps[np.flatnonzero(t1["test_accuracy"] > 1 - 1e-9)[0]]),
            "task2_accuracy": round(float(t2.final("test_accuracy")), 3),
            "task1_kl": round(float(t1.final("kl")), 3),
            "task1_fruit_attention": round(float(t1.final("fruit_attention")), 3)}


@register("walks-qa-normalization", "Question answering (table): final accuracy and attention on the fruits for three input normalisations")
def normalization(quick: bool = False):
    """Final accuracy of both tasks and Task 1's attention on the fruits for each attention normalisation."""
    rows = qa_runs.normalization_rows({nz: tuple(linear_runs(nz, quick).values()) for nz in SETTINGS.runs.normalizations})
    return None, {"steps": _run_settings(quick).steps, "table": rows}


def normalization_table(numbers: dict) -> tuple[list[dict], list[str]]:
    """The rows of :func:`normalization` under the chapter's column names, and those names."""
    end = f"step {numbers['steps']}"
    columns = ["normalize", "Task 1", "Task 2", "fruit attention, Task 1, step 0", end]
    rows = [dict(zip(columns, (r["normalize"], r["task1_accuracy"], r["task2_accuracy"],
                               r["task1_fruit_attention_start"], r["task1_fruit_attention_end"])))
            for r in numbers["table"]]
    return rows, columns


def relu_runs(quick: bool = False) -> dict:
    """``{(task, seed): History}`` of the ReLU variant (Appendix F.2), seed by seed."""
    seeds = _run_settings(quick).relu_seeds
    return {(t, s): runs(f"relu-s{s:03d}-t{t}", quick) for s in seeds for t in qa_tasks.TASKS}


@register("walks-fig10", "Question answering with a hidden ReLU layer (m=19): accuracy and KL on Tasks 1 and 2, one seed (paper's Figure 10)")
def fig10(quick: bool = False):
    """The paper's Figure 10 (our reading of the ReLU layer): both tasks for the first seed; numbers of every seed."""
    relu = relu_runs(quick)
    seeds = list(_run_settings(quick).relu_seeds)
    fig = qa_figures.figure_curves({f"Task {t} (ReLU)": relu[t, seeds[0]] for t in qa_tasks.TASKS},
                                   title="hidden ReLU layer, m = 19, one seed (paper's Figure 10)")
    table = qa_runs.curve_table({f"Task {t} (ReLU), seed {s}": h for (t, s), h in relu.items()})
    return fig, {"steps": _run_settings(quick).steps, "seeds": seeds, "table": table}


def relu_rows() -> list[dict]:
    """:func:`onelayer.studies.walks.qa_runs.relu_rows` of the stored ReLU runs."""
    return qa_runs.relu_rows(relu_runs())


def bias_table() -> tuple[list[dict], float]:
    """Test accuracy of both tasks at ``SETTINGS.bias_steps`` for each bias placement (3 significant digits), and the
    largest Task-2 output difference from zero initialisation over every placement with a bias."""
    placements = SETTINGS.runs.bias_placements
    rows = [{"bias": b, **{f"Task {t}, step {s}": rounded(float(runs(f"bias-{b}-t{t}").at("test_accuracy", s)), 3)
                           for t in qa_tasks.TASKS for s in SETTINGS.bias_steps}} for b in placements]
    return rows, max(float(runs(f"bias-zero-{b}")["output_gap"].max()) for b in placements[1:])


def explorer():
    """The live widget (in a kernel): sliders for ``sigma`` and ``eta``, a menu for the normalisation."""
    return qa_figures.explorer_widget()


@register("walks-qa-explorer-default", "Question answering: the explorer widget's default state: test accuracy of Tasks 1 and 2, sigma=0.01, eta=0.1")
def explorer_default(quick: bool = False):
    """The explorer's figure at its default state (trained here), and the accuracies it plots."""
    s = SETTINGS
    steps = s.quick_steps if quick else s.explore_steps
    live = qa.explorer_runs(s.explore_sigma, s.explore_lr, s.explore_normalize, steps)
    rows = [{"task": task, "step": int(t), "test_accuracy": float(h["acc"][i])} for task, h in live.items()
            for i, t in enumerate(h.steps)]
    fig = qa_figures.explorer_figure(live, sigma=s.explore_sigma, lr=s.explore_lr, normalize=s.explore_normalize)
    return fig, {"sigma": s.explore_sigma, "lr": s.explore_lr, "normalize": s.explore_normalize, "steps": steps,
                 "table": rows}


def _player_grid(quick: bool = False):
    s = _run_settings(quick)

    def draw(sigma, lr):
        frame = runs(f"explorer-s{s.explore_sigmas.index(sigma)}-lr{s.explore_lrs.index(lr)}", quick)
        return qa_figures.explorer_figure(frame, sigma=sigma, lr=lr, normalize=s.explore_normalize)

    return draw, s.explore_sigmas, s.explore_lrs


def explorer_player():
    """The precomputed player of the HTML book: the stored explorer runs over the grid of initial scales by step
    sizes of ``SETTINGS.runs``."""
    return scrub_grid(*_player_grid(), labels=("init sigma", "step size eta"), name="walks-qa-explorer", fmt=("{:g}", "{:g}"),
                      alt="Test accuracy of Task 1 and Task 2 against the GD step for 100 steps of the linear model with "
                          "initial scale sigma = {0} (0: zero initialisation) and step size eta = {1}.")


@register("walks-qa-explorer-frames", "Question answering player (frames): test accuracy of Tasks 1 and 2 over 100 GD "
                                      "steps for each initial scale sigma and step size eta")
def explorer_frames(quick: bool = False):
    """The numbers behind every frame of :func:`explorer_player`."""
    return None, frame_numbers(*_player_grid(quick), labels=("init sigma", "step size eta"), fmt=("{:g}", "{:g}"))


def long_run() -> list[dict]:
    """Task 2 from the paper's Gaussian initialisation for ``long_steps`` steps (stored): output difference and accuracy."""
    return qa_runs.gap_rows(runs("long"))


def relu_from_zero() -> dict[str, float]:
    """The ReLU variant (Task 1) from zero: the largest ``|entry|`` of each parameter after ``frozen_steps`` steps."""
    h = qa.run(qa.setup_task(1, hidden=SETTINGS.runs.relu_hidden), steps=SETTINGS.frozen_steps, init="zero",
               record_every=SETTINGS.frozen_steps)
    return {k: float(v.abs().max()) for k, v in h.params.items()}


def _rates(data: dict) -> list[dict]:
    return seed_rates(data, SETTINGS.seed_check_steps)


@register("walks-qa-seeds", "Question answering over 40 seeds (table): how often each task is learned, stays near one half, or gets one answer for every input, per bias placement and normalisation")
def seeds(quick: bool = False):
    """:func:`~onelayer.studies.walks.qa_readings.rate_rows` of the stored studies (``quick``: the quick runs): per
    setting, each outcome's count ``k`` out of ``n`` runs with its Wilson interval, and the final accuracies."""
    data = seed_study(quick)
    rows = rate_rows(_rates(data), None if quick else _rates(frozen_study()))
    return None, {"source": "quick live run" if quick else qa_seeds.STUDY.stored,
                  "control": None if quick else qa_frozen.STUDY.stored, "seeds": data["seeds"],
                  "steps": data["steps"], "learned": qa_seeds.LEARNED, "near": qa_seeds.NEAR, "table": rows}


def seed_table(numbers: dict, task: int) -> tuple[list[dict], list[str]]:
    """The rows of :func:`seeds` for ``task`` as the chapter shows them: each outcome as ``k/n = x [lo, hi]``, and the
    final accuracies with how many runs end at each; and the column names."""
    task = check_choice("task", task, qa_tasks.TASKS)
    rows = []
    for r in numbers["table"]:
        if r["task"] != task:
            continue
        row = {"reading": r["reading"]}
        for t in r["checks"]:
            row[f"learned by step {t}"] = rate(r[f"learned_{t}_k"], r[f"learned_{t}_n"]).text(2)
        row["near 1/2"] = rate(r["near_chance_k"], r["near_chance_n"]).text(2)
        row["one answer"] = rate(r["single_answer_k"], r["single_answer_n"]).text(2)
        row["final accuracy: runs"] = r["final_accuracies"]
        if "frozen_near_chance_k" in r:
            t = r["checks"][-1]
            control = r["frozen_near_chance_k"] is not None
            row[f"attention frozen: learned by step {t}"] = (
                rate(r[f"frozen_learned_{t}_k"], r[f"frozen_learned_{t}_n"]).text(2) if control else "-")
            row["attention frozen: near 1/2"] = (
                rate(r["frozen_near_chance_k"], r["frozen_near_chance_n"]).text(2) if control else "-")
        rows.append(row)
    return rows, list(rows[0])


def seed_glue() -> dict:
    """The rates the chapter's prose quotes (``k/n = x [lo, hi]`` texts), keyed by their glue names."""
    rates = _rates(seed_study())
    first, last = SETTINGS.seed_check_steps[0], SETTINGS.seed_check_steps[-1]
    kq, keys, none = find(rates, 1), find(rates, 1, normalize="keys"), find(rates, 1, normalize="none")
    out_bias, att_bias = find(rates, 1, "output"), find(rates, 1, "attention")
    relu1, relu2 = find(rates, 1, hidden=SETTINGS.runs.relu_hidden), find(rates, 2, hidden=SETTINGS.runs.relu_hidden)
    n = kq["rates"][f"learned_{last}"].n
    partial = n - out_bias["rates"][f"learned_{last}"].k - out_bias["rates"]["near_chance"].k
    bias_t2 = [find(rates, 2, b)["rates"]["near_chance"] for b in ("output", "attention", "both")]
    return {"qa_seeds_n": n, "qa_s_t1_kq": kq["rates"][f"learned_{last}"].text(),
            "qa_s_t1_kq_20": kq["rates"][f"learned_{first}"].text(), "qa_s_t1_keys": keys["rates"][f"learned_{last}"].text(),
            "qa_s_t1_keys_near": keys["rates"]["near_chance"].text(),
            "qa_s_t1_keys_top": "{:g} on the exact task in {} of {}".format(*max(keys["finals"].items(), key=lambda kv: kv[1]), n),
            "qa_s_t2_kq": find(rates, 2)["rates"]["near_chance"].text(),
            "qa_s_t1_none": none["rates"][f"learned_{last}"].text(), "qa_s_t1_none_near": none["rates"]["near_chance"].text(),
            "qa_s_t1_none_one": none["rates"]["single_answer"].text(),
            "qa_s_t2_none": find(rates, 2, normalize="none")["rates"]["near_chance"].text(),
            "qa_s_t2_none_learned": find(rates, 2, normalize="none")["rates"][f"learned_{last}"].text(),
            "qa_s_relu_t1": relu1["rates"][f"learned_{last}"].text(), "qa_s_relu_t1_one": relu1["rates"]["single_answer"].text(),
            "qa_s_relu_t2": relu2["rates"]["near_chance"].text(),
            "qa_s_att_t1_20": att_bias["rates"][f"learned_{first}"].text(),
            "qa_s_out_t1_20": out_bias["rates"][f"learned_{first}"].text(),
            "qa_s_out_t1_100": out_bias["rates"][f"learned_{last}"].text(),
            "qa_s_out_near": out_bias["rates"]["near_chance"].text(), "qa_s_out_one": out_bias["rates"]["single_answer"].text(),
            "qa_s_out_partial": partial, "qa_s_bias_t2": min(r.k for r in bias_t2), **frozen_glue()}


def frozen_glue() -> dict:
    """The frozen-attention control's rates the prose quotes (``qa_f_*``), with keys and query normalised: Task 1
    learned by steps 20 and 100, Task 2 near one half, Task 1 learned by step 20 with the attention or the output bias
    (and with the attention bias, keys only normalised), and how the control compares with the trained runs."""
    rates = _rates(frozen_study())
    first, last = SETTINGS.seed_check_steps[0], SETTINGS.seed_check_steps[-1]
    t1, t2 = find(rates, 1), find(rates, 2)
    trained_rates = _rates(seed_study())
    trained = find(trained_rates, 1)["rates"][f"learned_{last}"]
    att, out = find(rates, 1, "attention")["rates"][f"learned_{first}"], find(rates, 1, "output")["rates"][f"learned_{first}"]
    att_keys = find(rates, 1, "attention", "keys")["rates"][f"learned_{first}"]
    return {"qa_f_t1_kq": t1["rates"][f"learned_{last}"].text(), "qa_f_t1_kq_20": t1["rates"][f"learned_{first}"].text(),
            "qa_f_t2_kq": t2["rates"]["near_chance"].text(),
            "qa_f_t1_kq_verdict": attention_verdict(trained, t1["rates"][f"learned_{last}"]),
            "qa_f_att_t1_20": att.text(), "qa_f_out_t1_20": out.text(), "qa_f_att_keys_t1_20": att_keys.text(),
            "qa_f_att_verdict": attention_verdict(find(trained_rates, 1, "attention")["rates"][f"learned_{first}"], att),
            "qa_f_out_verdict": attention_verdict(find(trained_rates, 1, "output")["rates"][f"learned_{first}"], out)}


def verdict_rows() -> list[dict]:
    """The chapter's verdict rows: :func:`onelayer.verdicts.walks_qa.rows` of the stored seed study and its
    frozen-attention control, read with the chapter's checkpoints, and of the exact task."""
    data = seed_study()
    return verdicts.rows(SETTINGS, gap=qa_tasks.average_gap(2), symmetry=symmetry_rows(), bias_zero_gap=bias_table()[1],
                         rates=_rates(data), frozen=_rates(frozen_study()), n_seeds=len(data["seeds"]),
                         steps=data["steps"])
