"""The stored study of Figures 4 and 5 against the seeded Gram error (onelayer.studies.walks.gram_errors)."""

from __future__ import annotations

import pytest

from onelayer.studies import registry, runner
from onelayer.studies.walks import gram_errors


def test_the_stored_study_covers_its_settings():
    data = gram_errors.payload(registry.load(gram_errors.STUDY.name))
    c = data["meta"]["settings"]
    assert data["meta"]["quick"] is False and c["seeds"] >= 20 and 0.0 not in c["errors"]
    cells = {(r["relative_gram_error"], r["positions"], str(r["norm"])) for r in data["rows"]}
    assert len(cells) == len(c["errors"]) * len(c["readings"]) * len(c["norms"])
    assert len(data["rows"]) == len(cells) * c["seeds"]


@pytest.mark.recompute
def test_a_stored_member_is_recomputed():
    """The cheapest member (one cell of 40 samples, 50 steps), recomputed by the runner, equals its record."""
    assert runner.verify(gram_errors.STUDY, sample=1, echo=None)


def test_quick_run_round_trips(tmp_path):
    report = runner.run(gram_errors.STUDY, quick=True, out=tmp_path / "g.json")
    data = gram_errors.payload(registry.load(gram_errors.STUDY.name, path=report.path))
    q = gram_errors.QUICK
    assert len(data["rows"]) == len(q.errors) * len(q.readings) * len(q.norms) * q.seeds
    assert {r["relative_gram_error"] for r in data["rows"]} == set(q.errors)
    assert all(isinstance(r["fig5_escape_step"], float) for r in data["rows"])  # "nan" strings read back
