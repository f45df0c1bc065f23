"""The Theorem 4.1 chapter's runs in the theorem's exact setting, stored: the study ``walks-t41-exact-runs``.

On the exact ``p = 1`` population with exactly orthogonal positions (``K = 6``, ``N = 97``, ``M = 1000``, float64) the
chapter shows the symmetric state under three losses and four step-size schedules over 100 GD steps
(:func:`onelayer.studies.walks.theorem41.symmetry_table`, the evidence of the theorem's verdict) and the escape from
it after a deliberate perturbation of ``q`` of five sizes (:func:`onelayer.studies.walks.theorem41.perturbation_escape`).
Nothing in them is sampled or machine-dependent beyond round-off far below what the chapter prints; they are stored
here and the chapter loads them.

Members: ``symmetry-log`` (one loss, every schedule), ``symmetry-squared``, ``symmetry-cross_entropy`` and
``perturbation`` (every size). ``python -m onelayer study walks-t41-exact-runs`` runs it; :func:`load` gives the
symmetry rows in the order of :func:`~onelayer.studies.walks.theorem41.symmetry_table` and the perturbation arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..registry import load as load_study
from ..runner import Member, Study
from .theorem41 import perturbation_escape, symmetry_table

__all__ = ["Settings", "QUICK", "members", "run_member", "summarize", "STUDY", "load"]


@dataclass(frozen=True)
class Settings:
    """The losses and GD steps of the symmetry table; the sizes of the perturbation of ``q`` and the steps run after it."""

    losses: tuple[str, ...] = ("log", "squared", "cross_entropy")
    symmetry_steps: int = 100
    perturbations: tuple[float, ...] = (1e-15, 1e-12, 1e-9, 1e-6, 1e-3)
    perturbation_steps: int = 40


#: ``--quick``: one loss, two sizes, short runs (seconds).
QUICK = Settings(losses=("log",), symmetry_steps=5, perturbations=(1e-9, 1e-3), perturbation_steps=5)


def members(settings: Settings) -> list[Member]:
    """One member per loss of the symmetry table and one for the perturbations; cost hint: GD steps."""
    s = settings
    return ([Member(f"symmetry-{loss}", {"kind": "symmetry", "loss": loss}, cost=4.0 * s.symmetry_steps)
             for loss in s.losses]
            + [Member("perturbation", {"kind": "perturbation"}, cost=float(len(s.perturbations) * s.perturbation_steps))])


def run_member(settings: Settings, member: Member) -> dict:
    """``{"rows": ...}`` of the symmetry table for one loss (every schedule), or the perturbation arrays."""
    s, f = settings, member.fields
    if f["kind"] == "symmetry":
        return {"rows": symmetry_table(loss_names=(f["loss"],), steps=s.symmetry_steps)}
    return perturbation_escape(s.perturbations, steps=s.perturbation_steps)


def summarize(settings: Settings, records: list[dict]) -> dict:
    """Which members the file holds."""
    return {"members": sorted(r["key"] for r in records)}


STUDY = Study(name="walks-t41-exact-runs", stored="walks/data/t41_exact_runs.json", kind="walks-t41-exact-runs",
              settings=Settings(), quick=QUICK, members=members, run_member=run_member, summarize=summarize,
              description="Walks, Theorem 4.1: the symmetric state under three losses and four schedules, and the "
                          "escape after a perturbation of q, on the exact population")


def load(path=None) -> dict:
    """The stored study (``path``: another file of it): ``settings`` (a :class:`Settings`), ``symmetry`` (the rows,
    loss by loss) and ``perturbation`` (its arrays as NumPy arrays)."""
    data = load_study(STUDY.name, path=path)
    settings = Settings(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in data["settings"].items()})
    by_key = {r["key"]: r["result"] for r in data["members"]}
    return {"settings": settings,
            "symmetry": [row for loss in settings.losses for row in by_key[f"symmetry-{loss}"]["rows"]],
            "perturbation": {k: np.asarray(v) for k, v in by_key["perturbation"].items()}}
