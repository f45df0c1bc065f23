"""Chapter "Theorem 1: a backward reasoner by construction": its module (onelayer.chapters.trees.backward_construction)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.chapters.trees import backward_construction as chapter
from onelayer.rates import rate
from onelayer.trees.backward import construction, model
from onelayer.verdicts import trees_backward_construction as verdicts

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


def test_lemma1_row_against_a_numpy_gram_matrix():
    (row,) = chapter.lemma1()[1]["table"]
    A = chapter.setting(True)["A"].numpy()  # the same draw of embeddings in quick and full mode
    G = A.T @ A
    assert row["max_offdiag_gram"] == pytest.approx(np.abs(G - np.diag(np.diag(G))).max(), rel=1e-12)  # tol: float64 sums
    assert row["max_offdiag_gram"] > 0.1 and row["max_error_ATBA_minus_I"] < 1e-12  # far from orthogonal, yet exact


def test_quick_lambda_grids_decode_exactly_from_the_first_exact_lambda_on():
    A, rand = chapter.setting(True)["A"], chapter.setting(True)["random"]
    lam = chapter.first_exact_lambda(True)
    assert model.greedy_decode(construction.constructed_B(A, lam), A, rand).path_accuracy == 1.0  # exact: integer counts
    smaller = [v for v in chapter.lambda_grids(True)["random, 0-3 children"]["lam"] if v < lam]
    assert all(model.greedy_decode(construction.constructed_B(A, v), A, rand).path_accuracy < 1.0 for v in smaller)


def test_loss_vs_lambda_slopes_tend_to_minus_two():
    _, numbers = chapter.loss_vs_lambda(quick=True)
    assert all(abs(s + 2.0) < 0.1 for s in numbers["log_loss_slope_lambda_ge_5"].values())  # tol: e^(-2 lambda) up to (N-1)^2
    assert len(numbers["table"]) == 2 * len(chapter.SETTINGS.lambdas[::2])


def test_attention_figure_shows_the_deepest_tree():
    _, numbers = chapter.construction_attention(quick=True)
    assert numbers["depth"] == max(t.depth for t in chapter.setting(True)["random_trees"])


def test_deep_trees_are_deep_and_decoded():
    deep = chapter.deep_trees()
    s = chapter.SETTINGS
    assert sum(deep["depths"].values()) == s.deep_count
    assert all(c == 0 for d, c in deep["depths"].items() if d < s.deep_min_depth)
    assert deep["rows"][-1]["path_accuracy"] == 1.0 and deep["rows"][0]["path_accuracy"] < 1.0  # exact: integer counts


def test_player_and_frames_show_the_same_lambdas():
    player = chapter.lambda_player()
    _, frames = chapter.lambda_frames(quick=True)
    assert len(player) == len(chapter.SETTINGS.scrub_lambdas) and len(frames["frames"]) == 3


def test_verdicts_hold_and_follow_the_measurement():
    rows = chapter.verdict_rows()
    assert all(KEYS <= set(r) <= KEYS | {"rates", "checks"} and r["chapter"] == "backward_construction" for r in rows)
    assert [r["verdict"] for r in rows] == ["holds"] * 4
    # the attention off its closed form by 1e-3 and half the perfect and random trees decoded wrongly
    (lemma,) = chapter.lemma1()[1]["table"]
    worst = max(float(sw["max_weight_error"].max()) for sw in chapter.lambda_grids().values())
    decoded = chapter.decoded_rates()
    broken = {name: rate(r.k // 2, r.n) if name in (chapter.PERFECT, chapter.RANDOM) else r for name, r in decoded.items()}
    rows = verdicts.rows(chapter.SETTINGS, lemma=lemma, weight_error=worst + 1e-3, slopes=chapter.slopes(),
                         first_exact=float("nan"), decoded=broken)
    assert [r["verdict"] for r in rows] == ["holds", "fails", "holds", "fails"]


def test_player_frames_share_one_colour_scale_and_axis_limits():
    _, numbers = chapter.lambda_frames()
    panels = [frame["figure"]["axes"][0] for frame in numbers["frames"]]
    clims = [panel["images"][0]["clim"] for panel in panels]
    assert all(c == [0.0, 1.0] for c in clims)  # exact: the fixed limits vmin=0, vmax=1 as set
    assert all(p["xlim"] == panels[0]["xlim"] and p["ylim"] == panels[0]["ylim"] for p in panels)  # exact: one tree throughout
    assert [p["title"] for p in panels] == [f"lambda = {lam:g}" for lam in chapter.SETTINGS.scrub_lambdas]


def test_lambda_table_and_decoded_rates_reuse_the_lambda_grids():
    table, rows = chapter.lambda_table(True), chapter.lambda_rows(True)
    assert [r["loss_perfect"] for r in table] == [r["loss"] for r in rows if r["trees"] == chapter.PERFECT]  # exact: copies
    rates = chapter.decoded_rates()
    s = chapter.SETTINGS
    assert [r.n for r in rates.values()] == [s.train_batch, s.test_trees, s.deep_count]
    assert all(r.k == r.n and r.low > 0.98 for r in rates.values())
