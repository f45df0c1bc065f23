"""The question-answering chapter's single runs (seed 0), stored: the study ``walks-qa-runs``.

The chapter illustrates Section 6 and Appendix F.2 with single runs of :mod:`onelayer.studies.walks.qa` (the training
sample and initialisation of seed 0): the linear model under each attention normalisation (Figure 7 and its
normalisation table), the Task-2 symmetry check from each initialisation and kind of positional vectors, the ReLU
variant (Figure 10, seeds 0 and 1), the bias placements of the rebuttal's claim, the long Task-2 run of the first
exercise, and the explorer's grid of initial scales by step sizes (the player of the HTML book). Rates over many seeds
are the studies ``walks-qa-seeds`` and ``walks-qa-frozen``; these runs are what the chapter draws and tabulates, so
they are stored once and loaded, and only the explorer's default state is trained live.

A member is one run (``linear-keys-t1``, ``symmetry-zero-sin``, ``relu-s001-t2``, ``bias-output-t1``,
``bias-zero-both``, ``long``) or one explorer frame (``explorer-s0-lr2``: both tasks). Its result is the recorded
steps and records (``{"steps", "records"}``; a frame: one such per task). ``python -m onelayer study walks-qa-runs``
runs it (about a minute on one core); :func:`histories` gives a member's runs back as
:class:`onelayer.training.History`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...training import History
from ...walks.qa import TASKS
from ..registry import load as load_study
from ..runner import Member, Study
from . import qa

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "history", "histories", "load", "run_one",
           "curve_table", "symmetry_rows", "relu_rows", "normalization_rows", "gap_rows"]


@dataclass(frozen=True)
class Settings:
    """The runs of the chapter (Section 6: ``sigma = 0.01``, ``eta = 0.1``, [paper]; the rest [ours])."""

    #: GD steps of every run but the long one; the recording interval of the symmetry and bias runs
    steps: int = 100
    record_every: int = 10
    #: the attention normalisations of the linear runs (recorded at every step)
    normalizations: tuple[str, ...] = ("keys_and_query", "keys", "none")
    #: the symmetry check of the lemma: initialisations and positional vectors
    symmetry_inits: tuple[str, ...] = ("zero", "gaussian")
    symmetry_positions: tuple[str, ...] = ("sin", "exact")
    #: the ReLU variant (Appendix F.2): hidden width and seeds (recorded at every step)
    relu_hidden: int = 19
    relu_seeds: tuple[int, ...] = (0, 1)
    #: the bias placements (the first is the paper's model; the others are also run on Task 2 from zero)
    bias_placements: tuple[str, ...] = ("none", "output", "attention", "both")
    #: the long Task-2 run and its recording interval
    long_steps: int = 3000
    long_every: int = 500
    #: the explorer's grid: initial scales (0: zero initialisation) by step sizes, its normalisation and steps
    explore_sigmas: tuple[float, ...] = (0.0, 0.01, 1.0)
    explore_lrs: tuple[float, ...] = (0.1, 1.0, 10.0)
    explore_normalize: str = "keys_and_query"
    explore_steps: int = 100


#: ``--quick``: 5 steps, one normalisation, one placement with a bias, a 10-step long run, a 2-frame grid (seconds).
QUICK = Settings(steps=5, record_every=1, normalizations=("keys_and_query",), symmetry_inits=("zero",),
                 symmetry_positions=("sin",), relu_seeds=(0,), bias_placements=("none", "output"), long_steps=10,
                 long_every=5, explore_sigmas=(0.0, 0.01), explore_lrs=(0.1,), explore_steps=5)


def members(settings: Settings) -> list[Member]:
    """One member per run, and one per explorer frame; cost hint: GD steps."""
    s = settings
    out = [Member(f"linear-{nz}-t{t}", {"kind": "linear", "normalize": nz, "task": t}, cost=s.steps)
           for nz in s.normalizations for t in TASKS]
    out += [Member(f"symmetry-{i}-{p}", {"kind": "symmetry", "init": i, "positions": p}, cost=s.steps)
            for i in s.symmetry_inits for p in s.symmetry_positions]
    out += [Member(f"relu-s{seed:03d}-t{t}", {"kind": "relu", "seed": seed, "task": t}, cost=2.0 * s.steps)
            for seed in s.relu_seeds for t in TASKS]
    out += [Member(f"bias-{b}-t{t}", {"kind": "bias", "placement": b, "task": t}, cost=s.steps)
            for b in s.bias_placements for t in TASKS]
    out += [Member(f"bias-zero-{b}", {"kind": "bias-zero", "placement": b}, cost=s.steps) for b in s.bias_placements[1:]]
    out.append(Member("long", {"kind": "long"}, cost=s.long_steps))
    out += [Member(f"explorer-s{i}-lr{j}", {"kind": "explorer", "sigma": sigma, "lr": lr}, cost=2.0 * s.explore_steps)
            for i, sigma in enumerate(s.explore_sigmas) for j, lr in enumerate(s.explore_lrs)]
    return out


def _curves(h: History) -> dict:
    return {"steps": [int(t) for t in h.steps], "records": {k: [float(v) for v in h[k]] for k in sorted(h.records)}}


def run_member(settings: Settings, member: Member) -> dict:
    """The member's run(s) of :mod:`onelayer.studies.walks.qa` (:func:`~onelayer.studies.walks.qa.run`,
    :func:`~onelayer.studies.walks.qa.bias_run` or :func:`~onelayer.studies.walks.qa.explorer_runs`), recorded."""
    s, f = settings, member.fields
    kind = f["kind"]
    if kind == "linear":
        h = qa.run(qa.setup_task(f["task"], normalize=f["normalize"]), steps=s.steps, record_every=1)
    elif kind == "symmetry":
        h = qa.run(qa.setup_task(2, positions=f["positions"]), steps=s.steps, init=f["init"], record_every=s.record_every)
    elif kind == "relu":
        h = qa.run(qa.setup_task(f["task"], hidden=s.relu_hidden, seed=f["seed"]), steps=s.steps, seed=f["seed"])
    elif kind == "bias":
        h = qa.bias_run(qa.setup_task(f["task"]), f["placement"], steps=s.steps, record_every=s.record_every)
    elif kind == "bias-zero":
        h = qa.bias_run(qa.setup_task(2), f["placement"], steps=s.steps, init="zero", record_every=s.record_every)
    elif kind == "long":
        h = qa.run(qa.setup_task(2), steps=s.long_steps, record_every=s.long_every)
    elif kind == "explorer":
        runs = qa.explorer_runs(f["sigma"], f["lr"], s.explore_normalize, s.explore_steps)
        return {str(task): _curves(h) for task, h in runs.items()}
    else:
        raise ValueError(f"member {member.key!r} has an unknown kind {kind!r}")
    return _curves(h)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per run (not the explorer's frames): its final recorded test accuracy."""
    return {r["key"]: r["result"]["records"]["test_accuracy"][-1] for r in records
            if "records" in r["result"] and "test_accuracy" in r["result"]["records"]}


