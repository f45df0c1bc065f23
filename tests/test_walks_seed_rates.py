"""The stored seed study of the Theorem 3.1 and 4.1 chapters (onelayer.studies.walks.seed_rates) against recomputed cases."""

from __future__ import annotations

import math

import pytest
import torch

from onelayer.studies import registry, runner
from onelayer.studies.walks import direction, edge, first_steps, seed_rates, sensitivity


@pytest.fixture(autouse=True)
def _float64():
    torch.set_default_dtype(torch.float64)


@pytest.fixture(scope="module")
def stored():
    return seed_rates.payload(registry.load(seed_rates.STUDY.name))


def _same(a, b, keys, tol, rel=1e-10):
    """Floats to ``abs=tol`` or ``rel`` (values such as the positional gap are about 20: their round-off is absolute
    3e-12 in the portability lanes, 2e-13 relative), everything else exactly."""
    for key in keys:
        x, y = a[key], b[key]
        if isinstance(x, float) and math.isnan(x):
            assert math.isnan(y), key
        elif isinstance(x, float):
            assert x == pytest.approx(y, abs=tol, rel=rel), key
        else:
            assert x == y, key  # exact: booleans, counts, lags and labels


def test_stored_study_has_the_full_settings(stored):
    c = seed_rates.STUDY.settings
    meta = stored["meta"]
    assert meta["quick"] is False and meta["settings"]["edge_seeds"] == c.edge_seeds >= 20
    assert len(stored["first_steps"]) == c.first_seeds >= 100
    assert len(stored["edge"]) == len(c.edge_Ks) * len(c.edge_ps) * c.edge_seeds
    assert len(stored["figure45"]) == len(c.readings) * len(c.norms) * c.figure45_seeds
    assert c.figure45_seeds >= 20 and "M/2" in c.norms and 40.0 in c.norms
    assert len(stored["direction"]) == c.direction_seeds >= 20


@pytest.mark.recompute
def test_stored_first_steps_recompute(stored):
    again = first_steps.first_steps_samples(stored["meta"]["settings"]["first_p"], seeds=[0, 7, 399])
    rows = {r["seed"]: r for r in stored["first_steps"]}
    for r in again:
        _same(r, rows[r["seed"]], list(r), 1e-12)  # tol: the same batched sums in other member batches


@pytest.mark.recompute
def test_stored_direction_recompute(stored):
    c = stored["meta"]["settings"]
    again = direction.direction_samples(c["direction_p"], seeds=[0, 39], direction_steps=c["direction_steps"],
                                        remainder_steps=c["remainder_steps"])
    rows = {r["seed"]: r for r in stored["direction"]}
    for r in again:
        _same(r, rows[r["seed"]], list(r), 1e-9)  # tol: member batches of another size


@pytest.mark.recompute
def test_stored_edge_recompute(stored):
    again = edge.edge_table((0.99,), seeds=[0, 6, 39])
    rows = {(r["K"], r["p"], r["seed"]): r for r in stored["edge"]}
    for r in again:
        _same(r, rows[(6, 0.99, r["seed"])], list(r), 1e-9)  # tol: member batches of another size


#: Figure 5 quantities that grow out of round-off: p = 1 starts in the symmetric state, which only the seeded Gram
#: error (2e-12) and the machine's last bits move, and 50 GD steps amplify both. Another CPU's kernels (or the 1e-14
#: jitter) move fig5_max_spread by about 2e-4 relative (measured in the portability lanes); the decisions built on it
#: (fig5_reproduced, the escape step, the accuracies) must still agree exactly or to 1e-9.
ROUNDOFF_AMPLIFIED = {"fig5_max_spread": 1e-2}


@pytest.mark.recompute
def test_stored_figure45_recompute(stored):
    for reading in ("sin", "exact"):
        again = sensitivity.figure45_seeds(40.0, positions=reading, seeds=[1, 2])
        rows = {(r["positions"], r["norm"], r["seed"]): r for r in stored["figure45"]}
        for r in again:
            ref = rows[(reading, 40.0, r["seed"])]
            _same(r, ref, [k for k in r if k != "norm" and k not in ROUNDOFF_AMPLIFIED], 1e-9)  # tol: as above
            for key, rel in ROUNDOFF_AMPLIFIED.items():
                assert r[key] == pytest.approx(ref[key], rel=rel), key  # tol: amplified round-off, see above


@pytest.mark.recompute
def test_the_cheapest_stored_member_is_recomputed():
    """The 400 first-step samples (three steps each, about 15 s), recomputed by the runner, equal their record."""
    assert runner.verify(seed_rates.STUDY, sample=1, echo=None)


def test_the_quick_study_round_trips(tmp_path):
    report = runner.run(seed_rates.STUDY, quick=True, out=tmp_path / "rates.json")
    data = seed_rates.payload(registry.load(seed_rates.STUDY.name, path=report.path))
    q = seed_rates.QUICK
    assert data["meta"]["quick"] is True and len(data["first_steps"]) == q.first_seeds
    assert len(data["direction"]) == q.direction_seeds and len(data["edge"]) == len(q.edge_ps) * q.edge_seeds
    assert any(isinstance(r["T0"], float) for r in data["edge"])
    assert all(isinstance(r["fig5_escape_step"], float) for r in data["figure45"])  # "nan" strings read back
