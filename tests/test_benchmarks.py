"""The benchmark harness: measurement helpers, row checks, the runner and its output files (not the speed)."""

from __future__ import annotations

import json
import math
import types

import pytest
import torch

import benchmarks.__main__ as runner
from benchmarks import harness

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it


def test_runner_on_core_in_quick_mode(tmp_path, capsys):
    code = runner.main(["--quick", "--only", "core", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    data = json.loads((tmp_path / "latest.json").read_text())
    assert set(data) >= {"created", "machine", "columns", "modules"}
    assert set(data["modules"]) == {"core"}
    core = data["modules"]["core"]
    assert core["status"] == "ok" and core["quick"] is True and core["error"] == ""
    assert core["rows"], "bench_core returned no rows"
    for row in core["rows"]:
        assert set(harness.ROW_KEYS) <= set(row)
        assert row["ours_s"] > 0 and row["reference_s"] > 0
        assert math.isclose(row["ratio"], row["reference_s"] / row["ours_s"])
        assert row["ours_peak_mb"] >= 0 and row["reference_peak_mb"] >= 0
        assert row["max_abs_diff"] < 1e-10  # both sides compute the same training run
    md = (tmp_path / "latest.md").read_text()
    header = "| " + " | ".join(runner.HEADER) + " |"
    assert header in md and header in out
    assert md.count("(quick)") == len(core["rows"])
    assert "Measured with `python -m benchmarks`" in md


def test_only_merges_and_unknown_name_is_a_usage_error(tmp_path, monkeypatch, capsys):
    fake_rows = {"a": [harness.make_row("A", "tiny", ours_s=1.0, reference_s=2.0)],
                 "b": [harness.make_row("B", "tiny", ours_s=1.0, reference_s=None)]}
    monkeypatch.setattr(runner, "discover", lambda directory=None: ["a", "b"])
    monkeypatch.setattr(runner, "load", lambda name: types.SimpleNamespace(run=lambda quick: fake_rows[name]))
    assert runner.main(["--out", str(tmp_path)]) == 0
    fake_rows["b"] = [harness.make_row("B2", "tiny", ours_s=1.0, reference_s=3.0)]
    assert runner.main(["--only", "bench_b", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "latest.json").read_text())
    assert [r["name"] for r in data["modules"]["a"]["rows"]] == ["A"]  # kept from the first run
    assert [r["name"] for r in data["modules"]["b"]["rows"]] == ["B2"]  # replaced
    md = (tmp_path / "latest.md").read_text()
    assert md.index("| A |") < md.index("| B2 |") and "3×" in md
    assert runner.main(["--only", "nonexistent", "--out", str(tmp_path)]) == 2
    assert "unknown benchmark" in capsys.readouterr().err


def test_missing_and_failing_modules_are_reported_not_fatal(tmp_path, monkeypatch, capsys):
    def load(name):
        if name == "good":
            return types.SimpleNamespace(run=lambda quick: [harness.make_row("G", "c", ours_s=1.0, reference_s=1.0)])
        if name == "boom":
            return types.SimpleNamespace(run=lambda quick: 1 / 0)
        if name == "norun":
            return types.SimpleNamespace()
        if name == "badrow":
            return types.SimpleNamespace(run=lambda quick: [{"name": "x"}])
        if name == "broken":
            raise ImportError("cannot import name 'trainer' from 'onelayer.walks'")
        raise ModuleNotFoundError(f"No module named 'benchmarks.bench_{name}'", name=f"benchmarks.bench_{name}")

    names = ("good", "boom", "norun", "badrow", "broken", "absent")
    monkeypatch.setattr(runner, "discover", lambda directory=None: list(names))
    monkeypatch.setattr(runner, "load", load)
    assert runner.main(["--quick", "--out", str(tmp_path)]) == 1
    data = json.loads((tmp_path / "latest.json").read_text())["modules"]
    assert {n: data[n]["status"] for n in names} == {
        "good": "ok", "boom": "failed", "norun": "failed", "badrow": "failed", "broken": "failed", "absent": "missing"
    }
    assert "ZeroDivisionError" in data["boom"]["error"]
    assert "has no function run" in data["norun"]["error"]
    assert "lacks keys" in data["badrow"]["error"]
    md = (tmp_path / "latest.md").read_text()
    assert "| G (quick) |" in md
    for name in names[1:]:
        assert f"`bench_{name}`" in md
    assert "**missing**" in md


def test_row_checks():
    row = harness.make_row("x", "cfg", ours_s=0.5, reference_s=2.0, ours_peak_mb=1.0, reference_peak_mb=None)
    assert row["ratio"] == 4.0
    with pytest.raises(ValueError, match="ratio must be reference_s / ours_s"):
        harness.check_row({**row, "ratio": 0.25})
    with pytest.raises(ValueError, match="lacks keys"):
        harness.check_row({"name": "x"})
    with pytest.raises(ValueError, match="ours_s must be a finite number"):
        harness.check_row({**row, "ours_s": None})
    with pytest.raises(ValueError, match="reference_peak_mb must be a finite number"):
        harness.check_row({**row, "reference_peak_mb": -1.0})
    with pytest.raises(TypeError, match="must be a non-empty string or mapping"):
        harness.check_row({**row, "config": ""})
    assert harness.check_row({**row, "config": {"m": 4, "S": 31}})["config"] == {"m": 4, "S": 31}
    assert runner.config_text({"m": 4, "S": 31}) == "m=4, S=31"


def test_time_call_counts_calls_and_validates():
    calls = []
    timing = harness.time_call(lambda: calls.append(1), repeat=3, warmup=2, number=4)
    assert len(calls) == 2 + 3 * 4
    assert len(timing.repeats) == 3 and timing.best_s <= timing.median_s
    with pytest.raises(ValueError, match="repeat must be an integer >= 1"):
        harness.time_call(lambda: None, repeat=0)
    with pytest.raises(TypeError, match="fn must be callable"):
        harness.time_call(3)


def test_peak_memory_sees_torch_tensors_only_through_rss():
    size_mb = 40
    alloc = lambda: torch.ones(size_mb * 2**20 // 8, dtype=torch.float64).sum()  # noqa: E731
    rss = harness.peak_rss_mb(alloc)
    assert size_mb * 0.9 < rss < size_mb * 1.5
    assert harness.peak_rss_mb(lambda: None) < 1.0
    # tracemalloc is blind to torch's allocator but sees Python objects.
    assert harness.peak_traced_mb(alloc) < 1.0
    assert harness.peak_memory_mb(lambda: bytearray(8 * 2**20), method="tracemalloc") > 7.9
    with pytest.raises(ValueError, match="method must be"):
        harness.peak_memory_mb(alloc, method="psutil")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        harness.peak_rss_mb(lambda: 1 / 0)


def test_forward_sweep_bench_batched_members_equal_separate_runs():
    from benchmarks import bench_sweeps_forward

    rows = bench_sweeps_forward.run(quick=True)
    assert [r["name"] for r in rows] == ["trees forward sweep: 3 seeds batched vs separate, two_head"]
    # the same arithmetic per member, batched or not: round-off only
    assert rows[0]["max_abs_diff"] < 1e-10
    assert rows[0]["ours_s"] > 0 and rows[0]["reference_s"] > 0


def test_book_execution_rows_compare_each_chapter_with_its_budget(tmp_path, monkeypatch, capsys):
    record = {"notebooks": {"book/a.ipynb": 10.5, "book/b.ipynb": 95.0}, "total_s": 105.5,
              "machine": {"cpu": "Test CPU", "cpu_count": 2, "load_average": [1.5, 1.0, 1.0]}}
    path = tmp_path / "runtime.json"
    path.write_text(json.dumps(record))
    monkeypatch.setenv("ONELAYER_RUNTIME_JSON", str(path))
    assert runner.main(["--only", "book", "--out", str(tmp_path / "out")]) == 0  # over budget is reported, not failed
    out = capsys.readouterr().out
    assert "| book/a.ipynb | 10.5 | 90 | 8.57× |" in out
    assert "| book/b.ipynb | 95.0 | 90 | 0.95× (over) |" in out
    assert "| all 2 notebooks | 105.5 | 420 | 3.98× |" in out
    assert "load average 1.5" in out and "Test CPU" in out
    saved = json.loads((tmp_path / "out" / "latest.json").read_text())["modules"]["book"]["rows"]
    assert [r["within_budget"] for r in saved] == [True, False, True]
