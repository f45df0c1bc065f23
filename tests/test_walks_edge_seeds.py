"""The edge of Theorem 3.1 over 200 samples per p (onelayer.studies.walks.edge_seeds): the stored study against a
recomputed member and against the 40 samples of walks-seed-rates, which it contains."""

from __future__ import annotations

import pytest

from onelayer.studies import registry, runner
from onelayer.studies.walks import edge_seeds, seed_rates


def test_the_first_block_is_the_seed_rates_cell_bit_for_bit():
    stored = registry.load(edge_seeds.STUDY.name)
    old = seed_rates.payload(registry.load(seed_rates.STUDY.name))["edge"]
    for p in edge_seeds.STUDY.settings.ps:
        (block,) = [m for m in stored["members"] if m["key"] == f"k6-p{p:.3f}-s000-039"]
        found, _ = runner.differences(block["result"]["rows"], [r for r in old if r["K"] == 6 and r["p"] == p], rtol=0.0)
        assert not found, found[:3]  # rtol 0: the same batch gives the same bits (NaN equal to NaN)


def test_the_summary_counts_the_runs():
    cells = registry.load(edge_seeds.STUDY.name)["summary"]["cells"]
    for p in edge_seeds.STUDY.settings.ps:
        by = {c["seeds"]: c for c in cells if c["p"] == p}
        assert by["all"]["runs"] == 200 and by["earlier"]["runs"] + by["new"]["runs"] == 200
        assert by["earlier"]["optimal_parent"] + by["new"]["optimal_parent"] == by["all"]["optimal_parent"]


@pytest.mark.recompute
def test_a_stored_member_is_recomputed():
    assert runner.verify(edge_seeds.STUDY, sample=1, echo=None)
