"""The studies runner (:mod:`onelayer.studies.runner`): one study on 1 job, on 2 loky jobs and on a Dask LocalCluster.

The study is a toy but realistic one (not a paper's): each member is a seeded float64 gradient-descent loop of a small
tanh network (about half a second on one core in the full mode), so a member costs what the book's short studies'
members cost and the runner's overhead (starting workers, importing torch there, writing one record per member) is
seen at its real size. One step is one member: the times are wall seconds of the whole run (worker start-up
included) divided by the members; the speed-up of the 2-job rows is (1 job) / (2 jobs), which two idle cores would
put near 2. The machine may be shared: each row carries the load average before it ran, and ``same_bytes`` says
whether the stored file (without provenance) equals the 1-job file.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks.harness import make_row
from onelayer.studies.runner import Member, Study, run as run_study, stored_without_provenance

__all__ = ["run"]


@dataclass(frozen=True)
class Settings:
    members: int = 40
    width: int = 32
    samples: int = 128
    steps: int = 2500
    lr: float = 0.05


QUICK = Settings(members=6, steps=100)


def members(settings: Settings) -> list[Member]:
    return [Member(key=f"s{seed:03d}", fields={"seed": seed}) for seed in range(settings.members)]


def run_member(settings: Settings, member: Member) -> dict:
    """``settings.steps`` GD steps (hand-written gradients, float64) of ``y ≈ tanh(X W) v`` from a seeded start."""
    gen = torch.Generator().manual_seed(member.fields["seed"])
    n, d = settings.samples, settings.width
    X = torch.randn(n, d, generator=gen, dtype=torch.float64) / d**0.5
    y = torch.tanh(X @ torch.randn(d, d, generator=gen, dtype=torch.float64)) @ torch.randn(d, generator=gen, dtype=torch.float64)
    W = 0.1 * torch.randn(d, d, generator=gen, dtype=torch.float64)
    v = 0.1 * torch.randn(d, generator=gen, dtype=torch.float64)
    for _ in range(settings.steps):
        H = torch.tanh(X @ W)
        r = H @ v - y
        grad_v = H.T @ r / n
        grad_W = X.T @ (torch.outer(r, v) * (1 - H * H)) / n
        v = v - settings.lr * grad_v
        W = W - settings.lr * grad_W
    r = torch.tanh(X @ W) @ v - y
    return {"loss": float(r @ r) / (2 * n), "weight_norm": float(W.norm())}


def summarize(settings: Settings, records: list[dict]) -> dict:
    losses = [r["result"]["loss"] for r in records]
    return {"mean_loss": sum(losses) / len(losses)}


def study(quick: bool) -> Study:
    settings = QUICK if quick else Settings()
    return Study(name="bench-studies", stored="bench/studies.json", kind="bench-studies", settings=settings,
                 quick=QUICK, members=members, run_member=run_member, summarize=summarize)


def run(quick: bool = False) -> list[dict]:
    """Rows: 2 loky jobs vs 1 job, and a two-worker Dask LocalCluster vs 1 job (see the module docstring)."""
    toy = study(quick)
    count = toy.settings.members
    config = (f"{count} members, each {toy.settings.steps} GD steps of tanh(XW)v, X {toy.settings.samples}x"
              f"{toy.settings.width}, float64; one step = one member, wall time incl. worker start-up")
    with tempfile.TemporaryDirectory() as tmp:
        def timed(label: str, **engine) -> tuple[float, Path, float]:
            load = os.getloadavg()[0]
            report = run_study(toy, out=Path(tmp) / f"{label}.json", restart=True, **engine)
            return report.seconds / count, report.path, load

        # start both loky workers (a warm-up of two members); the Dask cluster starts within its timed run
        run_study(toy, jobs=2, out=Path(tmp) / "warm-up.json", only=[m.key for m in members(toy.settings)[:2]])
        one_s, one_path, one_load = timed("one")
        rows = []
        for label, name, engine in (("loky", "study runner: 2 loky jobs vs 1 job", {"jobs": 2}),
                                    ("dask", "study runner: Dask LocalCluster (2 workers) vs 1 job",
                                     {"jobs": 2, "dask": "local"})):
            ours_s, path, load = timed(label, **engine)
            rows.append(make_row(name, config, ours_s=ours_s, reference_s=one_s,
                                 load_average=[round(one_load, 2), round(load, 2)], cpu_count=os.cpu_count(),
                                 same_bytes=stored_without_provenance(path) == stored_without_provenance(one_path)))
    return rows
