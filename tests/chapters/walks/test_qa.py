"""Chapter "Beyond random walks: two question-answering tasks": its module (onelayer.chapters.walks.qa)."""

from __future__ import annotations

import pytest

from onelayer.chapters.walks import qa as chapter
from onelayer.studies.walks import qa, qa_readings
from onelayer.walks import qa as qa_tasks

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


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
    assert [r["normalize"] for r in table] == list(chapter.SETTINGS.runs.normalizations)
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


def _rows(rows, start):
    return [r for r in rows if r["claim"].startswith(start)]


def test_verdict_rows_have_the_keys_and_follow_from_the_measurements(rows):
    assert all(KEYS <= set(r) <= KEYS | {"rates"} and r["chapter"] == "qa" for r in rows)
    assert all("rates" in r for r in rows[1:])  # every verdict but the exact check is a rate of runs
    assert rows[0]["verdict"] == "holds"
    task1 = _rows(rows, "Task 1 is learned")
    assert [r["reading"].split(" (")[0] for r in task1] == ["no bias, keys and query normalised", "no bias, keys normalised",
                                                            "no bias, no normalisation"]
    assert [r["verdict"].split("; ")[0] for r in task1] == ["holds in every run (40/40)", "fails in every run (0/40)",
                                                            "fails in every run (0/40)"]
    # the frozen-attention control (walks-qa-frozen) beside each: Task 1 does not need the attention to move
    assert task1[0]["verdict"].endswith("so this claim does not test the attention")
    assert "attention frozen, only V trained: 40/40" in task1[0]["measurement"]
    assert task1[1]["verdict"].endswith("training the attention makes it worse")
    assert task1[2]["verdict"].endswith("no measurable difference from training the attention")
    assert "40/40 = 1.000 [0.912, 1.000]; seed 0 from step 3" in task1[0]["measurement"]
    task2 = _rows(rows, "Task 2 stays")
    assert task2[0]["verdict"] == "holds in every run (40/40)" and task2[1]["verdict"] == "holds in most runs"
    # with no normalisation the Gaussian W starts the attention almost one-hot, and some seeds separate the questions
    assert task2[2]["reading"] == "no bias, no normalisation" and "33/40" in task2[2]["measurement"]
    relu = _rows(rows, "with a hidden ReLU")[0]
    assert relu["verdict"] == "Task 1 fails in every run (0/40); Task 2 holds in every run (40/40)"
    bias = {r["reading"].split(" (")[0]: r for r in _rows(rows, "with a bias term")}
    assert len(bias) == 9
    att = bias["attention bias, keys and query normalised"]
    assert att["verdict"].startswith("Task 1 holds in every run (40/40); Task 2 holds in every run (40/40); "
                                     "Task 1 also learned with the attention frozen (38/40")
    assert [(d["label"], d["k"], d["n"]) for d in att["rates"]] == [("Task 1 learned by step 20", 40, 40),
                                                                      ("Task 2 near 1/2", 40, 40)]
    out = bias["output bias, keys and query normalised"]
    assert out["verdict"] == ("Task 1 holds in a minority of runs; Task 2 holds in every run (40/40); Task 1 with the "
                              "attention frozen 7/40 = 0.175 [0.087, 0.319]: no measurable difference from training "
                              "the attention")
    # the control beside every bias row: with keys only normalised, training the attention loses Task 1
    assert bias["attention bias, keys normalised"]["verdict"].endswith("training the attention makes it worse")
    assert all("attention frozen, only V (and the output bias) trained" in r["measurement"] for r in bias.values())
    # the two outcomes of seed 0 are rates: near one half in about half the runs, one answer in fewer
    assert "within 0.05 of 1/2 at step 100: 21/40" in out["measurement"]
    assert "one answer for every list: 15/40" in out["measurement"]


def test_attention_verdict_compares_the_frozen_control():
    from onelayer.rates import rate

    assert qa_readings.attention_verdict(rate(40, 40), rate(40, 40)).startswith("also learned with the attention frozen")
    assert qa_readings.attention_verdict(rate(40, 40), rate(2, 40)).startswith("with the attention frozen only 2/40")
    assert qa_readings.attention_verdict(rate(2, 40), rate(30, 40)).endswith("makes it worse")
    assert qa_readings.attention_verdict(rate(10, 40), rate(12, 40)).endswith("no measurable difference from training the attention")
    with pytest.raises(TypeError):
        qa_readings.attention_verdict(0.5, rate(1, 2))


def test_share_verdict_follows_the_interval():
    from onelayer.rates import rate

    assert qa_readings.share_verdict(rate(40, 40)) == "holds in every run (40/40)"
    assert qa_readings.share_verdict(rate(0, 40)) == "fails in every run (0/40)"
    assert qa_readings.share_verdict(rate(30, 40)) == "holds in most runs"  # [0.60, 0.86]
    assert qa_readings.share_verdict(rate(21, 40)) == "holds in about half the runs"  # [0.37, 0.67]
    assert qa_readings.share_verdict(rate(7, 40)) == "holds in a minority of runs"  # [0.09, 0.32]
    with pytest.raises(TypeError):
        qa_readings.share_verdict(0.5)


def test_seed_rates_count_the_stored_runs_and_the_quick_grid_has_the_same_form():
    data = qa_readings.seed_study()
    found = qa_readings.seed_rates(data, chapter.SETTINGS.seed_check_steps)
    assert len(found) == len(data["settings"]) == 26
    out = next(r for r in found if (r["task"], r["bias"], r["normalize"]) == (1, "output", "keys_and_query"))
    runs = next(s for s in data["settings"] if (s["task"], s.get("bias")) == (1, "output"))["runs"]
    assert out["rates"]["single_answer"].k == sum(r["answers"][-1] == 1 for r in runs)
    assert sum(out["finals"].values()) == out["rates"]["near_chance"].n == 40
    _, quick = chapter.seeds(quick=True)
    assert quick["source"] == "quick live run" and len(quick["table"]) == 4
    _, numbers = chapter.seeds()
    rows, columns = chapter.seed_table(numbers, 1)
    assert columns[0] == "reading" and len(rows) == 13 and len(columns) <= 8
    assert columns[-2:] == ["attention frozen: learned by step 100", "attention frozen: near 1/2"]
    shown = next(r for r in rows if r["reading"] == "output bias, keys and query normalised")
    assert shown["one answer"] == out["rates"]["single_answer"].text(2)
    assert sum(int(x.split(": ")[1]) for x in shown["final accuracy: runs"].split(", ")) == 40


def test_a_false_token_average_claim_fails(rows, monkeypatch):
    monkeypatch.setattr(qa_tasks, "average_gap", lambda task: 0.0625)
    assert chapter.verdict_rows()[0]["verdict"] == "fails"


def test_the_symmetry_table_prints_round_off_as_a_bound():
    rows = chapter.symmetry_rows()
    table, columns = chapter.symmetry_table(rows)
    assert columns[0] == "initialisation" and len(table) == len(rows) == 4
    zero = [r for r in table if r["initialisation"] == "zero"]
    assert all(r[c] == "< 1e-12" for r in zero for c in ("step 0", "largest", "step 100"))
    with pytest.raises(ValueError):
        chapter.seed_table(chapter.seeds(quick=True)[1], 3)
