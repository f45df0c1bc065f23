"""Chapter "Trees I: the data": its module (onelayer.chapters.trees.backward_data)."""

from __future__ import annotations

from onelayer.chapters.trees import backward_data as chapter
from onelayer.verdicts import trees_backward_data as verdicts


def test_train_test_trees_paths_end_at_the_root():
    _, numbers = chapter.train_test_trees()
    assert len(numbers["train_path"]) == chapter.SETTINGS.m + 1  # a leaf of a perfect tree of depth m


def test_player_and_frames_show_the_same_seeds():
    player = chapter.samples_player()
    _, frames = chapter.samples_frames(quick=True)
    assert len(player) == len(chapter.SETTINGS.scrub_seeds) and len(frames["frames"]) == 2


def test_verdict_holds_and_fails_on_a_broken_chain():
    (row,) = chapter.verdict_rows()
    assert row["verdict"] == "holds" and row["chapter"] == "backward_data"
    _, test_batch, test_trees = chapter.batches()
    test_batch.target_second[0, 0] = (test_batch.target_second[0, 0] + 1) % chapter.SETTINGS.S  # one wrong step
    checks = chapter.test_tree_checks(test_batch, test_trees)
    assert checks["path"] == checks["trees"] - 1 and checks["edges"] == checks["trees"]
    (broken,) = verdicts.rows(chapter.SETTINGS, checks=checks)
    assert broken["verdict"] == "fails" and broken["class"] == "fails"


def test_batch_rows_count_the_padding():
    train_batch, test_batch, _ = chapter.batches()
    rows = chapter.batch_rows(train_batch, test_batch)
    assert [r["trees"] for r in rows] == [chapter.SETTINGS.train_batch, chapter.SETTINGS.test_trees]
    assert rows[0]["K"] == chapter.SETTINGS.m and rows[0]["L"] == 2 ** (chapter.SETTINGS.m + 1) + chapter.SETTINGS.m - 1
    real, total = map(int, rows[0]["real tokens"].split("/"))
    assert real == total  # perfect trees: no padding
    real, total = map(int, rows[1]["real tokens"].split("/"))
    assert real < total

