"""Readings of the question-answering studies ``walks-qa-seeds`` and ``walks-qa-frozen``: the runs grouped by setting,
the rate of each outcome per setting, and what a rate (or a trained rate beside its frozen-attention control) says.

The outcomes are those of :func:`onelayer.studies.walks.qa_seeds.outcome_counts`; a rate is a
:class:`onelayer.rates.Rate` (``k/n`` with its 95% Wilson interval).
"""

from __future__ import annotations

import dataclasses
import functools

from ...rates import Rate, rate
from ..registry import load
from . import qa_frozen, qa_seeds

__all__ = ["seed_study", "frozen_study", "reading_label", "seed_rates", "setting_key", "find", "rate_rows", "share_verdict",
           "attention_verdict"]


@functools.lru_cache(maxsize=2)
def seed_study(quick: bool = False) -> dict:
    """The runs over many seeds (:func:`onelayer.studies.walks.qa_seeds.payload`): the stored study
    (``python -m onelayer study walks-qa-seeds``), or (``quick``) its quick settings run here."""
    study = qa_seeds.STUDY
    if quick:
        records = [{"key": m.key, "fields": dict(m.fields), "result": study.run_member(study.quick, m)}
                   for m in study.member_list(study.quick)]
        return qa_seeds.payload({"quick": True, "settings": dataclasses.asdict(study.quick), "members": records})
    return qa_seeds.payload(load(study.name))


@functools.lru_cache(maxsize=1)
def frozen_study() -> dict:
    """The frozen-attention control (:mod:`onelayer.studies.walks.qa_frozen`, ``python -m onelayer study
    walks-qa-frozen``): the runs of :func:`seed_study` with the attention kept at its initialisation."""
    return qa_seeds.payload(load(qa_frozen.STUDY.name))


def reading_label(setting: dict) -> str:
    """The reading a setting of ``walks-qa-seeds`` stands for, in words (e.g. "output bias, keys normalised")."""
    if setting.get("hidden") is not None:
        return f"ReLU layer, m = {setting['hidden']}"
    norm = {"keys_and_query": "keys and query normalised", "keys": "keys normalised",
            "none": "no normalisation"}[setting["normalize"]]
    bias = {"none": "no bias", "output": "output bias", "attention": "attention bias",
            "both": "attention and output biases"}[setting["bias"]]
    return f"{bias}, {norm}"


def seed_rates(data: dict, check_steps: tuple[int, ...] = (20, 100)) -> list[dict]:
    """For each setting of a study: its task and reading, and the :class:`onelayer.rates.Rate` of each outcome of
    :func:`onelayer.studies.walks.qa_seeds.outcome_counts` (``learned_<t>`` at the ``check_steps`` the runs reach)."""
    checks = tuple(sorted({min(t, data["steps"]) for t in check_steps}))
    out = []
    for setting in data["settings"]:
        counts = qa_seeds.outcome_counts(setting["runs"], checks)
        n = counts.pop("n")
        finals = [round(r["accuracy"][-1], 3) for r in setting["runs"]]
        out.append({"task": setting["task"], "bias": setting.get("bias", "none"),
                    "normalize": setting.get("normalize", "keys_and_query"), "hidden": setting.get("hidden"),
                    "reading": reading_label(setting), "steps": data["steps"], "checks": checks,
                    "rates": {k: rate(v, n) for k, v in counts.items()},
                    "finals": {a: finals.count(a) for a in sorted(set(finals))},
                    "seed0_first_learned": setting["runs"][0]["first_learned"]})
    return out


def share_verdict(r: Rate) -> str:
    """What a rate says about a claim that the outcome happens: every run, most (interval above 1/2), about half
    (interval holds 1/2), a minority (interval below 1/2), no run."""
    if not isinstance(r, Rate):
        raise TypeError(f"r must be a Rate, not {type(r).__name__}")
    if r.k == r.n:
        return f"holds in every run ({r.k}/{r.n})"
    if r.k == 0:
        return f"fails in every run (0/{r.n})"
    if r.low > 0.5:
        return "holds in most runs"
    if r.high < 0.5:
        return "holds in a minority of runs"
    return "holds in about half the runs"


def setting_key(r: dict) -> tuple:
    """A row of :func:`seed_rates` by its setting: task, bias, normalisation, hidden width."""
    return r["task"], r["bias"], r["normalize"], r["hidden"]


def attention_verdict(trained: Rate, frozen: Rate) -> str:
    """What training the attention adds to a "learned" rate, from the same runs with the attention frozen at its
    initialisation (``frozen``): nothing measurable when the intervals overlap and the frozen rate is high too (the
    claim then does not test the attention), else the difference."""
    if not isinstance(trained, Rate) or not isinstance(frozen, Rate):
        raise TypeError("trained and frozen must be Rates")
    overlap = frozen.high >= trained.low and frozen.low <= trained.high
    if frozen.low > 0.5 and overlap:
        return (f"also learned with the attention frozen ({frozen.text()}): V alone reads the answer off the initial "
                f"attention's token average, so this claim does not test the attention")
    if frozen.high < trained.low:
        return (f"with the attention frozen only {frozen.text()}: training the attention raises the rate beyond the "
                f"sampling intervals")
    if trained.high < frozen.low:
        return f"with the attention frozen {frozen.text()}: training the attention makes it worse"
    return f"with the attention frozen {frozen.text()}: no measurable difference from training the attention"


def find(rates: list[dict], task: int, bias: str = "none", normalize: str = "keys_and_query", hidden=None) -> dict:
    """The row of :func:`seed_rates` of one setting."""
    return next(r for r in rates if setting_key(r) == (task, bias, normalize, hidden))


def rate_rows(rates: list[dict], frozen: list[dict] | None = None) -> list[dict]:
    """:func:`seed_rates` as plain numbers, one row per setting: task, reading, the checked steps, ``<outcome>_k``,
    ``_n``, ``_low``, ``_high`` of each outcome, and (with the control's ``frozen`` rates) the same prefixed
    ``frozen_`` (``None`` where the control has no such setting); the final accuracies with how many runs end at each."""
    control_of = {} if frozen is None else {setting_key(r): r for r in frozen}
    rows = []
    for r in rates:
        row = {"task": r["task"], "reading": r["reading"], "checks": list(r["checks"])}
        for k, v in r["rates"].items():
            row.update({f"{k}_k": v.k, f"{k}_n": v.n, f"{k}_low": v.low, f"{k}_high": v.high})
        if frozen is not None:
            control = control_of.get(setting_key(r))
            for k in r["rates"]:
                v = control["rates"][k] if control is not None else None
                row.update({f"frozen_{k}_{a}": (getattr(v, a) if v is not None else None)
                            for a in ("k", "n", "low", "high")})
        row["final_accuracies"] = ", ".join(f"{a:g}: {k}" for a, k in r["finals"].items())
        rows.append(row)
    return rows
