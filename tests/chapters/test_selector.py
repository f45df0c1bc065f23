"""Chapter "Softmax attention as a selector": its module (onelayer.chapters.selector)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer import attention
from onelayer.chapters import selector
from onelayer.verdicts import selector as selector_verdicts


def test_settings_are_frozen_and_the_logits_have_one_maximum():
    with pytest.raises(AttributeError):
        selector.SETTINGS.z = (0.0,)  # a frozen dataclass
    z = np.array(selector.SETTINGS.z)
    assert attention.maximal_set(z).tolist() == [0] and attention.logit_gap(z) == pytest.approx(0.6)


def test_error_rows_are_the_attention_module_and_below_the_bound():
    z = np.array(selector.SETTINGS.z)
    rows = selector.error_rows()
    assert [r["lambda"] for r in rows] == list(selector.SETTINGS.lams)
    for r in rows:
        assert r["l1_error"] == pytest.approx(attention.selection_error(z, r["lambda"]), rel=1e-12)
        assert r["l1_error"] <= r["bound"] + 1e-15


def test_figure_numbers_reuse_the_rows():
    fig, numbers = selector.error_vs_lambda(quick=True)
    assert fig is not None and numbers["table"] == selector.error_rows() and numbers["bound_holds"] is True


def test_scale_for_accuracy_attains_the_bound_with_tied_others():
    _, numbers = selector.scale_for_accuracy()
    assert [r["gap"] for r in numbers["table"]] == list(selector.SETTINGS.gaps)
    for r in numbers["table"]:
        assert r["l1_error"] == pytest.approx(selector.SETTINGS.target, rel=1e-6)
        assert r["l1_error"] == pytest.approx(r["bound"], rel=selector.SETTINGS.target)


def test_player_and_its_numbers_show_the_same_scales():
    player = selector.scale_player()
    _, numbers = selector.scale_frames()
    assert len(player) == len(selector.SETTINGS.scrub_lams)
    assert "lambda = 20" in player.alt_texts[-1]
    assert player.frames[0] != player.frames[-1]
    assert len(numbers["frames"]) == len(selector.SETTINGS.scrub_lams)


def test_verdict_row_holds_and_fails_when_the_bound_is_broken(monkeypatch):
    (row,) = selector.verdict_rows()
    assert set(row) == {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}
    assert row["verdict"] == "holds" and row["chapter"] == "selector" and row["source"] == "[ours]"
    # a bound half as large is violated where the others tie: the verdict must say so
    real = attention.selection_bound
    monkeypatch.setattr(attention, "selection_bound", lambda z, lam: 0.5 * real(z, lam))
    assert selector.verdict_rows()[0]["verdict"] == "fails"


def test_verdict_words_follow_the_counts_and_the_attained_gap():
    s = selector.SETTINGS
    good = {"holds": 10, "cases": 10, "attained": 0.5 * s.target}
    (row,) = selector_verdicts.rows(s, check=good)
    assert (row["verdict"], row["class"]) == ("holds", "exact") and "10/10 cases" in row["measurement"]
    for bad in ({**good, "holds": 9}, {**good, "attained": 2 * s.target}):
        assert [selector_verdicts.rows(s, check=bad)[0][k] for k in ("verdict", "class")] == ["fails", "fails"]


def test_player_frames_share_their_axis_limits_and_name_their_scale():
    _, numbers = selector.scale_frames()
    panels = [frame["figure"]["axes"][0] for frame in numbers["frames"]]
    assert all(p["xlim"] == panels[0]["xlim"] and p["ylim"] == panels[0]["ylim"] for p in panels)  # exact: rounded copies of fixed limits
    assert [p["title"].split(":")[0] for p in panels] == [f"lambda = {lam:g}" for lam in selector.SETTINGS.scrub_lams]


def test_tie_rows_are_uniform_on_the_maximal_logits():
    rows = selector.tie_rows()
    assert [r["lambda"] for r in rows] == 2 * list(selector.SETTINGS.tie_lams)
    equal = [r for r in rows if r["case"] == "all logits equal"]
    assert all(r["each_maximal"] == pytest.approx(1 / 5, rel=1e-15) and r["others"] == 0.0 for r in equal)  # exact: an empty sum
    two = [r for r in rows if r["case"] == "two maximal logits"]
    assert two[-1]["each_maximal"] == pytest.approx(0.5, rel=1e-12) and two[0]["others"] > two[1]["others"] > two[2]["others"]
    assert np.allclose(attention.softmax(np.zeros(5), 1e6), 1 / 5)


def test_bound_check_counts_every_case():
    check = selector.bound_check()
    assert check["holds"] == check["cases"] == len(selector.SETTINGS.lams) + len(selector.SETTINGS.gaps)
    assert check["attained"] <= selector.SETTINGS.target
    assert check["lambda_small_gap"] > check["lambda_large_gap"]
