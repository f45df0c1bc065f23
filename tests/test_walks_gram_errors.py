"""The stored sweep of Figures 4 and 5 against the seeded Gram error (onelayer.studies.walks.gram_errors)."""

from __future__ import annotations

import pytest

from onelayer import sweeps
from onelayer.studies.walks import gram_errors


def test_the_sweep_is_registered_with_its_file():
    assert sweeps.get("walks-figure45-gram-errors").stored == gram_errors.STORED
    assert sweeps.get("walks-figure45-gram-errors").entry == "onelayer.studies.walks.gram_errors:main"


def test_the_stored_sweep_covers_its_settings():
    data = gram_errors.load()
    c = data["meta"]["settings"]
    assert data["meta"]["quick"] is False and c["seeds"] >= 20 and 0.0 not in c["errors"]
    cells = {(r["relative_gram_error"], r["positions"], str(r["norm"])) for r in data["rows"]}
    assert len(cells) == len(c["errors"]) * len(c["readings"]) * len(c["norms"])
    assert len(data["rows"]) == len(cells) * c["seeds"]


def test_quick_run_round_trips(tmp_path):
    out = tmp_path / "g.json"
    assert gram_errors.main(["--out", str(out), "--quick"]) == 0
    data = gram_errors.load(out)
    q = gram_errors.QUICK
    assert len(data["rows"]) == len(q["errors"]) * len(q["readings"]) * len(q["norms"]) * q["seeds"]
    assert {r["relative_gram_error"] for r in data["rows"]} == set(q["errors"])
    assert all(isinstance(r["fig5_escape_step"], float) for r in data["rows"])  # "nan" strings read back
    with pytest.raises(FileNotFoundError, match="walks-figure45-gram-errors"):
        gram_errors.load(tmp_path / "missing.json")
