"""Chapter "One head or two": its module (onelayer.chapters.trees.forward_heads)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from onelayer.chapters.trees import forward_heads as chapter
from onelayer.studies.trees import forward_limits as limits
from onelayer.verdicts import trees_forward_heads as verdicts

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


def test_loss_table_puts_the_authors_rows_beside_every_stored_run():
    fig, numbers = chapter.loss_table()
    plt.close(fig)
    rows = numbers["table"]
    ours = [r for r in rows if not r["model"].startswith("authors")]
    assert len(ours) == len(chapter.stored()["loss_table"]) == 3 * len(limits.NORMALISATIONS)
    assert [r["model"] for r in rows if r not in ours] == list(limits.AUTHORS_TABLE)
    assert all(r["test path acc"] is None for r in rows if r not in ours)  # the authors report no test accuracy


def test_loss_rows_are_relative_to_step_1():
    rows = chapter.loss_rows()
    for r in rows:
        if r["quantity"] == "loss / loss at t=1":
            assert r["t=1"] == pytest.approx(1.0)  # tol: x / x
    assert len(rows) == 2 * (3 + len(limits.AUTHORS_TABLE)) <= 12


def test_single_head_gets_the_nodes_or_the_stage_never_both_outside_the_turn():
    rows, hard_loss = chapter.single_head_blocks()
    whole = next(r for r in rows if r["block"] == "whole token")
    assert whole["backward"] == whole["forward"] == 0.0 and whole["turning"] == 1.0  # exact: shares of right steps
    m = chapter.SETTINGS.m
    # hard attention: every node block right, the stage wrong at 2m of the 2m+1 steps; 1/2 per backward step and
    # 1/2 * 2 per forward step, averaged over the positions
    assert hard_loss == pytest.approx((m * 0.5 + m * 1.0) / (2 * m + 1), abs=1e-3)  # tol: softmax at scale 10 is not hard


def test_verdicts_are_rates_over_runs():
    rows = chapter.verdict_rows()
    assert len(rows) == 5  # one per (study part, edge stage, loss reduction)
    for row in rows:
        assert set(row) == KEYS and row["chapter"] == "forward_heads" and row["source"] == "[review]"
        assert "[" in row["measurement"]  # a Wilson interval


def _runs(stage, arch, losses, chains, goals=100):
    return [{"edge_stage": stage, "reduction": "sum, 1", "arch": arch, "label": arch, "seed": i, "loss": [10.0, x],
             "goals": goals, "chain": c, "path": goals} for i, (x, c) in enumerate(zip(losses, chains))]


def test_edge_flag_cells_count_rates_and_divergence():
    runs = _runs("s_b", "full1", [4.0] * 19 + [0.1], [0] * 20) + _runs("s_b", "full2", [0.1] * 18 + ["nan", "nan"], [100] * 20)
    cells = {c["arch"]: c for c in chapter.edge_flag_cells(runs, {"lr": 0.1, "steps": 10})}
    full1, full2 = cells["full1"], cells["full2"]
    assert (full1["converged"].k, full1["converged"].n, full1["diverged"]) == (1, 20, 0)
    assert (full2["converged"].k, full2["diverged"], full2["chains solved"].k) == (18, 2, 20)
    assert (full1["chain goals"].k, full1["chain goals"].n, full1["path goals"].k) == (0, 2000, 2000)
    assert full1["loss ratio"][0] == pytest.approx((19 * 0.4 + 0.01) / 20)  # tol: float mean
    assert full1["lr"] == 0.1  # exact: passed through


def test_edge_flag_verdict_follows_the_intervals():
    def verdict(full1, two):
        runs = _runs("s_b", "full1", full1, [0] * len(full1)) + _runs("s_b", "full2", two, [0] * len(two))
        return verdicts.edge_flag_verdict(chapter.edge_flag_cells(runs), "s_b", "sum, 1")
    assert verdict([5.0] * 20, [0.1] * 20).startswith("agrees")
    assert verdict([0.1] * 20, [0.1] * 20).startswith("disagrees")
    assert verdict([5.0] * 20, [5.0] * 20).startswith("undecided: one full head stalls")
    assert verdict([5.0] * 2 + [0.1] * 2, [0.1] * 4) == "undecided"  # 2/4: the interval spans 1/2
    with pytest.raises(ValueError, match="full1"):
        verdicts.edge_flag_verdict(chapter.edge_flag_cells(_runs("s_b", "full1", [1.0], [0])), "s_b", "sum, 1")


def test_edge_flag_table_and_the_value_map_check():
    _, numbers = chapter.edge_flag_table()
    stored = chapter.edge_flag_stored()
    assert len(numbers["table"]) == len({(r["edge_stage"], r["reduction"], r["arch"]) for r in stored["runs"]}) + len(
        {(r["edge_stage"], r["reduction"], r["arch"]) for r in stored["extra"]["runs"]})
    assert chapter.edge_flag_minutes() == pytest.approx(12.6 + 3.0)  # tol: float sum; the pre-runner script's minutes
    check = {r["edge_stage"]: r for r in chapter.value_map_check(S=8)}
    assert check["empty"]["edge_residual"] < 1e-12 and check["s_b"]["edge_residual"] == pytest.approx(0.5)  # tol: lstsq
