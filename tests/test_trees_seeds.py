"""Issue 14 item 4: the heads x depth sweep over seeds, and where the multi-head full models fail."""

from __future__ import annotations

import pytest

from onelayer.trees.forward.seeds import cell_summary, seeded_sweep


def test_multi_head_full_models_fail_beyond_the_training_depth():
    cells = {c["arch"]: c for c in seeded_sweep(archs=("two_head", "full2"), seeds=(1,), budget=1000, test_trees=256)}
    two, full2 = cells["two_head"]["runs"][0], cells["full2"]["runs"][0]
    assert two["test_path_accuracy"] == 1.0 and two["steps_to_converge"] == 200
    assert full2["steps_to_converge"] == 100  # converges on the training trees ...
    assert full2["within"] > 0.95 and full2["beyond_training_depth"] < 0.75  # ... but deeper goals fail


def test_cell_summary_and_validation():
    rows = [{"steps_to_converge": s, "test_path_accuracy": a} for s, a in ((100, 0.9), (None, 0.5), (300, 1.0))]
    c = cell_summary(rows)
    assert c["converged"] == 2 and c["steps_median"] == 200 and c["acc_range"] == (0.5, 1.0)
    with pytest.raises(ValueError, match="depths"):
        seeded_sweep(depths=(0,))
