"""Every study, listed once: the modules whose ``STUDY`` (:class:`onelayer.studies.runner.Study`) the runner runs.

A study's name, stored path and kind come from its module's ``STUDY``; nothing else types them. ``python -m onelayer
study --list`` and ``make studies`` run the modules in the order of :data:`MODULES`; the chapters read a stored study
with :func:`load`.

To add a study: write ``onelayer/studies/<part>/<name>.py`` (see CONTRIBUTING.md, "Studies") and add its module name
here.
"""

from __future__ import annotations

import importlib
import os

from .. import store
from ..paths import data_path
from .runner import Study

__all__ = ["MODULES", "studies", "get", "load", "require_settings"]

#: The study modules, in the order they run.
MODULES: tuple[str, ...] = (
    "onelayer.studies.walks.variations.seeds",
    "onelayer.studies.walks.variations.runs",
    "onelayer.studies.walks.direction_slopes",
    "onelayer.studies.walks.chain_seeds",
    "onelayer.studies.walks.baseline_seeds",
    "onelayer.studies.walks.no_position_bounds",
    "onelayer.studies.walks.qa_seeds",
    "onelayer.studies.walks.qa_frozen",
    "onelayer.studies.walks.qa_runs",
    "onelayer.studies.walks.gram_errors",
    "onelayer.studies.walks.seed_rates",
    "onelayer.studies.walks.edge_seeds",
    "onelayer.studies.walks.theorem31_runs",
    "onelayer.studies.walks.t41_sensitivity",
    "onelayer.studies.walks.t41_exact_runs",
    "onelayer.studies.walks.t41_fig9",
    "onelayer.studies.walks.random_init.stored",
    "onelayer.studies.walks.random_init.initial_attention",
    "onelayer.studies.walks.scaling.stored",
    "onelayer.studies.walks.scaling.seeds",
    "onelayer.studies.trees.backward_beyond",
    "onelayer.studies.trees.forward_beyond",
    "onelayer.studies.trees.backward_seeds",
    "onelayer.studies.trees.backward_own_tests",
    "onelayer.studies.trees.scaling.stored",
    "onelayer.studies.trees.scaling.population",
    "onelayer.studies.trees.forward_alternative_layouts",
    "onelayer.studies.trees.forward_rescaling",
    "onelayer.studies.trees.forward_seeded_training",
    "onelayer.studies.trees.forward_edge_flag",
    "onelayer.studies.trees.forward_seeds",
    "onelayer.studies.trees.forward_limit_rates",
    "onelayer.studies.trees.forward_limits",
    "onelayer.studies.trees.lab_runs",
    "onelayer.studies.trees.forward_training_runs",
    "onelayer.studies.trees.backward_generalization_runs",
    "onelayer.studies.trees.backward_training_runs",
    "onelayer.studies.trees.forward_construction_grids",
)


def studies() -> dict[str, Study]:
    """name -> Study of every module in :data:`MODULES` (imported now), checked for repeated names and files."""
    found: dict[str, Study] = {}
    files: dict[str, str] = {}
    for module_name in MODULES:
        study = getattr(importlib.import_module(module_name), "STUDY", None)
        if not isinstance(study, Study):
            raise TypeError(f"{module_name} has no STUDY (a onelayer.studies.runner.Study)")
        if study.name in found or study.stored in files:
            raise ValueError(f"{module_name}: the name {study.name!r} or file {study.stored!r} is another study's too")
        found[study.name] = study
        files[study.stored] = study.name
    return found


def get(name: str) -> Study:
    """The study called ``name``; ``ValueError`` naming the studies for an unknown one."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    known = studies()
    if name not in known:
        raise ValueError(f"unknown study {name!r}; the studies are: {', '.join(known) or 'none registered yet'}")
    return known[name]


def load(name: str, *, path: str | os.PathLike | None = None) -> dict:
    """The stored study ``name`` (its file in the data directory, or ``path``): settings, members (sorted by key),
    summary and provenance, with the non-finite floats read back (:func:`onelayer.store.from_jsonable`)."""
    study = get(name)
    return store.from_jsonable(store.read_json(path if path is not None else data_path(study.stored), kind=study.kind))


def require_settings(name: str, stored, expected) -> None:
    """Refuse a stored study made with other settings than its reader needs: ``ValueError`` naming the study ``name``,
    both settings and the command that runs it again, unless ``stored == expected``."""
    if stored != expected:
        raise ValueError(f"the stored study {name} was run with {stored}, the chapter needs {expected}: run "
                         f"'python -m onelayer study {name}'")
