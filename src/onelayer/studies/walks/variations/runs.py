"""The variations chapter's single runs of the 1/sqrt(d) logit scale and of the model without positions, stored: the
study ``walks-variations-runs``.

The chapter draws the ``1/sqrt(d)`` logit scale against scale 1 (one run per walk parameter and scale,
:func:`~onelayer.studies.walks.variations.logit_scale.logit_scale_table`), checks the reparametrisation lemma
(:func:`~onelayer.studies.walks.variations.logit_scale.logit_scale_equivalence`) and tabulates the model trained
without positional vectors (:func:`~onelayer.studies.walks.variations.no_positions.no_position_table`) and draws one
run on each of two non-circulant chains (:func:`~onelayer.studies.walks.variations.non_circulant.chain_run`). Those runs take
most of the chapter's execution, so they are stored once and loaded; rates over seeds are the study
``walks-variations-seeds``.

A member is the equivalence check (``equivalence``), the logit-scale runs of one walk parameter (``logit-scale-p0.7``:
scale 1, then ``1/sqrt(d)``), the run without positions of one walk parameter (``no-position-p1``) or the run on
one non-circulant chain (``chain-random``, ``chain-doubly-stochastic``).
``python -m onelayer study walks-variations-runs`` runs it (well under a minute on one core); :func:`load` gives the
rows in the chapter's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...registry import load as load_study
from ...runner import Member, Study
from .logit_scale import logit_scale_equivalence, logit_scale_table
from .no_positions import no_position_table
from .non_circulant import chain_run, random_doubly_stochastic, random_transition_matrix

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]

#: The curves of a logit-scale row (arrays over the recorded steps).
CURVES = ("steps", "optimal_fraction", "parent_curve")
#: The two non-circulant chains (Dirichlet rows; doubly stochastic) and the arrays of their runs.
CHAINS = ("random", "doubly stochastic")
CHAIN_ARRAYS = ("Pi", "mu", "steps", "parent_attention", "optimal_fraction", "test_accuracy", "d_steps", "V_final")


def transition_matrix(settings, kind: str) -> np.ndarray:
    """The chain ``kind`` (``"random"``: Dirichlet rows, ``"doubly stochastic"``) of ``settings`` (``chain_K`` and the
    kind's seed)."""
    if kind == "random":
        return random_transition_matrix(settings.chain_K, seed=settings.chain_seed)
    if kind == "doubly stochastic":
        return random_doubly_stochastic(settings.chain_K, seed=settings.doubly_stochastic_seed)
    raise ValueError(f"kind must be 'random' or 'doubly stochastic'; got {kind!r}")


@dataclass(frozen=True)
class Settings:
    """Walk parameters and GD steps of the logit-scale table, of the equivalence check and of the runs without
    positions ([ours]; the step size is the paper's eta = 1)."""

    logit_scale_ps: tuple[float, ...] = (0.5, 0.7)
    logit_scale_steps: int = 60
    equivalence_p: float = 0.7
    equivalence_steps: int = 30
    no_position_ps: tuple[float, ...] = (0.5, 0.7, 1.0)
    no_position_steps: int = 200
    chain_K: int = 6
    chain_seed: int = 0
    doubly_stochastic_seed: int = 1
    chain_steps: int = 300


#: ``--quick``: a few steps (seconds).
QUICK = Settings(logit_scale_steps=5, equivalence_steps=3, no_position_steps=5, chain_steps=10)


def members(settings: Settings) -> list[Member]:
    """The equivalence check, then one member per walk parameter of each table; cost hint: GD steps."""
    s = settings
    return ([Member("equivalence", {"kind": "equivalence"}, cost=2.0 * s.equivalence_steps)]
            + [Member(f"logit-scale-p{p:g}", {"kind": "logit-scale", "p": p}, cost=2.0 * s.logit_scale_steps)
               for p in s.logit_scale_ps]
            + [Member(f"no-position-p{p:g}", {"kind": "no-position", "p": p}, cost=float(s.no_position_steps))
               for p in s.no_position_ps]
            + [Member(f"chain-{kind.replace(' ', '-')}", {"kind": "chain", "chain": kind}, cost=float(s.chain_steps))
               for kind in CHAINS])


def run_member(settings: Settings, member: Member) -> dict:
    """The member's check (``{"equivalence": ...}``) or table rows (``{"rows": [...]}``)."""
    s, f = settings, member.fields
    if f["kind"] == "equivalence":
        eq = logit_scale_equivalence(s.equivalence_p, steps=s.equivalence_steps)
        return {"equivalence": {k: float(v) for k, v in eq.items()}}
    if f["kind"] == "logit-scale":
        return {"rows": logit_scale_table((f["p"],), steps=s.logit_scale_steps)}
    if f["kind"] == "no-position":
        return {"rows": no_position_table((f["p"],), steps=s.no_position_steps)}
    if f["kind"] == "chain":
        return {"chain": chain_run(transition_matrix(s, f["chain"]), steps=s.chain_steps)}
    raise ValueError(f"member {member.key!r} has an unknown kind {f['kind']!r}")


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The steps to all-optimal (``T0``) of each logit-scale run, by member key and scale."""
    return {r["key"]: {row["logit_scale"]: row["T0"] for row in r["result"]["rows"]} for r in records
            if r["key"].startswith("logit-scale")}


STUDY = Study(name="walks-variations-runs", stored="walks/data/variations_runs.json", kind="walks-variations-runs",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              rtol=0.0, atol=1e-12,
              description="Walks, variations: the 1/sqrt(d) logit scale against scale 1 (p = 0.5, 0.7), the "
                          "reparametrisation check, the model without positions (p = 0.5, 0.7, 1) and two non-circulant "
                          "chains, one run each")


def load(settings: Settings, path=None) -> dict:
    """The stored study (``path``: another file of it), refused (``ValueError``) unless run with ``settings``:
    ``equivalence``, ``logit_scale`` (rows in the order of
    :func:`~onelayer.studies.walks.variations.logit_scale.logit_scale_table`, curves as arrays) and ``no_position``
    (rows in the order of :func:`~onelayer.studies.walks.variations.no_positions.no_position_table`) and ``chains``
    (kind -> the run of :func:`~onelayer.studies.walks.variations.non_circulant.chain_run`, arrays as arrays)."""
    data = load_study(STUDY.name, path=path)
    if Settings(**{k: tuple(v) if isinstance(v, list) else v for k, v in data["settings"].items()}) != settings:
        raise ValueError(f"the stored study {STUDY.name} has settings {data['settings']}, not {settings}: run "
                         f"`python -m onelayer study {STUDY.name}`")
    by_key = {r["key"]: r["result"] for r in data["members"]}
    logit = [{**row, **{k: np.asarray(row[k]) for k in CURVES}} for p in settings.logit_scale_ps
             for row in by_key[f"logit-scale-p{p:g}"]["rows"]]
    chains = {kind: by_key[f"chain-{kind.replace(' ', '-')}"]["chain"] for kind in CHAINS}
    chains = {kind: {**r, **{k: np.asarray(r[k]) for k in CHAIN_ARRAYS}, "d": {n: np.asarray(d) for n, d in r["d"].items()}}
              for kind, r in chains.items()}
    return {"equivalence": by_key["equivalence"]["equivalence"], "logit_scale": logit, "chains": chains,
            "no_position": [row for p in settings.no_position_ps for row in by_key[f"no-position-p{p:g}"]["rows"]]}
