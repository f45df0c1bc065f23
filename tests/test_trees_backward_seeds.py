"""Issue 22: the backward verdicts as rates over seeds and embedding draws (onelayer.studies.trees.backward_seeds and the
stored study onelayer.studies.trees.backward_beyond), recomputed on small cases against the stored studies."""

from __future__ import annotations

from onelayer import formatting

import numpy as np
import pytest
import torch

from onelayer.studies import registry
from onelayer.studies import runner
from onelayer.studies.runner import Member
from onelayer.studies.trees import analysis, backward_beyond, backward_own_tests, beyond
from onelayer.studies.trees import backward_seeds as seeds
from onelayer.trees.shared import embeddings


def test_member_h_stats_match_the_single_matrix_statistics():
    g = torch.Generator().manual_seed(3)
    A = embeddings.independent_embeddings(6, 6, g)
    B = torch.randn(3, 6, 6, generator=g, dtype=torch.float64)
    B[2] = 0.0
    got = seeds.member_h_stats(B, A)
    for b in range(3):
        stats = analysis.h_stats(A.T @ B[b] @ A)
        np.testing.assert_allclose(got[b].numpy(), [stats["h1"], stats["h2"], stats["residual"]], atol=1e-12)  # tol: same sums, another order
    with pytest.raises(ValueError, match="B must"):
        seeds.member_h_stats(B[0], A)


def test_merge_bins_gives_every_bin_enough_cases():
    counts = {1: 300, 2: 200, 3: 120, 4: 60, 5: 30, 6: 15, 7: 5}
    assert seeds.merge_bins(counts, 50) == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 7)]
    assert seeds.merge_bins({"1": 30, "2": 30, "3": 10}, 50) == [(1, 3)]  # the short last bin joins the one before
    assert seeds.merge_bins({1: 10, 2: 45, 3: 60}, 50) == [(1, 2), (3, 3)]
    for lo_hi in seeds.merge_bins(counts, 100):
        assert sum(v for k, v in counts.items() if lo_hi[0] <= k <= lo_hi[1]) >= 100
    with pytest.raises(ValueError, match="min_count"):
        seeds.merge_bins({1: 10}, 50)
    with pytest.raises(ValueError, match="counts"):
        seeds.merge_bins({}, 50)


def test_mean_text_and_validation():
    assert formatting.mean_text((0.5, 0.25, 0.75)) == "0.5 [0.25, 0.75]"
    with pytest.raises(ValueError, match="interval"):
        formatting.mean_text((1.0, 2.0))
    with pytest.raises(ValueError, match="multiple"):
        seeds.run_member(seeds.Settings(steps=15, record_every=10), seeds.members(seeds.Settings())[0])


@pytest.mark.recompute
def test_stored_seed_study_matches_a_recomputed_prefix():
    """The first 100 steps of seeds 0 and 1 (one-hot) and of draw 1 with seed 0 (Gaussian) retrace the stored runs."""
    data = registry.load("trees-backward-seeds")
    assert not data["quick"] and len(data["members"]) == 40
    stored = seeds.stored()
    short = seeds.Settings(steps=100, checkpoint_every=100)
    for kind, keys in (("one_hot", ["one_hot-s000", "one_hot-s001"]), ("gaussian", ["gaussian-d001-s000"])):
        run = stored["runs"][kind]
        assert len(run["seeds"]) >= 20 and run["test_trees"] >= 1000
        for i, key in enumerate(keys):
            member = next(m for m in seeds.members(short) if m.key == key)
            again = seeds.run_member(short, member)
            k = len(again["loss"])
            for name in ("loss", "h1", "residual"):
                np.testing.assert_allclose(again[name], np.asarray(run[name])[:k, i],
                                           rtol=1e-9, atol=1e-12)  # tol: batched members, summation order
            assert again["exact_paths"][1] == run["exact_paths"][1][i]  # exact: counts
            for name in ("test_loss", "margin", "margin_bound"):
                np.testing.assert_allclose(again[name][1], run[name][1][i],
                                           rtol=1e-9, atol=1e-12)  # tol: batched members, summation order


@pytest.mark.recompute
def test_the_cheapest_stored_seed_member_recomputes_equal():
    """The runner's verify on the cheapest member (one-hot seed 0, the full 1,500 steps) agrees with the stored record."""
    assert runner.verify(seeds.STUDY, sample=1, echo=None)


@pytest.mark.recompute
def test_stored_beyond_study_matches_recomputed_members():
    """The first run of each family (one member each) recomputes equal to its stored record."""
    data = registry.load("trees-backward-beyond")
    assert not data["quick"] and len(data["members"]) >= 40
    for kind in beyond.EMBEDDINGS:
        fam = data["summary"]["families"][kind]
        assert fam["runs"] >= 20 and sum(fam["goals"].values()) >= 1000
        record = next(r for r in data["members"] if r["key"] == f"{kind}-s000")
        again = backward_beyond.run_member(backward_beyond.STUDY.settings, Member(record["key"], record["fields"]))
        for shape in beyond.SHAPES:
            assert again["exact"][shape] == record["result"]["exact"][shape] == fam["exact"][shape][0]  # exact: counts of the same run
            assert again["stops"][shape] == record["result"]["stops"][shape]  # exact: counts of the same run
        assert again["train_loss"] == pytest.approx(record["result"]["train_loss"], rel=1e-9)  # tol: summation order


@pytest.mark.recompute
def test_own_test_study_ties_to_the_seed_study_and_recomputes():
    """Issue 31: the Gaussian draws on their own test trees. On the shared test set at step 1,500 each draw gives the
    stored seed study's count again (same draw, seed, steps and test set); the cheapest member recomputes equal."""
    data = registry.load("trees-backward-own-tests")
    settings = data["settings"]
    assert not data["quick"] and len(data["members"]) >= 20 and settings["test_trees"] >= 1024
    assert settings["readings"] == [1500, 3000]
    gaussian = seeds.stored()["runs"]["gaussian"]
    assert data["summary"]["shared"]["1500"]["per_draw"] == gaussian["exact_paths"][-1]  # exact: counts of the same runs
    for record in data["members"]:
        own = record["result"]["own"]
        assert own["goals"] == sum(own["goals_by_length"].values()) == settings["test_trees"]
        assert all(own["exact"][t] == sum(own["exact_by_length"][t].values()) for t in own["exact"])
    assert runner.verify(backward_own_tests.STUDY, sample=1, echo=None)
