"""The scaling chapter's stored trees readings (onelayer.studies.trees.scaling.population, trees-scaling-population)."""

from __future__ import annotations

import dataclasses

import pytest

from onelayer.studies import runner
from onelayer.studies.trees.scaling import population, rows


def test_members_and_the_loaded_layout():
    assert [m.key for m in population.members(population.STUDY.settings)] == [
        "population-depth", "population-labels", "gaps-depth", "times-depth"]
    data = population.load(population.STUDY.settings)
    assert [r["m"] for r in data["population"]["depth"]] == [2, 3, 4, 5, 6]
    assert all("population_seconds" not in r for g in ("depth", "labels") for r in data["population"][g])
    assert [r["m"] for r in data["times"]] == [2, 3, 4, 5, 6] and [r["m"] for r in data["gaps"]] == [2, 3, 4, 5]  # SGD stored to m = 5


def test_stored_population_rows_join_as_the_live_ones():
    stored = population.load(population.STUDY.settings)["population"]["labels"][:2]
    live = rows.population_rows([(r["m"], r["S"]) for r in stored])
    assert [r["population_steps"] for r in live] == [r["population_steps"] for r in stored]  # exact: step counts
    joined = rows.scaling_rows("labels", sizes=[(r["m"], r["S"]) for r in stored], population=stored)
    assert [r["population_steps"] for r in joined] == [r["population_steps"] for r in stored]  # exact: copied


def test_the_loader_refuses_other_settings():
    with pytest.raises(ValueError, match="trees-scaling-population"):
        population.load(dataclasses.replace(population.STUDY.settings, lr=0.5))


@pytest.mark.recompute
def test_the_cheapest_stored_member_is_recomputed():
    assert runner.verify(population.STUDY, sample=1, echo=None)
