"""Shared test set-up: one thread, float64, a fixed seed for every test."""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import matplotlib

matplotlib.use("Agg")

import pytest
import torch


@pytest.fixture(autouse=True)
def _deterministic():
    import onelayer

    onelayer.setup(0)
    yield
    torch.set_default_dtype(torch.float64)
