"""Chapter "Theorem 4: it generalizes to unseen trees": its module (onelayer.chapters.trees.backward_generalization)."""

from __future__ import annotations

import numpy as np
import pytest

from onelayer.chapters.trees import backward_generalization as chapter
from onelayer.trees.backward import generalization as gen
from onelayer.trees.backward import model

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "chapter"}


def test_quick_run_is_trained_once_and_its_test_record_is_the_final_model():
    hist = chapter.run(True)
    assert chapter.run(True, progress=True) is hist  # cached: the notebook's progress bar does not retrain
    test, _ = chapter.test_set(True)
    A = chapter.embedding_matrix()
    ev = gen.evaluate(hist.params["B"], A, test)  # an independent evaluation of the final parameters
    T = chapter.test_fields(True)
    assert T["loss"][-1] == pytest.approx(ev["loss"], rel=1e-12)  # tol: the same sums, recomputed
    assert T["path_accuracy"][-1] == ev["path_accuracy"]  # exact: a count of correct paths
    assert hist.steps.tolist() == list(range(0, 201, 50))


def test_accuracy_by_length_counts_every_test_tree_and_matches_greedy_decoding():
    test, trees = chapter.test_set(True)
    by_len = chapter.accuracy_by_length(True)
    assert sum(c for c, _ in by_len.values()) == len(trees)
    res = model.greedy_decode(chapter.run(True).params["B"], chapter.embedding_matrix(), test)
    overall = sum(c * a for c, a in by_len.values()) / len(trees)
    assert overall == pytest.approx(res.path_accuracy, abs=1e-12)  # tol: a weighted mean of counts


def test_training_summary_against_the_record():
    T = chapter.test_fields(True)
    summary = chapter.training_summary(True)
    positive = T["margin"] > 0
    assert summary["bound_holds_where_margin_positive"] == bool(np.all(T["loss"][positive] <= T["margin_bound"][positive]))
    full = summary["full_step"]
    if full is not None:
        steps = chapter.run(True).steps
        assert T["path_accuracy"][steps.tolist().index(full)] == 1.0  # exact: every path right
        assert np.all(T["path_accuracy"][steps < full] < 1.0)


def test_gaussian_embeddings_are_not_orthogonal():
    G = chapter.embedding_matrix(gaussian=True).numpy()
    gram = G.T @ G
    assert np.abs(gram - np.diag(np.diag(gram))).max() > 0.1
    _, numbers = chapter.generalization_embeddings(True)
    assert len(numbers["table"]) == len(chapter.run(True).steps)


def test_table_rows_show_the_chosen_checkpoints():
    steps = [r["step"] for r in chapter.training_rows(True)]
    assert steps == [t for t in chapter.SETTINGS.table_steps if t <= 200]


def test_verdicts_follow_the_measurement(monkeypatch):
    summary = {"full_step": 500, "train_loss": 0.01, "test_loss": 0.004, "bound": 0.01, "bound_holds_where_margin_positive": True}
    gauss = {"residual": 0.8, "path_accuracy": 0.99, "margin": 0.7}
    runs = tuple({"path_accuracy": 1.0, "stop_rate": 1.0, "largest_tree": 70, "deepest_goal": 12} for _ in range(6))
    monkeypatch.setattr(chapter, "training_summary", lambda quick=False: summary)
    monkeypatch.setattr(chapter, "gaussian_summary", lambda quick=False: gauss)
    monkeypatch.setattr(chapter, "accuracy_by_length", lambda quick=False, gaussian=False: {4: (86, 1.0), 5: (63, 1.0)})
    monkeypatch.setattr(chapter, "beyond_runs", lambda: runs)
    rows = chapter.verdict_rows()
    assert all(set(r) == KEYS and r["chapter"] == "backward_generalization" for r in rows)
    assert [r["verdict"] for r in rows] == ["holds", "holds", "as described: learning works, exactness is lost",
                                            "holds on every run"]
    assert all("one seed" in r["measurement"] for r in rows[:3]) and "20 trees of each shape" in rows[3]["measurement"]
    summary["bound_holds_where_margin_positive"] = False
    monkeypatch.setattr(chapter, "beyond_runs", lambda: runs[:5] + ({**runs[0], "stop_rate": 0.9},))
    assert [r["verdict"] for r in chapter.verdict_rows()][1::2] == ["fails", "fails on some run"]


@pytest.mark.slow
def test_chapter_verdicts_on_the_full_runs():
    verdicts = [r["verdict"] for r in chapter.verdict_rows()]
    assert verdicts == ["holds", "holds", "as described: learning works, exactness is lost", "holds on every run"]
