"""Chapter "Beyond random walks: two question-answering tasks": its module (onelayer.chapters.walks.qa)."""

from __future__ import annotations

import pytest

from onelayer.chapters.walks import qa as chapter
from onelayer.walks import qa

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}


@pytest.fixture(scope="module")
def rows():
    return chapter.verdict_rows()


def test_fig7_quick_numbers_are_the_runs_and_the_token_average_gaps():
    _, numbers = chapter.fig7(quick=True)
    steps = chapter.SETTINGS.quick_steps
    assert numbers["steps"] == steps and len(numbers["table"]) == 2 * (steps + 1)
    # Task 1: the apple count of the 16 words is at least 3 or at most 2, one word of 16 apart; Task 2: a tie
    assert numbers["average_gap"]["Task 1"] == pytest.approx(1 / 16, abs=1e-15)  # tol: a mean of 16 one-hot columns
    assert numbers["average_gap"]["Task 2"] < 1e-15  # tol: the same numbers summed in another order
    direct = qa.run(qa.setup_task(2), steps=steps)
    last = [r for r in numbers["table"] if r["run"] == "Task 2"][-1]
    assert last["test_accuracy"] == pytest.approx(float(direct.final("test_accuracy")), abs=1e-12)


def test_normalization_table_renames_the_registered_columns():
    _, numbers = chapter.normalization(quick=True)
    table, columns = chapter.normalization_table(numbers)
    assert columns[-1] == f"step {chapter.SETTINGS.quick_steps}"
    assert [r["normalize"] for r in table] == list(chapter.SETTINGS.normalizations)
    for shown, stored in zip(table, numbers["table"]):
        assert (shown["Task 1"], shown["fruit attention, Task 1, step 0"]) == (
            stored["task1_accuracy"], stored["task1_fruit_attention_start"])
    # uniform attention over 17 positions puts about 5/17 on the five fruits when keys and query are normalised
    assert table[0]["fruit attention, Task 1, step 0"] == pytest.approx(5 / 17, abs=0.01)  # tol: sigma = 0.01 start


def test_the_relu_model_does_not_move_from_zero():
    assert chapter.relu_from_zero() == {"V": 0.0, "A": 0.0, "q": 0.0}  # exact: every gradient has a zero factor


def test_player_frames_cover_the_grid():
    _, frames = chapter.explorer_frames(quick=True)
    assert len(frames["frames"]) == 2


def test_verdict_rows_have_the_keys_and_follow_from_the_measurements(rows):
    assert all(set(r) == KEYS and r["chapter"] == "qa" for r in rows)
    verdicts = [r["verdict"] for r in rows]
    assert verdicts[:3] == ["holds", "holds with keys and query normalised; fails without", "holds"]
    assert verdicts[3] == "Task 2 holds; Task 1 fails in our reading"
    assert verdicts[4] == "holds for the attention bias, fails for the output bias"
    assert "test accuracy 1 from step 3" in rows[1]["measurement"]


def test_a_false_token_average_claim_fails(rows, monkeypatch):
    monkeypatch.setattr(qa, "average_gap", lambda task: 0.0625)
    assert chapter.verdict_rows()[0]["verdict"] == "fails"
