"""Chapter "Theorem 2: a forward reasoner by construction": its module (onelayer.chapters.trees.forward_construction)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer.chapters.trees import forward_construction as chapter
from onelayer.trees.forward.construction import SITUATIONS

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


def test_quick_test_set_is_smaller_and_goals_are_not_the_root():
    A, test, trees = chapter.test_set(quick=True)
    assert A.shape == (chapter.SETTINGS.d, chapter.SETTINGS.S) and len(trees) == test.size == chapter.SETTINGS.test_quick_trees
    assert int(test.goal_depth.min()) >= 1


def test_margins_are_min_lambda_mu_for_head_1_and_kappa_for_head_2():
    _, numbers = chapter.margins(quick=True)
    lam, mu, kappa = chapter.SETTINGS.margins_at
    expected = {"head 1": min(lam, mu), "head 2": kappa}  # the theorem's margins, written out here
    assert {(r["head"], r["situation"]) for r in numbers["table"]} == {(h, s) for h in expected for s in SITUATIONS}
    for r in numbers["table"]:
        assert abs(r["min_margin"] - expected[r["head"]]) < 1e-9  # tol: differences of O(1) float64 logits
        assert r["max_margin"] >= r["min_margin"] and r["target_unique"] and r["reaching"] == r["steps"]
    _, test, _ = chapter.test_set(quick=True)
    for head in expected:
        assert numbers["heads"][head] == {"steps": int(test.target_mask.sum()), "reaching": int(test.target_mask.sum())}
    assert sum(numbers["goal_depths"].values()) == test.size and 0 not in numbers["goal_depths"]


def test_scale_grid_loss_falls_like_exp_minus_2c():
    fig, numbers = chapter.scale_grid(quick=True)
    plt.close(fig)
    rows = numbers["table"]
    assert [r["scale"] for r in rows] == [float(c) for c in chapter.SETTINGS.scales[::2]]
    assert all(a["loss"] > b["loss"] for a, b in zip(rows, rows[1:]))
    assert rows[-1]["path_accuracy"] == 1.0  # exact: a count of right trees over all
    assert rows[-1]["paths_right"] == rows[-1]["trees"] == chapter.SETTINGS.test_quick_trees
    assert numbers["log_loss_slope_scale_ge_5"] == pytest.approx(-2.0, abs=0.05)  # tol: the smallest margin is c, squared


def test_one_full_head_and_two_heads_decode_every_tree():
    rows = chapter.one_head_and_two()
    assert [r["model"] for r in rows] == ["one full head", "two heads"]
    assert all(r["path_accuracy"] == 1.0 == r["chain_accuracy"] for r in rows)  # exact: counts over all trees


def test_default_state_is_the_scaled_base_point():
    fig, numbers = chapter.attention_default()
    plt.close(fig)
    c = chapter.SETTINGS.explore_scale
    assert np.allclose(numbers["lambda_mu_kappa"], [2 * c, c, c])  # the grid's base point (2, 1, 1)


def test_player_and_frames_show_the_same_scales():
    _, frames = chapter.scale_frames(quick=True)
    assert [f["setting"] for f in frames["frames"]] == [[c] for c in chapter.SETTINGS.scrub_scales[::4]]


def test_verdict_rows_hold():
    rows = chapter.verdict_rows()
    assert len(rows) == 4
    for row in rows:
        assert set(row) == KEYS and row["chapter"] == "forward_construction"
        assert row["source"] in {"[paper]", "[ours]"}
    assert [r["verdict"] for r in rows[:3]] == ["holds"] * 3
    steps = int(chapter.test_set()[1].target_mask.sum())
    assert rows[0]["measurement"].count(f"{steps}/{steps} = 1.000 [") == 2  # both heads, every step, with the interval
    n = chapter.SETTINGS.test_trees
    assert f"{n}/{n} = 1.000 [" in rows[1]["measurement"] and f"{n}/{n} = 1.000 [" in rows[2]["measurement"]
    assert rows[3]["verdict"].startswith("fails") and "1024/1024" in rows[3]["measurement"]


def test_no_turning_search_finds_the_one_entry_and_only_it():
    """Quick search: only V1[f,b] of the two heads (and the same entry of the full head) below -mu writes every chain
    without the turning token; the constructed values are flagged in the table."""
    _, numbers = chapter.no_turning_search(quick=True)
    table = numbers["table"]
    assert len(table) == 12 and all(r["trees"] == chapter.SETTINGS.test_quick_trees for r in table)
    working = {r["entry"]: r["multiples with every chain right"] for r in table if r["multiples with every chain right"]}
    assert working == {"V1[f,b]": [-3.0, -2.0, -1.5], "WKQ1[f,b]": [-3.0, -2.0, -1.5]}
    assert next(r for r in table if r["entry"] == "V1[f,b]")["constructed (x scale)"] == 0.0  # exact: the constructed zero


def test_scale_player_frames_share_one_colour_scale():
    """Every frame of the scale player draws attention on the fixed scale 0..1, at the smallest and the largest c."""
    limits = set()
    for c in (chapter.SETTINGS.scrub_scales[0], chapter.SETTINGS.scrub_scales[-1]):
        fig = chapter._scale_draw(c)
        limits |= {im.get_clim() for ax in fig.axes for im in ax.images}
        plt.close(fig)
    assert limits == {(0, 1)}


def test_the_test_set_is_built_once_however_quick_is_passed():
    assert chapter.test_set(True) is chapter.test_set(quick=True)
    assert chapter.test_set() is chapter.test_set(False)


def test_no_turning_rates_key_the_rows_by_construction_change_and_layout():
    rows = [{"construction": "two heads", "entry": "as built", "layout": "R-F", "chains_right": 3, "trees": 4},
            {"construction": "two heads", "entry": "V1[f,b] = -2 x scale", "layout": "no turning token",
             "chains_right": 4, "trees": 4}]
    rates = chapter.no_turning_rates(rows)
    assert set(rates) == {("two heads", False, "R-F"), ("two heads", True, "no turning token")}
    assert (rates[("two heads", False, "R-F")].k, rates[("two heads", False, "R-F")].n) == (3, 4)


@pytest.mark.recompute
def test_stored_grids_are_the_chapters_grids(monkeypatch):
    """The stored study ``trees-forward-construction-grids`` was made with the chapter's settings; its first scale of
    the grid recomputed now is the stored row (same float64 evaluation, stored exactly), and the chapter refuses a
    stored study of other settings."""
    from dataclasses import replace

    from onelayer.studies.trees import analysis

    stored = chapter._stored_grids()
    s = chapter.SETTINGS
    A, test, _ = chapter.test_set()
    lam, mu, kappa = s.scale_base
    (row,) = analysis.scale_grid(A, test, [float(s.scales[0])], lam=lam, mu=mu, kappa=kappa)
    assert row == stored["scale-grid"]["rows"][0]  # exact: the same float64 evaluation, stored exactly
    assert [r["scale"] for r in stored["scale-grid"]["rows"]] == [float(c) for c in s.scales]  # exact: stored settings
    assert stored["no-turning-search"]["trees"] == s.no_turning_search_trees
    monkeypatch.setattr(chapter, "SETTINGS", replace(s, test_trees=512))
    chapter._stored_grids.cache_clear()
    try:
        with pytest.raises(ValueError, match="other settings"):
            chapter._stored_grids()
    finally:
        chapter._stored_grids.cache_clear()
