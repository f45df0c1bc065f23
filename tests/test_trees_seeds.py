"""Issue 14 item 4: the heads x depth study over seeds, and where the multi-head full models fail."""

from __future__ import annotations

import pytest

from onelayer.studies.trees.forward_seeds import cell_summary, seeded_grid


def test_multi_head_full_models_fail_beyond_the_training_depth():
    cells = {c["arch"]: c for c in seeded_grid(archs=("two_head", "full2"), seeds=(1,), budget=1000, test_trees=256)}
    two, full2 = cells["two_head"]["runs"][0], cells["full2"]["runs"][0]
    assert two["test_path_accuracy"] == 1.0 and two["steps_to_converge"] == 200  # exact: mean of booleans (integer counts)
    assert full2["steps_to_converge"] == 100  # converges on the training trees ...
    assert full2["within"] > 0.95 and full2["beyond_training_depth"] < 0.75  # ... but deeper goals fail


def test_cell_summary_and_validation():
    rows = [{"steps_to_converge": s, "test_path_accuracy": a} for s, a in ((100, 0.9), (None, 0.5), (300, 1.0))]
    c = cell_summary(rows)
    assert c["converged"] == 2 and c["steps_median"] == 200 and c["acc_range"] == (0.5, 1.0)
    with pytest.raises(ValueError, match="depths"):
        seeded_grid(depths=(0,))


# --- the stored study over seeds 1 and 2 (python -m onelayer study trees-forward-seeds) ---------------------------

import numpy as np  # noqa: E402

from onelayer.studies import runner  # noqa: E402
from onelayer.studies.registry import load  # noqa: E402
from onelayer.studies.trees import forward_limits as limits, forward_seeds as seeds, stored_study  # noqa: E402


def _seeded() -> dict:
    return load("trees-forward-seeds")["summary"]


def test_stored_seeds_cover_every_cell_of_the_study_twice():
    stored, seeded = limits.load_stored(), _seeded()
    assert not load("trees-forward-seeds")["quick"] and seeded["seeds"] == [1, 2]
    cells = {(r["arch"], r["m"]) for r in stored["heads_depth"]}
    assert sorted((r["arch"], r["m"], r["seed"]) for r in seeded["runs"]) == sorted((a, m, s) for a, m in cells for s in (1, 2))
    runs = seeds.all_seeds(stored, seeded)
    assert all(c["seeds"] == 3 for c in seeds.stored_cells(runs))


def test_stored_profiles_account_for_every_test_tree():
    """The profile is a second decode of the stored parameters; it must add up to the run's own test accuracy."""
    for r in _seeded()["runs"]:
        by_depth = r["profile"]["by_goal_depth"].values()
        by_size = r["profile"]["by_size"].values()
        assert sum(n for n, _ in by_depth) == 1024 == sum(n for n, _ in by_size)
        for groups in (by_depth, by_size):
            assert abs(sum(n * a for n, a in groups) / 1024 - r["test_path_accuracy"]) < 1e-9


@pytest.mark.recompute
def test_a_stored_seeded_member_recomputes():
    stored = {m["key"]: m for m in load("trees-forward-seeds")["members"]}
    row = stored["m2-full2-s001"]["result"]
    assert (row["arch"], row["m"], row["seed"]) == ("full2", 2, 1)
    member = next(m for m in seeds.STUDY.member_list(seeds.STUDY.settings) if m.key == "m2-full2-s001")
    _, fresh, _, _ = runner.compute(seeds.STUDY, seeds.STUDY.settings, member)
    for key in ("steps_to_converge", "final_step", "test_path_accuracy", "train_path_accuracy", "profile"):
        assert fresh["result"][key] == row[key], key
    found, _ = runner.differences(stored["m2-full2-s001"], fresh, rtol=seeds.STUDY.rtol, atol=seeds.STUDY.atol)
    assert found == []


def test_seed_zero_rerun_equals_the_limits_study():
    """Seed 0 of the seeded protocol is the limits study's own run, to round-off (one cheap cell)."""
    row = next(r for r in limits.load_stored()["heads_depth"] if r["arch"] == "full1" and r["m"] == 2)
    again = seeds.stored_run("full1", 2, 0)
    assert np.allclose(again["loss"], row["loss"], rtol=1e-12, atol=0) and again["test_path_accuracy"] == row["test_path_accuracy"]


def test_all_seeds_rejects_a_repeated_seed_zero_and_unknown_cells():
    stored = limits.load_stored()
    with pytest.raises(ValueError, match="seed 0"):
        seeds.all_seeds(stored, {"runs": [{**stored["heads_depth"][0], "seed": 0}]})
    with pytest.raises(ValueError, match="not a cell"):
        seeds.all_seeds(stored, {"runs": [{**stored["heads_depth"][0], "seed": 1, "m": 9}]})
    with pytest.raises(TypeError, match="limits"):
        seeds.all_seeds([], {"runs": []})


def test_seeds_quick_study():
    data = stored_study.summary(seeds.STUDY, quick=True)
    assert data["seeds"] == [1] and len(data["runs"]) == len(limits.heads_depth_cells(quick=True))
    assert all(set(r["profile"]) == {"by_goal_depth", "by_size", "beyond_training_depth", "within"} for r in data["runs"])
    assert all("seconds" not in r for r in data["runs"])  # a member is a pure function of its settings
