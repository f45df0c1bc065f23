"""The question-answering runs of Section 6 over many seeds: how often each outcome happens (issue 22).

One run of :mod:`onelayer.studies.walks.qa` is one training sample and one Gaussian initialisation. A *seed* ``s`` fixes
both: the training sentences of ``setup_task(task, seed=s)`` and the initial ``V``, ``q`` of seed ``s`` (seed 0 is
the chapter's run). :func:`seed_run` trains one run and scores it on the task's exact population (all 32 lists of
Task 1, both sentences of Task 2, equally likely), so an accuracy is the expected test accuracy, with no test-set
noise. Per run it records, at every step, that accuracy and how many different answers the model gives over the
population. :func:`seed_sweep` runs a list of seeds for each setting; :func:`outcome_counts` turns the runs into
counts of the outcomes the chapter talks about:

``learned_<t>``
    the population accuracy at step ``t`` is at least :data:`LEARNED` (0.99, the chapter's "about 100%");
``near_chance``
    the final accuracy is within :data:`NEAR` (0.05) of one half, the share of either answer in the task (the
    chapter's "about 50%"; a run that predicts one answer for every input scores exactly 1/2);
``single_answer``
    the model gives the same answer to every input of the population at the final step.

Settings (all [ours] unless the chapter says otherwise): the bias placement of :data:`onelayer.studies.walks.qa.BIASES`,
the attention normalisation (``"keys_and_query"``, ``"keys"`` or ``"none"``), or the hidden ReLU layer of Appendix F.2
(``hidden=19``, no bias).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from ... import paths, store
from ...training import train
from ...validation import check_choice, check_instances, check_int
from ...walks import prediction
from . import qa
from ...walks import qa as qa_tasks

__all__ = ["LEARNED", "NEAR", "NORMALIZATIONS", "SEEDS", "SWEEP_SETTINGS", "STORED", "KIND", "seed_run", "seed_sweep",
           "outcome_counts", "stored_sweep", "save", "load", "main"]

#: Accuracy from which a run counts as learned (the chapter's "about 100%").
LEARNED = 0.99
#: Largest distance from 1/2 of an accuracy "near chance" (the chapter's "about 50%").
NEAR = 0.05
#: The attention normalisations compared as readings.
NORMALIZATIONS = ("keys_and_query", "keys", "none")
#: The seeds of the stored sweep (seed 0 is the chapter's run) and its settings: both tasks under every bias
#: placement and every normalisation, and the ReLU variant (keys and query normalised, no bias).
SEEDS = tuple(range(40))
SWEEP_SETTINGS = tuple([{"task": t, "bias": b, "normalize": nz} for nz in NORMALIZATIONS for b in qa.BIASES
                        for t in qa_tasks.TASKS] + [{"task": t, "hidden": 19} for t in qa_tasks.TASKS])
#: Where the stored sweep lives in the data directory, its kind, and the steps kept in it.
STORED = "walks/data/qa_seeds.json"
KIND = "walks-qa-seeds"
KEEP_EVERY = 5


def seed_run(task: int, seed: int, *, bias: str = "none", normalize: str = "keys_and_query", hidden: int | None = None,
             steps: int = 100, lr: float = 0.1, sigma: float = 0.01, keep_every: int = 1) -> dict:
    """One run of Section 6 with seed ``seed`` (training sample and initialisation), scored on the exact population.

    Returns ``{"seed", "steps", "accuracy", "answers", "first_learned"}``: the population accuracy and the number
    of distinct answers at steps ``0, keep_every, ..., steps`` (the last step always kept), and the first step from
    which the accuracy stays at least :data:`LEARNED` to the end (``None`` if it does not), found at every step.
    ``hidden`` (the ReLU variant) cannot be combined with a bias.
    """
    task = check_choice("task", task, qa_tasks.TASKS)
    seed = check_int("seed", seed, low=0)
    steps = check_int("steps", steps, low=1)
    keep_every = check_int("keep_every", keep_every, low=1)
    bias = check_choice("bias", bias, qa.BIASES)
    normalize = check_choice("normalize", normalize, NORMALIZATIONS)
    if hidden is not None and bias != "none":
        raise ValueError("bias must be 'none' when hidden is given (the bias option is defined for the linear model)")
    exp = qa.setup_task(task, hidden=hidden, normalize=normalize, seed=seed)
    m, pop = exp.model, qa_tasks.task_population(task)

    def predictions(prm) -> torch.Tensor:
        f = m.forward(prm, pop) if hidden is not None else qa.bias_forward(m, prm, pop)
        return prediction.predict(f)

    record = {"accuracy": lambda prm: float(prediction.accuracy(predictions(prm), pop.labels, pop.weights)),
              "answers": lambda prm: float(torch.unique(predictions(prm)).numel())}
    if hidden is not None:
        hist = m.train(m.init("gaussian", sigma=sigma, seed=seed), exp.train, steps=steps, lr=lr, record=record,
                       record_every=1)
    else:
        params = qa.bias_init(exp, bias, sigma=sigma, seed=seed)
        hist = train(params, lambda prm: qa.bias_loss_and_grads(m, prm, exp.train)[0], steps=steps, lr=lr,
                     record=record, record_every=1, grad_fn=lambda prm: qa.bias_loss_and_grads(m, prm, exp.train),
                     progress=False)
    acc = [float(a) for a in hist["accuracy"]]
    answers = [int(round(float(a))) for a in hist["answers"]]
    below = [t for t, a in zip(hist.steps, acc) if a < LEARNED]
    first = None if acc[-1] < LEARNED else (0 if not below else int(below[-1]) + 1)
    keep = [i for i, t in enumerate(hist.steps) if t % keep_every == 0 or i == len(acc) - 1]
    return {"seed": seed, "steps": [int(hist.steps[i]) for i in keep], "accuracy": [acc[i] for i in keep],
            "answers": [answers[i] for i in keep], "first_learned": first}


def seed_sweep(settings, seeds, *, steps: int = 100, keep_every: int = 1, progress=None) -> list[dict]:
    """:func:`seed_run` for every setting (a dict of its keyword arguments with ``task``) and every seed.

    Returns one dict per setting: the setting's keys, ``steps`` and ``runs`` (the runs in the order of ``seeds``).
    """
    seeds = [check_int("seeds", s, low=0) for s in check_instances("seeds", seeds, int, "one per run")]
    out = []
    for setting in settings:
        if not isinstance(setting, dict) or "task" not in setting:
            raise TypeError(f"settings must be dicts with a 'task' key; got {setting!r}")
        runs = [seed_run(seed=s, steps=steps, keep_every=keep_every, **setting) for s in seeds]
        out.append({**setting, "steps": steps, "runs": runs})
        if progress is not None:
            progress(f"{setting}: done")
    return out


def outcome_counts(runs, check_steps=(20, 100)) -> dict[str, int]:
    """Counts over ``runs`` (of :func:`seed_run`): ``n``, ``learned_<t>`` for each ``t`` of ``check_steps``,
    ``near_chance`` and ``single_answer`` (at the last step), ``single_and_near`` (both)."""
    runs = list(runs)
    if not runs:
        raise ValueError("runs must hold at least one run")
    out = {"n": len(runs)}
    for t in check_steps:
        t = check_int("check_steps", t, low=0)
        if any(t not in r["steps"] for r in runs):
            raise ValueError(f"check_steps: step {t} is not a kept step of every run")
        out[f"learned_{t}"] = sum(r["accuracy"][r["steps"].index(t)] >= LEARNED for r in runs)
    near = [abs(r["accuracy"][-1] - 0.5) <= NEAR for r in runs]
    single = [r["answers"][-1] == 1 for r in runs]
    out["near_chance"] = sum(near)
    out["single_answer"] = sum(single)
    out["single_and_near"] = sum(a and b for a, b in zip(near, single))
    return out


def stored_sweep(*, quick: bool = False, progress=print) -> dict:
    """The sweep stored in :data:`STORED`: :func:`seed_sweep` of :data:`SWEEP_SETTINGS` over :data:`SEEDS`, 100 steps,
    steps kept every :data:`KEEP_EVERY`. About 6 minutes on one core (``quick``: 2 seeds, 5 steps, 4 settings)."""
    settings = SWEEP_SETTINGS[:2] + SWEEP_SETTINGS[-2:] if quick else SWEEP_SETTINGS
    seeds, steps = (SEEDS[:2], 5) if quick else (SEEDS, 100)
    return {"quick": quick, "seeds": list(seeds), "steps": steps, "keep_every": KEEP_EVERY,
            "learned": LEARNED, "near": NEAR,
            "settings": seed_sweep(settings, seeds, steps=steps, keep_every=KEEP_EVERY, progress=progress)}


def save(data: dict, path) -> Path:
    """Write a :func:`stored_sweep` result as a versioned JSON file of kind :data:`KIND`."""
    return store.write_json(path, data, kind=KIND, indent=None)


def load(path=None) -> dict:
    """Read the stored sweep: ``path`` (see :func:`onelayer.paths.resolve`) or :data:`STORED` in the data directory."""
    path = paths.data_path(STORED) if path is None else paths.resolve(path)
    if not path.exists():
        raise FileNotFoundError(f"no stored question-answering sweep at {path}; run python -m onelayer sweep walks-qa-seeds")
    return store.read_json(path, kind=KIND)


def main(argv=None) -> int:
    """Command line (``python -m onelayer sweep walks-qa-seeds``): compute :func:`stored_sweep` and write it."""
    parser = argparse.ArgumentParser(prog="python -m onelayer sweep walks-qa-seeds",
                                     description="Section 6 question answering over many seeds (issue 22)")
    parser.add_argument("--out", required=True, help="path of the JSON file to write")
    parser.add_argument("--quick", action="store_true", help="a tiny version in seconds")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    path = save(stored_sweep(quick=args.quick), args.out)
    print(f"wrote {path} in {time.perf_counter() - start:.0f} s")
    return 0
