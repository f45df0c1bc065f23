"""Issue 22: the backward verdicts as rates over seeds and embedding draws (onelayer.studies.trees.backward_seeds and the
stored runs of onelayer.studies.trees.beyond.backward_beyond_runs), recomputed on small cases against the stored sweeps."""

from __future__ import annotations

from onelayer import formatting

import numpy as np
import pytest
import torch

from onelayer.studies.trees import beyond
from onelayer.trees.backward import dynamics
from onelayer.studies.trees import backward_seeds as seeds
from onelayer.trees.shared import embeddings


def test_member_h_stats_match_the_single_matrix_statistics():
    g = torch.Generator().manual_seed(3)
    A = embeddings.independent_embeddings(6, 6, g)
    B = torch.randn(3, 6, 6, generator=g, dtype=torch.float64)
    B[2] = 0.0
    got = seeds.member_h_stats(B, A)
    for b in range(3):
        stats = dynamics.h_stats(A.T @ B[b] @ A)
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
    with pytest.raises(ValueError, match="kind"):
        seeds.seed_runs("sparse", seeds=[0])
    with pytest.raises(ValueError, match="seeds"):
        seeds.seed_runs("one_hot", seeds=[])
    with pytest.raises(ValueError, match="multiple"):
        seeds.seed_runs("one_hot", seeds=[0], steps=15, record_every=10)


def test_stored_seed_sweep_matches_a_recomputed_prefix():
    """The first 100 steps of seeds 0 and 1 (one-hot) and of draw 1 with seed 0 (Gaussian) retrace the stored runs."""
    stored = seeds.load_stored()
    assert not stored["quick"] and stored["command"].startswith("python -m onelayer sweep trees-backward-seeds")
    for kind, members in (("one_hot", [0, 1]), ("gaussian", [0])):
        run = stored["runs"][kind]
        assert len(run["seeds"]) >= 20 and run["test_trees"] >= 1000
        short = seeds.seed_runs(kind, seeds=members, steps=100, checkpoint_every=100)
        k = len(short["record_steps"])
        for name in ("loss", "h1", "residual"):
            np.testing.assert_allclose(np.asarray(short[name]), np.asarray(run[name])[:k, : len(members)],
                                       rtol=1e-9, atol=1e-12)  # tol: batched members, summation order
        assert short["exact_paths"][1] == [run["exact_paths"][1][i] for i in range(len(members))]  # exact: counts
        for name in ("test_loss", "margin", "margin_bound"):
            np.testing.assert_allclose(np.asarray(short[name])[1], np.asarray(run[name])[1, : len(members)],
                                       rtol=1e-9, atol=1e-12)  # tol: batched members, summation order
        assert short["lengths"] == run["lengths"]  # exact: the same seeded test set


def test_stored_beyond_sweep_matches_a_recomputed_run():
    stored = beyond.load_stored()
    assert not stored["quick"]
    for kind in beyond.EMBEDDINGS:
        fam = stored["families"][kind]
        assert fam["runs"] >= 20 and sum(fam["goals"].values()) >= 1000
        again = beyond.backward_beyond_runs(kind, runs=1, count=fam["count"])
        for shape in beyond.SHAPES:
            assert again["exact"][shape][0] == fam["exact"][shape][0]  # exact: counts of the same run
            assert again["stops"][shape][0] == fam["stops"][shape][0]  # exact: counts of the same run
        assert again["train_loss"][0] == pytest.approx(fam["train_loss"][0], rel=1e-9)  # tol: summation order


def test_beyond_runs_validation():
    with pytest.raises(ValueError, match="runs"):
        beyond.backward_beyond_runs("one_hot", runs=0)
    with pytest.raises(ValueError, match="kind"):
        beyond.backward_beyond_runs("sparse", runs=1, count=1)
