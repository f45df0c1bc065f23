"""Chapter "Theorem 8 and the limits": its module (onelayer.chapters.trees.forward_limits)."""

from __future__ import annotations

from dataclasses import replace

import matplotlib.pyplot as plt
import pytest

from onelayer.chapters.trees import forward_limits as chapter
from onelayer.trees.forward import limits

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}
CACHED = (chapter.trained_two_head, chapter.test_set, chapter.train_eval_batch, chapter.test_decoding,
          chapter.direct_runs, chapter.beyond_runs)


def test_loss_table_puts_the_authors_rows_beside_every_stored_run():
    fig, numbers = chapter.loss_table()
    plt.close(fig)
    rows = numbers["table"]
    ours = [r for r in rows if not r["model"].startswith("authors")]
    assert len(ours) == len(chapter.stored()["loss_table"]) == 3 * len(limits.NORMALISATIONS)
    assert [r["model"] for r in rows if r not in ours] == list(limits.AUTHORS_TABLE)
    assert all(r["test path acc"] is None for r in rows if r not in ours)  # the authors report no test accuracy


def test_single_head_gets_the_nodes_or_the_stage_never_both_outside_the_turn():
    rows, hard_loss = chapter.single_head_blocks()
    whole = next(r for r in rows if r["block"] == "whole token")
    assert whole["backward"] == whole["forward"] == 0.0 and whole["turning"] == 1.0  # exact: shares of right steps
    m = chapter.SETTINGS.m
    # hard attention: every node block right, the stage wrong at 2m of the 2m+1 steps; 1/2 per backward step and
    # 1/2 * 2 per forward step, averaged over the positions
    assert hard_loss == pytest.approx((m * 0.5 + m * 1.0) / (2 * m + 1), abs=1e-3)  # tol: softmax at scale 10 is not hard


def test_heads_depth_has_one_row_per_architecture_and_depth():
    fig, numbers = chapter.heads_depth()
    plt.close(fig)
    cells = {(r["label"], r["m"]) for r in numbers["table"]}
    assert len(cells) == len(numbers["table"]) == 5 * len(limits.HEADS_DEPTH_BUDGETS)


def test_layout_tables_pair_every_model_and_child_first_is_round_off():
    single, cells = chapter.layout_tables()
    _, numbers = chapter.layout_sensitivity()
    assert numbers["table"] == single + cells
    assert {r["loss"] for r in single} == {"sum, 1"} and {r["loss"] for r in cells} == {"mean, 1/2"}
    assert all(max(c["loss_gap"], c["param_gap"]) < 1e-10 for c in numbers["child_first"])  # tol: round-off of 100 steps


def test_verdicts_follow_from_their_measurements(monkeypatch):
    """On short runs (the chapter's take a minute): the keys, and the Theorem 8 verdict as the decoding says."""
    small = replace(chapter.SETTINGS, steps=300, test_trees=64, train_eval_trees=64, direct_steps=30,
                    direct_perfect_trees=64, beyond_steps=30, beyond_count=2, beyond_kinds=("gaussian",))
    monkeypatch.setattr(chapter, "SETTINGS", small)
    for f in CACHED:
        f.cache_clear()
    try:
        rows = chapter.verdict_rows()
        path = chapter.test_decoding().path_accuracy
    finally:
        for f in CACHED:
            f.cache_clear()
    assert len(rows) == 10  # one-against-two: one row per (sweep part, edge stage, loss reduction)
    for row in rows:
        assert set(row) == KEYS and row["chapter"] == "forward_limits"
        assert row["source"] in {"[paper]", "[review]", "[ours]"}
    assert rows[0]["verdict"] == ("holds in this run" if path == 1.0 else "fails in this run")  # exact: a count over trees
    one_seed = [r for r in rows if "one seed" in r["measurement"]]
    assert len(one_seed) == 4  # every row but heads x depth (three seeds) and one against two (20 seeds) rests on one seed
    edge = [r for r in rows if r["claim"].startswith("two heads are needed")]
    assert len(edge) == 5 and all("converged" in r["measurement"] and "chain accuracy" in r["measurement"] for r in edge)


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
        return chapter.edge_flag_verdict(chapter.edge_flag_cells(runs), "s_b", "sum, 1")
    assert verdict([5.0] * 20, [0.1] * 20).startswith("agrees")
    assert verdict([0.1] * 20, [0.1] * 20).startswith("disagrees")
    assert verdict([5.0] * 20, [5.0] * 20).startswith("undecided: one full head stalls")
    assert verdict([5.0] * 2 + [0.1] * 2, [0.1] * 4) == "undecided"  # 2/4: the interval spans 1/2
    with pytest.raises(ValueError, match="full1"):
        chapter.edge_flag_verdict(chapter.edge_flag_cells(_runs("s_b", "full1", [1.0], [0])), "s_b", "sum, 1")


def test_edge_flag_table_and_the_value_map_check():
    _, numbers = chapter.edge_flag_table()
    stored = chapter.edge_flag_stored()
    assert len(numbers["table"]) == len({(r["edge_stage"], r["reduction"], r["arch"]) for r in stored["runs"]}) + len(
        {(r["edge_stage"], r["reduction"], r["arch"]) for r in stored["extra"]["runs"]})
    check = {r["edge_stage"]: r for r in chapter.value_map_check(S=8)}
    assert check["empty"]["edge_residual"] < 1e-12 and check["s_b"]["edge_residual"] == pytest.approx(0.5)  # tol: lstsq
