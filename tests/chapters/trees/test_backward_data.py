"""Chapter "Trees I: the data": its module (onelayer.chapters.trees.backward_data)."""

from __future__ import annotations

from onelayer.chapters.trees import backward_data as chapter


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
