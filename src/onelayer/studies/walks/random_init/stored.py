"""The stored random-initialisation study ``walks-random-init`` (:data:`STUDY`): every normalisation x reading x walk x
seed of :func:`~onelayer.studies.walks.random_init.runs.run_config`, one member per run.

``python -m onelayer study walks-random-init`` runs it (720 members of about 1.3 s each on an idle core; about half an
hour on one core, resumable). Seeds ``detail_seeds`` keep every curve, ``V`` and the attention profile; the others
keep what the rates need. :func:`payload` gives the stored study in the first script's layout (``meta``, ``runs``),
which the readings of :mod:`onelayer.studies.walks.random_init.readings` take.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...runner import Member, Study
from .runs import NORMALIZE, PAPER, READINGS, SNAPSHOT_STEPS, TABLE_STEPS, RunConfig, run_config

__all__ = ["Settings", "QUICK", "STUDY", "run_sizes", "payload", "quick_payload"]

#: The KL convention of the runs, as the first script's file stated it.
KL = "KL(P_true || P_hat), P_hat = (max(f, 0) + 1e-6) / sum, mean over the test walks"


@dataclass(frozen=True)
class Settings:
    """The grid (normalisations, ``(reduction, lr)`` readings, walks ``p``, seeds ``0 .. seeds - 1``, the seeds stored
    in detail), the run length and recording, and the paper's sizes (:data:`~onelayer.studies.walks.random_init.runs.PAPER`)."""

    normalizations: tuple[str, ...] = NORMALIZE[::-1]
    readings: tuple[tuple[str, float], ...] = READINGS
    ps: tuple[float, ...] = (0.5, 1.0)
    seeds: int = 20
    detail_seeds: tuple[int, ...] = (0, 1, 2)
    steps: int = 1000
    record_every: int = 10
    K: int = PAPER["K"]
    N: int = PAPER["N"]
    M: int = PAPER["M"]
    n_train: int = PAPER["n_train"]
    n_test: int = PAPER["n_test"]
    sigma: float = PAPER["sigma"]
    table_steps: tuple[int, ...] = TABLE_STEPS
    snapshot_steps: tuple[int, ...] = SNAPSHOT_STEPS


#: The ``--quick`` settings (seconds; the chapter's quick mode): one normalisation, two readings, one seed, tiny sizes.
QUICK = Settings(normalizations=("keys_and_query",), readings=(("mean", 0.01), ("sum", 0.1)), seeds=1, steps=20,
                 record_every=5, N=13, M=100, n_train=50, n_test=50, table_steps=(5, 10), snapshot_steps=(10, 20))


def _key(normalize: str, reduction: str, lr: float, p: float, seed: int) -> str:
    return f"{normalize}-{reduction}-lr{lr:g}-p{p:.1f}-s{seed:03d}"


def members(settings: Settings) -> list[Member]:
    """One member per run, e.g. ``keys_and_query-mean-lr0.01-p0.5-s007``."""
    return [Member(_key(nz, red, lr, p, seed), {"p": p, "normalize": nz, "reduction": red, "lr": lr, "seed": seed},
                   cost=float(settings.steps))
            for nz in settings.normalizations for red, lr in settings.readings for seed in range(settings.seeds)
            for p in settings.ps]


def run_member(settings: Settings, member: Member) -> dict:
    """:func:`~onelayer.studies.walks.random_init.runs.run_config` of the member's run, without its wall seconds (a
    measurement of the machine, not of the run; the study's provenance has the wall time)."""
    f = member.fields
    cfg = RunConfig(p=float(f["p"]), normalize=f["normalize"], reduction=f["reduction"], lr=float(f["lr"]),
                    seed=int(f["seed"]))
    out = run_config(cfg, detail=f["seed"] in settings.detail_seeds, **run_sizes(settings))
    del out["seconds"]
    return out


def run_sizes(settings: Settings) -> dict:
    """The keyword arguments of :func:`~onelayer.studies.walks.random_init.runs.run_config` that ``settings`` fix
    (run length, recording, sizes)."""
    c = settings
    return {"steps": c.steps, "record_every": c.record_every, "table_steps": c.table_steps,
            "snapshot_steps": c.snapshot_steps, "K": c.K, "N": c.N, "M": c.M, "n_train": c.n_train,
            "n_test": c.n_test, "sigma": c.sigma}


def _runs(settings: Settings, records: list[dict]) -> list[dict]:
    by_key = {r["key"]: r["result"] for r in records}
    return [by_key[_key(nz, red, lr, p, seed)] for nz in settings.normalizations for red, lr in settings.readings
            for seed in range(settings.seeds) for p in settings.ps]


def _settings(raw: dict) -> Settings:
    return Settings(**{k: tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v
                       for k, v in raw.items()})


def _meta(settings: Settings) -> dict:
    c = settings
    return {"K": c.K, "N": c.N, "M": c.M, "sigma": c.sigma, "lr": PAPER["lr"], "epsilon": PAPER["epsilon"],
            "n_train": c.n_train, "n_test": c.n_test, "steps": c.steps, "record_every": c.record_every,
            "table_steps": list(c.table_steps), "snapshot_steps": list(c.snapshot_steps),
            "normalizations": list(c.normalizations), "readings": [list(r) for r in c.readings], "ps": list(c.ps),
            "seeds": list(range(c.seeds)), "detail_seeds": list(c.detail_seeds), "kl": KL}


def summarize(settings: Settings, records: list[dict]) -> dict:
    """The grid as the first script described it (``meta``); the runs are the members (:func:`payload`)."""
    return {"meta": _meta(settings)}


def payload(stored: dict) -> dict:
    """A stored study (:func:`onelayer.studies.registry.load`, or a quick one) in the first script's layout: ``meta``
    and ``runs`` (normalisation, reading, seed, walk order)."""
    settings = _settings(stored["settings"])
    return {"meta": {**_meta(settings), "quick": stored["quick"]}, "runs": _runs(settings, stored["members"])}


def quick_payload() -> dict:
    """The :data:`QUICK` settings run here, every member, in :func:`payload`'s layout (nothing stored)."""
    records = [{"key": m.key, "fields": dict(m.fields), "result": STUDY.run_member(QUICK, m)}
               for m in STUDY.member_list(QUICK)]
    return payload({"quick": True, "settings": dataclasses.asdict(QUICK), "members": records})


STUDY = Study(name="walks-random-init", stored="walks/data/random_init_sweep.json", kind="walks-random-init-sweep",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Section 5.2: GD from small Gaussian initialisation, 3 normalisations x 6 step "
                          "readings x 2 walks x 20 seeds")