STUDY = Study(name="walks-qa-runs", stored="walks/data/qa_runs.json", kind="walks-qa-runs", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize, rtol=0.0, atol=1e-12,
              description="Walks, Section 6: the question-answering chapter's single runs (seed 0; the ReLU variant "
                          "seeds 0 and 1) and the explorer's grid of initial scales by step sizes")


def history(result: dict) -> History:
    """One stored run (``{"steps", "records"}``) as a :class:`onelayer.training.History` (no parameters)."""
    return History(steps=np.asarray(result["steps"]),
                   records={k: np.asarray(v, dtype=float) for k, v in result["records"].items()})


def histories(stored: dict) -> dict[str, History | dict[int, History]]:
    """member key -> :func:`history` of its run (an explorer frame: task -> History) of a stored study
    (:func:`onelayer.studies.registry.load`)."""
    return {r["key"]: (history(r["result"]) if "records" in r["result"]
                       else {int(t): history(h) for t, h in r["result"].items()}) for r in stored["members"]}


def load(settings: Settings, path=None) -> dict:
    """:func:`histories` of the stored study (``path``: another file of it), refused (``ValueError``) unless it was
    run with ``settings``."""
    stored = load_study(STUDY.name, path=path)
    if Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in stored["settings"].items()}) != settings:
        raise ValueError(f"the stored study {STUDY.name} has settings {stored['settings']}, not {settings}: run "
                         f"`python -m onelayer study {STUDY.name}`")
    return histories(stored)


def run_one(settings: Settings, key: str):
    """The member ``key``'s run (or frame) under ``settings``, trained now, as :func:`histories` gives it."""
    member = next((m for m in members(settings) if m.key == key), None)
    if member is None:
        raise ValueError(f"key {key!r} is no member of walks-qa-runs under {settings}")
    return histories({"members": [{"key": key, "result": run_member(settings, member)}]})[key]


def curve_table(runs: dict) -> list[dict]:
    """Named runs (name -> History) as rows: run, step, test accuracy, KL and attention on the fruits."""
    return [{"run": name, "step": int(t), "test_accuracy": float(h["test_accuracy"][i]), "kl": float(h["kl"][i]),
             "fruit_attention": float(h["fruit_attention"][i])}
            for name, h in runs.items() for i, t in enumerate(h.steps)]


def symmetry_rows(runs: dict, settings: Settings) -> list[dict]:
    """The symmetry runs (key -> History, as :func:`load` gives) by initialisation and positional vectors: the
    largest output difference between the two Task-2 questions at step 0, over the run and at its end, and the final
    test accuracy."""
    rows = []
    for init in settings.symmetry_inits:
        for positions in settings.symmetry_positions:
            hist = runs[f"symmetry-{init}-{positions}"]
            gap = hist["output_gap"]
            rows.append({"init": init, "positions": positions, "gap_start": float(gap[0]), "gap_max": float(gap.max()),
                         "gap_end": float(gap[-1]), "test_accuracy": float(hist.final("test_accuracy"))})
    return rows


def relu_rows(relu: dict) -> list[dict]:
    """The ReLU runs (``(task, seed) -> History``): test accuracy at steps 10, 50 and at the end, and the final KL."""
    return [{"seed": s, "task": t, "accuracy_10": float(h.at("test_accuracy", 10)),
             "accuracy_50": float(h.at("test_accuracy", 50)), "accuracy_end": float(h.final("test_accuracy")),
             "kl_end": float(h.final("kl"))} for (t, s), h in relu.items()]


def normalization_rows(linear: dict) -> list[dict]:
    """The linear runs by normalisation (normalisation -> (Task-1 History, Task-2 History)): the final accuracy of
    both tasks and Task 1's attention on the fruits at step 0 and at the end."""
    return [{"normalize": normalize, "task1_accuracy": float(t1.final("test_accuracy")),
             "task2_accuracy": float(t2.final("test_accuracy")),
             "task1_fruit_attention_start": float(t1["fruit_attention"][0]),
             "task1_fruit_attention_end": float(t1.final("fruit_attention"))} for normalize, (t1, t2) in linear.items()]


def gap_rows(hist: History) -> list[dict]:
    """A Task-2 run as rows: step, largest output difference of the two questions, test accuracy."""
    return [{"step": int(t), "output_gap": float(g), "test_accuracy": float(a)}
            for t, g, a in zip(hist.steps, hist["output_gap"], hist["test_accuracy"])]
