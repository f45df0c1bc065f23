"""Chapter "Random initialisation": its module (onelayer.chapters.walks.random_init)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.chapters.walks import random_init as chapter
from onelayer.rates import rate
from onelayer.walks import random_init as ri

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}


@pytest.fixture(scope="module")
def rows():
    return chapter.verdict_rows()


def test_quick_sweep_has_the_quick_grid_and_sizes():
    data = chapter.sweep(quick=True)
    assert data["meta"]["N"] == ri.QUICK["N"] and len(data["runs"]) == 2 * 2  # 2 readings x 2 walks x 1 seed
    assert chapter.sweep(quick=True) is data  # cached: the figures and the player read one sweep


def test_ordering_counts_add_up_and_settings_rows_group_the_seeds():
    rows = chapter.ordering()[1]["table"]
    counts = chapter.ordering_counts(rows)
    assert sum(counts[k] for k in ("p=0.5", "p=1", "tie", "neither")) == counts["pairs"] == len(rows) == 108 // 2
    assert (counts["paper_rate"].k, counts["paper_rate"].n) == (counts["paper_pattern"], counts["pairs"])
    grouped = chapter.ordering_settings_rows(rows)
    assert len(grouped) == 3 * 6 and all(len(g["first"].split(", ")) == 3 for g in grouped)


def test_closest_ranking_is_sorted_by_the_mean_distance_to_the_authors_table():
    ranking = chapter.closest_ranking()
    means = [np.mean(d) for _, d in ranking]
    assert means == sorted(means) and chapter.closest_reading() == ranking[0][0]
    p1, half = chapter.closest_runs()
    assert (p1["config"]["p"], half["config"]["p"]) == (1.0, 0.5)
    assert ri.table_distance(p1) == pytest.approx(ranking[0][1][0], abs=1e-12)  # seed 0 is the first distance


def test_value_rows_are_the_snapshots_of_the_closest_run():
    V = chapter.fig12()[1]["V"]
    for r in chapter.value_rows():
        A = np.array(V[str(r["step"])])
        assert r["mean"] == pytest.approx(A.mean(), rel=1e-12)
        assert r["relative_spread"] == pytest.approx((A.max() - A.min()) / A.mean(), rel=1e-12)


def test_sum_loss_is_the_mean_loss_with_a_thousand_fold_step():
    assert chapter.equivalence() < 1e-9  # tol: round-off of 30 steps (the same trajectory in exact arithmetic)


def test_lock_rows_point_at_the_profile_maximum():
    for r in chapter.lock_rows():
        assert r["position"] + r["lag"] == 97 and 0 < r["attention"] <= 1


def test_verdict_rows_have_the_keys_and_follow_from_the_measurements(rows):
    assert all(set(r) == KEYS and r["chapter"] == "random_init" for r in rows)
    order = ri.ordering_table(ri.load())
    hits = sum(bool(r["paper_pattern"]) for r in order)
    assert f"in {rate(hits, len(order)).text()} of the (setting, seed) pairs" in rows[0]["measurement"]
    assert "3 seeds" in rows[0]["settings"]
    assert (hits == 0) == rows[0]["verdict"].startswith("not reproduced")
    assert rows[1]["verdict"] == "holds qualitatively in one run" and "one run" in rows[1]["settings"]
    learned = chapter.learned_half_runs()
    half = chapter.learned_half_rates()
    assert half["n"] == len(learned) == len(chapter.learned_half_rows())
    assert f"{len(learned)} runs learned p=1/2" in rows[2]["measurement"]
    assert f"on x_(N-1) in {half['parent'].text()}" in rows[2]["measurement"]
    assert rows[2]["verdict"].startswith("partly")  # two learned runs attend to x_(N-2)


def test_the_table_helpers_show_the_ranking_and_the_authors_table():
    ranking = chapter.ranking_rows()
    assert len(ranking) == chapter.SETTINGS.top_ranked
    assert [r["mean distance"] for r in ranking] == sorted(r["mean distance"] for r in ranking)
    table = chapter.weighted_token_table()
    assert [r["step"] for r in table] == [r["step"] for r in chapter.weighted_token_rows()]
    assert all(len(r["ours"].split()) == len(r["authors"].split()) == 6 for r in table)


def test_figure6_verdict_follows_the_count_of_runs_with_the_pattern(monkeypatch):
    real = ri.ordering_table
    monkeypatch.setattr(ri, "ordering_table", lambda data, **kw: [{**r, "paper_pattern": True} for r in real(data, **kw)])
    assert chapter.verdict_rows()[0]["verdict"].startswith("reproduced only in")


def test_player_frames_share_their_axes():
    import matplotlib.pyplot as plt

    data = chapter.sweep()
    limits = chapter.player_kl_limits(data)
    draw, norms, readings = chapter._player_grid(data)
    for norm, reading in ((norms[0], readings[0]), (norms[-1], readings[-1])):
        fig = draw(norm, reading)
        assert fig.axes[1].get_ylim() == pytest.approx(limits, rel=1e-12)  # tol: a log axis stores its limits
        assert fig.axes[0].get_ylim() == fig.axes[2].get_ylim() == (-0.02, 1.02)  # exact: set from these literals
        plt.close(fig)
