"""Chapter "Theorem 8 and the limits": its module (onelayer.chapters.trees.forward_limits)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from onelayer.chapters.trees import forward_limits as chapter
from onelayer.rates import rate
from onelayer.studies.trees import forward_beyond
from onelayer.studies.trees import forward_limit_rates as limit_rates, forward_limits as limits, stored_study

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


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


def test_verdicts_are_rates_over_runs():
    """Every row rests on many runs (stored studies): no row is a one-seed verdict, and each says its rates."""
    rows = chapter.verdict_rows()
    # one-against-two: one row per (study part, edge stage, loss reduction); several full heads: one per training depth
    assert len(rows) == 9 + len(dict.fromkeys(c[0] for c in chapter.heads_settings()))
    for row in rows:
        assert set(row) == KEYS and row["chapter"] == "forward_limits"
        assert row["source"] in {"[paper]", "[review]", "[ours]"}
        assert "one seed" not in row["measurement"] and "[" in row["measurement"]  # a Wilson interval
    t8 = chapter.theorem8_seeds()
    assert rows[0]["verdict"] == chapter._runs_verdict(t8["paths solved"], "paths")
    assert t8["runs"] == limit_rates.SETTINGS["seeds"] >= 20


def test_runs_verdict_reads_the_interval():
    assert chapter._runs_verdict(rate(20, 20), "x").startswith("holds in every run")
    assert chapter._runs_verdict(rate(18, 20), "x").startswith("holds in most runs")
    assert chapter._runs_verdict(rate(2, 20), "x").startswith("fails in most runs")
    assert chapter._runs_verdict(rate(10, 20), "x").startswith("undecided")


def test_limit_rates_quick_study_feeds_the_chapter():
    data = stored_study.summary(limit_rates.STUDY, quick=True)
    q = limit_rates.QUICK
    assert len(data["theorem8"]) == q["seeds"]
    assert len(data["heads"]) == q["seeds"] * len(q["heads"]["models"]) * len(q["heads"]["cells"])
    t8 = chapter.theorem8_seeds(data)
    assert sum(r["goals"] for r in t8["rows"]) == q["seeds"] * q["theorem8"]["test_trees"]  # exact: counts
    assert [r["runs"] for r in chapter.direct_seeds(data)] == [q["seeds"]] * len(q["direct"]["models"])
    cells = chapter.no_turn_seeds(data, with_turn=data["no_turn"])
    assert {(c["arch"], c["turning"]) for c in cells} == {("full1", "yes"), ("full1", "no")}
    hs = chapter.heads_seeds(data)
    assert len(hs) == len(q["heads"]["cells"]) * (len(q["heads"]["models"]) + 1)  # each model and 2-4 full heads
    assert all(r["runs"] == q["seeds"] for r in hs if r["model"] != "2-4 full heads")
    for cell in chapter.heads_settings(data):
        joint = chapter.heads_joint(cell, data)
        total = q["seeds"] * q["heads"]["test_trees"]
        assert sum(r["goals"] for r in joint["rows"]) == total  # exact: every test goal in one bin
        assert all(r["1 full head"].n == r["goals"] for r in joint["rows"])
        regions = chapter.heads_regions(cell, data)
        assert sum(r["goals"] for r in regions if r["arch"] == "full1") == total
        assert sum(r["share of misses"] or 0 for r in regions if r["arch"] == "full2") == pytest.approx(1.0)  # tol: sum of shares
    assert len(chapter.heads_rows(data)) == 1  # one training depth in the quick study


@pytest.mark.recompute
def test_stored_limit_rates_have_the_module_settings_and_reproduce_seed_0():
    data = chapter.limit_rates_stored()
    assert data["settings"] == limit_rates.SETTINGS
    s = data["settings"]["theorem8"]
    again = limit_rates.theorem8_runs(s, [0])[0]
    assert again["by_depth"] == data["theorem8"][0]["by_depth"]  # exact: counts of right goals
    assert again["loss"][-1] == pytest.approx(data["theorem8"][0]["loss"][-1], rel=1e-6)  # tol: one member vs 20


def test_heads_bins_count_the_stored_runs():
    hb = chapter.heads_bins()
    assert (hb["multi failing"].n, hb["full1 failing"].n) == (36, 12)
    assert {r["m"] for r in hb["rows"]} == {2, 3, 4, 5}
    assert all(r[k] is None or r[k].n >= 50 for r in hb["rows"] for k in ("size <=15", "size 16-30", "size >30"))


def test_merge_bins_merges_small_bins_into_their_smaller_neighbour():
    assert chapter.merge_bins({1: 500, 2: 80, 3: 30, 4: 5}, 100) == [(1, 1), (2, 4)]
    assert chapter.merge_bins({1: 30, 2: 500, 3: 200}, 100) == [(1, 2), (3, 3)]
    assert chapter.merge_bins({1: 10, 2: 0, 3: 20}, 100) == [(1, 3)]  # empty keys dropped, the rest merged to one
    assert chapter.merge_bins({1: 200, 2: 100}, 100) == [(1, 1), (2, 2)]
    with pytest.raises(ValueError, match="min_goals"):
        chapter.merge_bins({1: 1}, 0)


def test_stored_heads_sweep_bins_hold_enough_goals():
    """Every joint (size, depth) bin holds at least min_bin_goals pooled goals, every shown depth bin min_shown_goals."""
    s = chapter.SETTINGS
    for cell in chapter.heads_settings():
        joint = chapter.heads_joint(cell)
        assert joint["rows"] and all(r["goals"] >= s.min_bin_goals for r in joint["rows"])
    assert all(r["trees"] >= s.min_shown_goals for r in chapter.goal_depth_rows())
    assert all(r["goals"] >= s.min_shown_goals for r in chapter.gaussian_seeds()["depth"] if r["test trees"] == "random trees")
    _, numbers = chapter.over_seeds()
    assert all(n >= s.min_shown_goals for o in numbers["by_depth_offset"].values() for n, _ in o.values())


def test_heads_verdict_reads_the_intervals():
    def rows(one, multi):
        return [{"model": "1 full head", "below 99% on test": rate(one, 20)},
                {"model": "2-4 full heads", "below 99% on test": rate(multi, 60)}]
    assert chapter.heads_verdict(rows(0, 50)) == "holds"
    assert chapter.heads_verdict(rows(0, 5)) == "fails"
    assert chapter.heads_verdict(rows(3, 25)) == "undecided"
    with pytest.raises(ValueError, match="rows"):
        chapter.heads_verdict(rows(0, 5)[:1])


def test_gaussian_study_counts_every_goal():
    small = forward_beyond.Settings(runs=2, steps=3, count=2, batch_size=4)
    out = forward_beyond.summarize(small, [{"key": m.key, "fields": dict(m.fields), "result": forward_beyond.run_member(small, m)}
                                           for m in forward_beyond.members(small)])
    g = chapter.gaussian_seeds(out)
    assert [r["goals"] for r in g["rows"]] == [4, 4, 4]  # exact: 2 runs x 2 trees of each shape
    assert sum(r["goals"] for r in g["depth"] if r["test trees"] == "all shapes") == 12
    stored = chapter.gaussian_seeds()
    assert stored["runs"] >= 20


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
    assert chapter.edge_flag_minutes() == pytest.approx(12.6 + 3.0)  # tol: float sum; the pre-runner script's minutes
    check = {r["edge_stage"]: r for r in chapter.value_map_check(S=8)}
    assert check["empty"]["edge_residual"] < 1e-12 and check["s_b"]["edge_residual"] == pytest.approx(0.5)  # tol: lstsq


def test_heads_rows_read_each_setting_of_the_stored_study():
    """One row per training depth; a verdict that differs between settings says which, and names the training length
    when the batch size alone never changes it."""
    rows = chapter.heads_rows()
    assert [r["reading"][-5:] for r in rows] == ["m = 2", "m = 3"]
    for row in rows:
        cells = [c for c in chapter.heads_settings() if f"m = {c[0]}" in row["reading"]]
        verdicts = [chapter.heads_verdict([r for r in chapter.heads_seeds() if (r["m"], r["batch"], r["steps"]) == c])
                    for c in cells]
        if len(set(verdicts)) == 1:
            assert row["verdict"] == verdicts[0]
        else:
            assert row["verdict"].startswith("depends on") and all(v in row["verdict"] for v in verdicts)
        assert "[" in row["measurement"] and "Where" in row["measurement"]
