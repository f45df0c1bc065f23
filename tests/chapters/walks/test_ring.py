"""Chapter "The ring": its module (onelayer.chapters.walks.ring)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.chapters.walks import ring as chapter
from onelayer.studies.walks import analysis
from onelayer.walks import ring


def test_bayes_rows_are_counts_with_their_interval():
    _, numbers = chapter.bayes_accuracy(quick=True)
    n = chapter.SETTINGS.bayes_quick_walks
    assert [r["p"] for r in numbers["table"]] == list(chapter.SETTINGS.bayes_ps) and numbers["walks"] == n
    for r in numbers["table"]:
        assert r["walks"] == n and r["simulated"] == r["right"] / n  # exact: the same division
        assert r["simulated"] == pytest.approx(analysis.simulate_bayes_accuracy(6, r["p"], 20, n, seed=1), abs=1e-12)
        assert r["low"] <= r["right"] / n <= r["high"]
        assert r["max_p_1_minus_p"] == max(r["p"], 1 - r["p"])  # exact: max of two floats
    deterministic = [r for r in numbers["table"] if r["p"] in (0.0, 1.0)]
    assert all(r["right"] == n for r in deterministic)  # a deterministic walk is always predicted


def test_explorer_default_and_player_share_the_figure_function():
    fig, numbers = chapter.explorer_default()
    assert (numbers["K"], numbers["p"]) == (chapter.SETTINGS.explore_K, chapter.SETTINGS.explore_p)
    assert len(numbers["table"]) == chapter.SETTINGS.explore_R_max + 1
    player = chapter.explorer_player()
    assert len(player) == len(chapter.SETTINGS.scrub_Ks) * len(chapter.SETTINGS.scrub_ps)
    _, frames = chapter.explorer_frames(quick=True)
    assert len(frames["frames"]) == len(chapter.SETTINGS.scrub_Ks) * len(chapter.SETTINGS.scrub_ps[::3])


def test_mixing_rows_decay_for_the_odd_ring():
    _, numbers = chapter.mixing()
    odd = [r["distance"] for r in numbers["table"] if r["K"] == 5]
    assert odd[-1] < 1e-3 * odd[0]
    assert np.max(np.abs(np.array(numbers["eigenvalue_moduli"]["5"])[1:])) < 1


def test_verdicts_hold_and_fail_when_the_claim_is_false(monkeypatch):
    rows = chapter.verdict_rows()
    assert [r["verdict"] for r in rows] == ["holds", "holds"] and all(r["chapter"] == "ring" for r in rows)
    assert all(set(r) == {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}
               for r in rows)
    # a wrong population value (p instead of max(p, 1 - p)) lies outside the simulated intervals for p < 1/2
    monkeypatch.setattr(ring, "bayes_accuracy", lambda p: p)
    assert chapter.verdict_rows()[1]["verdict"] == "fails"
    monkeypatch.setattr(ring, "is_circulant", lambda A, tol: False)
    assert chapter.verdict_rows()[0]["verdict"] == "fails"


def test_the_explorer_player_keeps_one_colour_scale():
    import matplotlib.pyplot as plt

    from onelayer.figures import walks as figures
    limits = []
    for K in chapter.SETTINGS.scrub_Ks:
        for p in chapter.SETTINGS.scrub_ps[::3]:
            fig = figures.ring_explorer(K, p)
            limits.append(fig.axes[0].images[0].get_clim())
            plt.close(fig)
    assert set(limits) == {(0.0, 1.0)}  # exact: the limits are set to these two numbers
