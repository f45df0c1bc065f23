"""The loss normalisation both trees models share (onelayer.trees.shared.data)."""

import pytest
import torch

from onelayer.trees.shared.data import LossOptions, normalised


def test_normalised_divides_by_positions_or_trees_and_halves():
    # 3 trees with 7 (tree, position) pairs in all and a summed squared error of 21
    assert normalised(21.0, positions=7, trees=3, options=LossOptions()) == 1.5  # exact: 21 / 7 / 2
    assert normalised(21.0, positions=7, trees=3, options=LossOptions("mean", False)) == 3.0  # exact: 21 / 7
    assert normalised(21.0, positions=7, trees=3, options=LossOptions("sum", True)) == 3.5  # exact: 21 / 3 / 2
    assert normalised(21.0, positions=7, trees=3, options=LossOptions("sum", False)) == 7.0  # exact: 21 / 3


def test_normalised_works_per_member_and_rejects_other_options():
    total, positions = torch.tensor([4.0, 9.0]), torch.tensor([2.0, 3.0])
    per_member = normalised(total, positions=positions, trees=2, options=LossOptions())
    assert torch.equal(per_member, torch.tensor([1.0, 1.5]))  # exact: halves of 4/2 and 9/3
    with pytest.raises(TypeError, match="options must be a LossOptions"):
        normalised(1.0, positions=1, trees=1, options="mean")
