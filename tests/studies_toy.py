"""A toy study for the runner's tests (tests/test_studies_runner.py): 8 seeds × 2 sizes of a few float64 matrix
products and gradient steps in torch (so BLAS runs in every member). Registered only by the tests (monkeypatched
into onelayer.studies.registry.MODULES)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

import torch

from onelayer.studies.runner import Member, Study


@dataclass(frozen=True)
class Settings:
    seeds: int = 8
    sizes: tuple[int, ...] = (12, 24)
    steps: int = 20
    lr: float = 0.1


def members(settings: Settings) -> list[Member]:
    return [Member(key=f"n{n:03d}-s{seed:02d}", fields={"n": n, "seed": seed}, cost=float(n))
            for n in settings.sizes for seed in range(settings.seeds)]


def run_member(settings: Settings, member: Member) -> dict:
    n, seed = member.fields["n"], member.fields["seed"]
    gen = torch.Generator().manual_seed(1000 * n + seed)
    X = torch.randn(4 * n, n, generator=gen, dtype=torch.float64) / n**0.5
    y = X @ torch.randn(n, generator=gen, dtype=torch.float64) + 0.1 * torch.randn(4 * n, generator=gen, dtype=torch.float64)
    w = torch.zeros(n, dtype=torch.float64)
    losses = []
    for _ in range(settings.steps):
        r = X @ w - y
        losses.append(float(r @ r) / (2 * len(y)))
        w = w - settings.lr * (X.T @ r) / len(y) * 4
    gram = X.T @ X
    return {"loss": losses[-1], "first_loss": losses[0], "decreased": losses[-1] < losses[0],
            "trace": float(torch.trace(gram)), "largest": float(torch.linalg.eigvalsh(gram)[-1]), "n": n}


def summarize(settings: Settings, records: list[dict]) -> dict:
    by_n: dict[int, list[float]] = {}
    for record in records:
        by_n.setdefault(record["fields"]["n"], []).append(record["result"]["loss"])
    return {"mean_loss": {str(n): sum(v) / len(v) for n, v in sorted(by_n.items())},
            "all_decreased": all(r["result"]["decreased"] for r in records)}


STUDY = Study(name="toy", stored="studies/toy.json", kind="toy", settings=Settings(),
              quick=Settings(seeds=2, sizes=(8,), steps=5), members=members, run_member=run_member,
              summarize=summarize, description="the runner tests' toy study")


def run_member_timed(settings: Settings, member: Member) -> dict:
    """``run_member`` with a reading of the machine that ran it, ``worker`` (the process id: not a function of the
    member, as a wall time is not; no clock in a test), a measured field of :data:`TIMED`."""
    return {**run_member(settings, member), "worker": os.getpid()}


#: The toy study with a measured field, ``worker`` (the runner stores it apart and never compares it).
TIMED = dataclasses.replace(STUDY, run_member=run_member_timed, measured=("worker",))
