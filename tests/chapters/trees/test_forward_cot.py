"""Chapter "Theorem 8 and the chain of thought": its module (onelayer.chapters.trees.forward_cot)."""

from __future__ import annotations

import pytest

from onelayer.chapters.trees import forward_cot as chapter
from onelayer.rates import rate
from onelayer.studies.trees import forward_limit_rates as limit_rates, forward_readings as readings, stored_study

KEYS = {"claim", "source", "reading", "settings", "measurement", "verdict", "class", "chapter"}


def test_verdicts_are_rates_over_runs():
    """Both rows rest on 20 seeds (the stored study): no row is a one-seed verdict, and each says its rates."""
    rows = chapter.verdict_rows()
    assert len(rows) == 2
    for row in rows:
        assert KEYS <= set(row) <= KEYS | {"rates"} and row["chapter"] == "forward_cot"
        assert "rates" in row  # the class comes from the rate of runs (claims.rated)
        assert row["source"] in {"[paper]", "[review]"}
        assert "one seed" not in row["measurement"] and "[" in row["measurement"]  # a Wilson interval
    t8 = chapter.theorem8_seeds()
    assert rows[0]["verdict"] == readings.runs_verdict(t8["paths solved"], "paths")
    assert t8["runs"] == limit_rates.SETTINGS["seeds"] >= 20


def test_runs_verdict_reads_the_interval():
    assert readings.runs_verdict(rate(20, 20), "x").startswith("holds in every run")
    assert readings.runs_verdict(rate(18, 20), "x").startswith("holds in most runs")
    assert readings.runs_verdict(rate(2, 20), "x").startswith("fails in most runs")
    assert readings.runs_verdict(rate(10, 20), "x").startswith("undecided")


def test_limit_rates_quick_study_feeds_the_chapter():
    data = stored_study.summary(limit_rates.STUDY, quick=True)
    q = limit_rates.QUICK
    assert len(data["theorem8"]) == q["seeds"]
    t8 = chapter.theorem8_seeds(data)
    assert sum(r["goals"] for r in t8["rows"]) == q["seeds"] * q["theorem8"]["test_trees"]  # exact: counts
    assert [r["runs"] for r in chapter.direct_seeds(data)] == [q["seeds"]] * len(q["direct"]["models"])


@pytest.mark.recompute
def test_stored_limit_rates_have_the_module_settings_and_reproduce_seed_0():
    data = chapter.limit_rates_stored()
    assert data["settings"] == limit_rates.SETTINGS
    s = data["settings"]["theorem8"]
    again = limit_rates.theorem8_runs(s, [0])[0]
    assert again["by_depth"] == data["theorem8"][0]["by_depth"]  # exact: counts of right goals
    assert again["loss"][-1] == pytest.approx(data["theorem8"][0]["loss"][-1], rel=1e-6)  # tol: one member vs 20


def test_merge_bins_merges_small_bins_into_their_smaller_neighbour():
    assert readings.merge_bins({1: 500, 2: 80, 3: 30, 4: 5}, 100) == [(1, 1), (2, 4)]
    assert readings.merge_bins({1: 30, 2: 500, 3: 200}, 100) == [(1, 2), (3, 3)]
    assert readings.merge_bins({1: 10, 2: 0, 3: 20}, 100) == [(1, 3)]  # empty keys dropped, the rest merged to one
    assert readings.merge_bins({1: 200, 2: 100}, 100) == [(1, 1), (2, 2)]
    with pytest.raises(ValueError, match="min_goals"):
        readings.merge_bins({1: 1}, 0)


def test_shown_depth_bins_hold_enough_goals():
    """The bins come from the test trees alone (the table's rows are built from them), so no model is trained."""
    bins = chapter.depth_bins(chapter.test_set()[0])
    assert len(bins) >= 3 and all(int(sel.sum()) >= chapter.SETTINGS.min_shown_goals for _, _, sel in bins)
    assert [hi for _, hi, _ in bins[:-1]] == [lo - 1 for lo, _, _ in bins[1:]], "bins must tile the depths"


def test_the_decoded_model_is_the_run_train_forward_gives():
    """The chapter decodes the training chapter's stored run (made by ``tracked_training``); at 60 steps that run and
    ``train_forward`` with the chapter's settings end at the same parameters, and the loaded run has its settings."""
    import torch

    from onelayer import store
    from onelayer.studies.runner import Member
    from onelayer.studies.trees import forward_training_runs as training_runs
    from onelayer.trees.forward.model import train_forward, two_head
    from onelayer.trees.shared import embeddings

    s = chapter.SETTINGS
    short = training_runs.Settings(S=s.S, m=s.m, steps=60, lr=s.lr, scrub_steps=(0, 60))
    record = store.from_jsonable(store.to_jsonable(training_runs.run_member(short, Member("main", {"run": "main"}))))
    tracked = stored_study.history(record)  # as the chapter reads it: from the stored JSON values
    live = train_forward(two_head(), embeddings.one_hot_embeddings(s.S), m=s.m, steps=60, lr=s.lr)
    assert all(torch.equal(tracked.params[k], live.params[k]) for k in live.params)  # exact: the same float64 steps in the same order
    _, hist = chapter.trained_two_head()
    assert int(hist.steps[-1]) == s.steps and set(hist.params) == set(live.params)
