"""The question-answering runs of Section 6 over many seeds: how often each outcome happens (issue 22).

One run of :mod:`onelayer.studies.walks.qa` is one training sample and one Gaussian initialisation. A *seed* ``s`` fixes
both: the training sentences of ``setup_task(task, seed=s)`` and the initial ``V``, ``q`` of seed ``s`` (seed 0 is
the chapter's run). :func:`seed_run` trains one run and scores it on the task's exact population (all 32 lists of
Task 1, both sentences of Task 2, equally likely), so an accuracy is the expected test accuracy, with no test-set
noise. Per run it records, at every step, that accuracy and how many different answers the model gives over the
population. The study :data:`STUDY` (``python -m onelayer study walks-qa-seeds``, about 6 minutes on one core) runs
every setting for seeds ``0 .. 39``, one member per setting and seed; :func:`payload` gives its runs grouped by setting
and :func:`outcome_counts` turns the runs into counts of the outcomes the chapter talks about:

``learned_<t>``
    the population accuracy at step ``t`` is at least :data:`LEARNED` (0.99, the chapter's "about 100%");
``near_chance``
    the final accuracy is within :data:`NEAR` (0.05) of one half, the share of either answer in the task (the
    chapter's "about 50%"; a run that predicts one answer for every input scores exactly 1/2);
``single_answer``
    the model gives the same answer to every input of the population at the final step.

Settings (all [ours] unless the chapter says otherwise): the bias placement of :data:`onelayer.studies.walks.qa.BIASES`,
the attention normalisation (``"keys_and_query"``, ``"keys"`` or ``"none"``), or the hidden ReLU layer of Appendix F.2
(``hidden=19``, no bias). With ``frozen=True`` (the control of :mod:`onelayer.studies.walks.qa_frozen`) the attention
(``q`` and the attention bias ``beta``) keeps its initial value: only ``V`` (and the output bias, the ReLU layer's
``A``) trains.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...training import train
from ...validation import check_choice, check_int
from ...walks import prediction
from . import qa
from ...walks import qa as qa_tasks
from ..runner import Member, Study

__all__ = ["LEARNED", "NEAR", "NORMALIZATIONS", "ATTENTION", "Settings", "QUICK", "STUDY", "seed_run", "step_sizes",
           "outcome_counts", "setting_list", "payload"]

#: Accuracy from which a run counts as learned (the chapter's "about 100%").
LEARNED = 0.99
#: Largest distance from 1/2 of an accuracy "near chance" (the chapter's "about 50%").
NEAR = 0.05
#: The attention normalisations compared as readings.
NORMALIZATIONS = ("keys_and_query", "keys", "none")
#: The parameters of the attention (the query ``q = W x~_N`` and the attention bias), frozen with ``frozen=True``.
ATTENTION = ("q", "beta")


def seed_run(task: int, seed: int, *, bias: str = "none", normalize: str = "keys_and_query", hidden: int | None = None,
             steps: int = 100, lr: float = 0.1, sigma: float = 0.01, keep_every: int = 1, frozen: bool = False) -> dict:
    """One run of Section 6 with seed ``seed`` (training sample and initialisation), scored on the exact population.

    Returns ``{"seed", "steps", "accuracy", "answers", "first_learned"}``: the population accuracy and the number
    of distinct answers at steps ``0, keep_every, ..., steps`` (the last step always kept), and the first step from
    which the accuracy stays at least :data:`LEARNED` to the end (``None`` if it does not), found at every step.
    ``hidden`` (the ReLU variant) cannot be combined with a bias. ``frozen``: the parameters of :data:`ATTENTION`
    get step size 0 (they keep their initial values exactly), the others ``lr``.
    """
    task = check_choice("task", task, qa_tasks.TASKS)
    seed = check_int("seed", seed, low=0)
    steps = check_int("steps", steps, low=1)
    keep_every = check_int("keep_every", keep_every, low=1)
    bias = check_choice("bias", bias, qa.BIASES)
    normalize = check_choice("normalize", normalize, NORMALIZATIONS)
    if hidden is not None and bias != "none":
        raise ValueError("bias must be 'none' when hidden is given (the bias option is defined for the linear model)")
    if not isinstance(frozen, bool):
        raise TypeError(f"frozen must be a bool, not {type(frozen).__name__}")
    exp = qa.setup_task(task, hidden=hidden, normalize=normalize, seed=seed)
    m, pop = exp.model, qa_tasks.task_population(task)

    def predictions(prm) -> torch.Tensor:
        f = m.forward(prm, pop) if hidden is not None else qa.bias_forward(m, prm, pop)
        return prediction.predict(f)

    record = {"accuracy": lambda prm: float(prediction.accuracy(predictions(prm), pop.labels, pop.weights)),
              "answers": lambda prm: float(torch.unique(predictions(prm)).numel())}
    params = m.init("gaussian", sigma=sigma, seed=seed) if hidden is not None else qa.bias_init(exp, bias, sigma=sigma, seed=seed)
    rates = step_sizes(params, lr, frozen=frozen)
    if hidden is not None:
        hist = m.train(params, exp.train, steps=steps, lr=rates, record=record, record_every=1)
    else:
        hist = train(params, lambda prm: qa.bias_loss_and_grads(m, prm, exp.train)[0], steps=steps, lr=rates,
                     record=record, record_every=1, grad_fn=lambda prm: qa.bias_loss_and_grads(m, prm, exp.train),
                     progress=False)
    acc = [float(a) for a in hist["accuracy"]]
    answers = [int(round(float(a))) for a in hist["answers"]]
    below = [t for t, a in zip(hist.steps, acc) if a < LEARNED]
    first = None if acc[-1] < LEARNED else (0 if not below else int(below[-1]) + 1)
    keep = [i for i, t in enumerate(hist.steps) if t % keep_every == 0 or i == len(acc) - 1]
    return {"seed": seed, "steps": [int(hist.steps[i]) for i in keep], "accuracy": [acc[i] for i in keep],
            "answers": [answers[i] for i in keep], "first_learned": first}


def _no_step(t: int) -> float:
    """The step-size schedule of a frozen parameter: 0 at every step (``p - 0 * g`` is ``p``)."""
    return 0.0


def step_sizes(params, lr: float, *, frozen: bool):
    """The ``lr`` of :func:`onelayer.training.train` for ``params``: ``lr`` itself, or (``frozen``) a mapping that
    gives the parameters of :data:`ATTENTION` step size 0 and the others ``lr``."""
    return {n: (_no_step if n in ATTENTION else lr) for n in params} if frozen else lr


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


@dataclass(frozen=True)
class Settings:
    """Seeds ``0 .. seeds - 1`` (seed 0 is the chapter's run), GD steps, steps kept (every ``keep_every``), and the
    settings: both tasks under every bias placement and normalisation, then the ReLU variant (``hidden``; keys and
    query normalised, no bias); ``attention``: ``"trained"`` (the paper's runs) or ``"frozen"`` (only ``V`` and the
    output-side parameters train)."""

    seeds: int = 40
    steps: int = 100
    keep_every: int = 5
    tasks: tuple[int, ...] = qa_tasks.TASKS
    normalizations: tuple[str, ...] = NORMALIZATIONS
    biases: tuple[str, ...] = qa.BIASES
    hidden: int | None = 19
    attention: str = "trained"


#: The ``--quick`` settings (seconds): 2 seeds, 5 steps, both tasks without bias (keys and query normalised) and with
#: the ReLU layer.
QUICK = Settings(seeds=2, steps=5, normalizations=("keys_and_query",), biases=("none",))


def setting_list(settings: Settings) -> list[dict]:
    """The settings of the study in their stored order: every normalisation x bias x task, then the ReLU variant per
    task, each a dict of :func:`seed_run` keyword arguments."""
    return ([{"task": t, "bias": b, "normalize": nz} for nz in settings.normalizations for b in settings.biases
             for t in settings.tasks]
            + ([{"task": t, "hidden": settings.hidden} for t in settings.tasks] if settings.hidden is not None else []))


def _setting_key(setting: dict) -> str:
    if "hidden" in setting:
        return f"t{setting['task']}-relu{setting['hidden']}"
    return f"t{setting['task']}-{setting['normalize']}-{setting['bias']}"


def members(settings: Settings) -> list[Member]:
    """One member per setting and seed, e.g. ``t1-keys_and_query-none-s007``, ``t2-relu19-s039``."""
    return [Member(f"{_setting_key(setting)}-s{seed:03d}", {**setting, "seed": seed},
                   cost=(2.0 if "hidden" in setting else 1.0) * settings.steps)
            for setting in setting_list(settings) for seed in range(settings.seeds)]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`seed_run` of the member's setting and seed."""
    fields = dict(member.fields)
    seed = fields.pop("seed")
    return seed_run(seed=seed, steps=settings.steps, keep_every=settings.keep_every,
                    frozen=check_choice("attention", settings.attention, ("trained", "frozen")) == "frozen", **fields)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Per setting (in :func:`setting_list` order): its keys and the :func:`outcome_counts` of its runs at steps 20
    and 100 (the runs themselves are the members; :func:`payload` groups them)."""
    runs = _runs_by_setting(settings, records)
    checks = tuple(sorted({min(t, settings.steps) for t in (20, 100)}))
    return {"learned": LEARNED, "near": NEAR,
            "counts": [{**setting, **outcome_counts(runs[_setting_key(setting)], checks)}
                       for setting in setting_list(settings)]}


def _runs_by_setting(settings: Settings, records: list[dict]) -> dict[str, list[dict]]:
    by_key = {r["key"]: r["result"] for r in records}
    return {_setting_key(s): [by_key[f"{_setting_key(s)}-s{seed:03d}"] for seed in range(settings.seeds)]
            for s in setting_list(settings)}


def payload(stored: dict) -> dict:
    """A stored study (:func:`onelayer.studies.registry.load` of ``walks-qa-seeds`` or ``walks-qa-frozen``) as the
    chapter reads it: ``quick``, ``seeds``, ``steps``, ``keep_every``, ``learned``, ``near``, ``attention`` and
    ``settings`` (per setting its keys, ``steps`` and ``runs``, seed by seed)."""
    settings = Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in stored["settings"].items()})
    runs = _runs_by_setting(settings, stored["members"])
    return {"quick": stored["quick"], "seeds": list(range(settings.seeds)), "steps": settings.steps,
            "keep_every": settings.keep_every, "learned": LEARNED, "near": NEAR, "attention": settings.attention,
            "settings": [{**s, "steps": settings.steps, "runs": runs[_setting_key(s)]} for s in setting_list(settings)]}


STUDY = Study(name="walks-qa-seeds", stored="walks/data/qa_seeds.json", kind="walks-qa-seeds", settings=Settings(),
              quick=QUICK, members=members, run_member=run_member, summarize=summarize, rtol=0.0, atol=1e-12,
              description="Walks, Section 6: both question-answering tasks over 40 seeds, every bias placement and "
                          "normalisation")
