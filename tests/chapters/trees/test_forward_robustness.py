"""Chapter "Robustness": its module (onelayer.chapters.trees.forward_robustness)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from onelayer.chapters.trees import forward_robustness as chapter
from onelayer.rates import rate
from onelayer.studies.trees import forward_beyond
from onelayer.studies.trees import forward_limit_rates as limit_rates, forward_limits as limits, forward_readings as readings, stored_study
from onelayer.verdicts import trees_forward_robustness as verdicts

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


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
    # several full heads: one per training depth; no turning token; Gaussian embeddings
    assert len(rows) == 2 + len(dict.fromkeys(c[0] for c in readings.heads_settings(chapter.limit_rates_stored())))
    for row in rows:
        assert KEYS <= set(row) <= KEYS | {"rates"} and row["chapter"] == "forward_robustness"
        assert row["source"] == "[ours]"
        assert "one seed" not in row["measurement"] and "[" in row["measurement"]  # a Wilson interval


def test_limit_rates_quick_study_feeds_the_chapter():
    data = stored_study.summary(limit_rates.STUDY, quick=True)
    q = limit_rates.QUICK
    assert len(data["heads"]) == q["seeds"] * len(q["heads"]["models"]) * len(q["heads"]["cells"])
    cells = chapter.no_turn_seeds(data, with_turn=data["no_turn"])
    assert {(c["arch"], c["turning"]) for c in cells} == {("full1", "yes"), ("full1", "no")}
    hs = chapter.heads_seeds(data)
    assert len(hs) == len(q["heads"]["cells"]) * (len(q["heads"]["models"]) + 1)  # each model and 2-4 full heads
    assert all(r["runs"] == q["seeds"] for r in hs if r["model"] != "2-4 full heads")
    for cell in readings.heads_settings(data):
        joint = chapter.heads_joint(cell, data)
        total = q["seeds"] * q["heads"]["test_trees"]
        assert sum(r["goals"] for r in joint["rows"]) == total  # exact: every test goal in one bin
        assert all(r["1 full head"].n == r["goals"] for r in joint["rows"])
        regions = chapter.heads_regions(cell, data)
        assert sum(r["goals"] for r in regions if r["arch"] == "full1") == total
        assert sum(r["share of misses"] or 0 for r in regions if r["arch"] == "full2") == pytest.approx(1.0)  # tol: sum of shares
    assert len(verdicts.heads_rows(chapter.SETTINGS, data)) == 1  # one training depth in the quick study


def test_heads_bins_count_the_stored_runs():
    hb = chapter.heads_bins()
    assert (hb["multi failing"].n, hb["full1 failing"].n) == (36, 12)
    assert {r["m"] for r in hb["rows"]} == {2, 3, 4, 5}
    assert all(r[k] is None or r[k].n >= 50 for r in hb["rows"] for k in ("size <=15", "size 16-30", "size >30"))


def test_stored_heads_sweep_bins_hold_enough_goals():
    """Every joint (size, depth) bin holds at least min_bin_goals pooled goals, every shown depth bin min_shown_goals."""
    s = chapter.SETTINGS
    for cell in readings.heads_settings(chapter.limit_rates_stored()):
        joint = chapter.heads_joint(cell)
        assert joint["rows"] and all(r["goals"] >= s.min_bin_goals for r in joint["rows"])
    assert all(r["goals"] >= s.min_shown_goals for r in chapter.gaussian_seeds()["depth"] if r["test trees"] == "random trees")
    _, numbers = chapter.over_seeds()
    assert all(n >= s.min_shown_goals for o in numbers["by_depth_offset"].values() for n, _ in o.values())


def test_heads_verdict_reads_the_intervals():
    def rows(one, multi):
        return [{"model": "1 full head", "below 99% on test": rate(one, 20)},
                {"model": "2-4 full heads", "below 99% on test": rate(multi, 60)}]
    assert verdicts.heads_verdict(rows(0, 50)) == "holds"
    assert verdicts.heads_verdict(rows(0, 5)) == "fails"
    assert verdicts.heads_verdict(rows(3, 25)) == "undecided"
    with pytest.raises(ValueError, match="rows"):
        verdicts.heads_verdict(rows(0, 5)[:1])


def test_gaussian_study_counts_every_goal():
    small = forward_beyond.Settings(runs=2, steps=3, count=2, batch_size=4)
    out = forward_beyond.summarize(small, [{"key": m.key, "fields": dict(m.fields), "result": forward_beyond.run_member(small, m)}
                                           for m in forward_beyond.members(small)])
    g = chapter.gaussian_seeds(out)
    assert [r["goals"] for r in g["rows"]] == [4, 4, 4]  # exact: 2 runs x 2 trees of each shape
    assert sum(r["goals"] for r in g["depth"] if r["test trees"] == "all shapes") == 12
    stored = chapter.gaussian_seeds()
    assert stored["runs"] >= 20


def test_heads_rows_read_each_setting_of_the_stored_study():
    """One row per training depth; a verdict that differs between settings says which, and names the training length
    when the batch size alone never changes it."""
    rows = verdicts.heads_rows(chapter.SETTINGS, chapter.limit_rates_stored())
    assert [r["reading"][-5:] for r in rows] == ["m = 2", "m = 3"]
    for row in rows:
        cells = [c for c in readings.heads_settings(chapter.limit_rates_stored()) if f"m = {c[0]}" in row["reading"]]
        words = [verdicts.heads_verdict([r for r in chapter.heads_seeds() if (r["m"], r["batch"], r["steps"]) == c])
                 for c in cells]
        if len(set(words)) == 1:
            assert row["verdict"] == words[0]
        else:
            assert row["verdict"].startswith("depends on") and all(v in row["verdict"] for v in words)
        assert "[" in row["measurement"] and "Where" in row["measurement"]


def test_heat_maps_carry_every_row_as_numbers():
    fig, numbers = chapter.heads_rates()
    plt.close(fig)
    assert len(numbers["table"]) == len(chapter.heads_seeds())
    fig, numbers = chapter.heads_joint_map()
    plt.close(fig)
    cells = {m: chapter.heads_where(m) for m in (2, 3)}
    assert len(numbers["table"]) == sum(len(chapter.heads_joint(c)["rows"]) for c in cells.values())
