"""The figures the parts' issues name are registered by the chapter modules of their part (onelayer.chapters).

``tests/test_registry.py`` runs every registered figure in quick mode; here: every figure named in the parts'
issues is registered by a chapter module of its part, and a few quick runs say what the theorems say.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from onelayer import registry

WALKS_REQUIRED = [
    "walks-transition-matrices",  # paper's Figure 2
    "walks-bayes-accuracy",
    "walks-lemma-c1",
    "walks-parent-log-odds",
    "walks-fig4",
    "walks-fig8",
    "walks-fig9",
    "walks-value-direction",
    "walks-fig5",
    "walks-roundoff-escape",
    "walks-fig6",
    "walks-fig11",
    "walks-fig12",
    "walks-fig13",
    "walks-fig7",
    "walks-fig10",
    "walks-variations-logit-scale",
    "walks-variations-no-position",
    "walks-variations-residual",
]
TREES_REQUIRED = [
    "trees-worked-example",
    "trees-lemma1",
    "trees-loss-vs-lambda",
    "trees-construction-attention",
    "trees-h-entries",
    "trees-phases",
    "trees-generalization",
    "trees-forward-attention",
    "trees-forward-scalars",
    "trees-forward-accuracy-by-type",
    "trees-forward-loss-table",  # single against two heads (forward_heads chapter)
    "trees-heads-depth",
]
REGISTRIES = {"walks-": "onelayer.chapters.walks", "trees-": "onelayer.chapters.trees"}


def _in_registry(module: str, part_chapters: str) -> bool:
    """``module`` is one of the part's chapter modules, or a chapter module that spans both parts
    (``onelayer.chapters.scaling``: a module of the chapters package, not of a part's subpackage)."""
    spans_parts = module.startswith("onelayer.chapters.") and module.count(".") == 2
    return spans_parts or module.startswith(part_chapters + ".")


def _numbers(name, tmp_path, quick=True):
    registry.make(name, tmp_path, quick=quick)
    return json.loads((tmp_path / f"{name}.json").read_text())["numbers"]


def test_discover_imports_exactly_the_chapter_modules():
    assert registry.discover() == registry.chapter_modules()


@pytest.mark.parametrize("name", WALKS_REQUIRED + TREES_REQUIRED)
def test_required_figure_is_registered(name):
    specs = registry.available()
    assert name in specs, f"{name} is not registered"
    assert _in_registry(specs[name].module, REGISTRIES[name[:6]])


def test_every_part_figure_lives_in_its_registry():
    for name, spec in registry.available().items():
        for prefix, module in REGISTRIES.items():
            if name.startswith(prefix):
                assert _in_registry(spec.module, module), f"{name} is registered by {spec.module}, not {module}"


def test_transition_matrices_are_stochastic_and_p1_is_the_shift(tmp_path):
    Pi = {p: np.array(m) for p, m in _numbers("walks-transition-matrices", tmp_path)["Pi"].items()}
    assert set(Pi) == {"0.5", "0.7", "1"}
    for m in Pi.values():
        assert np.allclose(m.sum(axis=1), 1.0)
    assert np.array_equal(Pi["1"], np.roll(np.eye(6), 1, axis=1))  # exact: 0/1 entries at p = 1; row i has its 1 at column i + 1


def test_fig4_quick_is_bayes_optimal_from_step_3(tmp_path):
    n = _numbers("walks-fig4", tmp_path)
    assert n["steps_to_optimal"] == 3
    assert n["final_parent_attention"] > 0.99
    assert [row["step"] for row in n["table"]] == list(range(6))


def test_fig5_quick_stays_in_the_symmetric_state(tmp_path):
    n = _numbers("walks-fig5", tmp_path)
    assert n["final_V_spread"] <= 1e-14  # tol: |V| < 2; exact symmetry rests on kernel op order (test_walks_theorem41.SYM_REL)
    population = n["runs"]["population, exact positions"]["test_accuracy"]
    assert len(set(population)) == 1 and population[0] < 0.2  # exact: the same weighted count at every step




def test_fig13_quick_table_has_one_row_per_coordinate_and_table_step(tmp_path):
    n = _numbers("walks-fig13", tmp_path)
    steps = sorted({r["step"] for r in n["table"]})
    assert steps and [r["coordinate"] for r in n["table"]] == list(range(1, 7)) * len(steps)
    assert all(r["variance"] >= 0 for r in n["table"])


