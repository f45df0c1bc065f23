import numpy as np
import pytest
import torch

import onelayer
from onelayer import seeding


def test_setup_makes_draws_repeatable():
    onelayer.setup(123)
    a = torch.randn(5), np.random.rand(3)
    onelayer.setup(123)
    b = torch.randn(5), np.random.rand(3)
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])  # exact: the same seeded draws twice


def test_setup_dtype_and_threads():
    assert onelayer.setup(0, dtype="float32") == torch.float32
    assert torch.get_default_dtype() == torch.float32
    assert onelayer.setup(0) == torch.float64
    assert torch.get_num_threads() == 1


@pytest.mark.parametrize("kwargs, exc", [({"seed": -1}, ValueError), ({"dtype": "float16"}, ValueError), ({"threads": 0}, ValueError), ({"seed": 1.5}, TypeError)])
def test_setup_validates(kwargs, exc):
    with pytest.raises(exc):
        onelayer.setup(**kwargs)


def test_generators_are_independent_and_seeded():
    g1, g2 = seeding.generator(7), seeding.generator(7)
    assert torch.equal(torch.rand(4, generator=g1), torch.rand(4, generator=g2))  # exact: the same seeded draw twice
    assert seeding.numpy_rng(3).integers(1000) == seeding.numpy_rng(3).integers(1000)
