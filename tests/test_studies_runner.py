"""The studies runner (issue 31): the same stored bytes on every engine, resumable, verified, with provenance.

The study is tests/studies_toy.py (16 members of float64 matrix products and gradient steps in torch), registered
only here (monkeypatched into the registry).
"""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

import studies_toy
from onelayer import cli, store
from onelayer.studies import registry, runner

TOY = studies_toy.STUDY


@pytest.fixture
def toy_registered(monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "MODULES", ("studies_toy",))
    monkeypatch.setenv("ONELAYER_DATA", str(tmp_path))
    return tmp_path


def stored(path) -> bytes:
    return runner.stored_without_provenance(path)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The toy study run in this process (jobs=1): the bytes every other engine and every resumed run must give."""
    path = tmp_path_factory.mktemp("reference") / "toy.json"
    report = runner.run(TOY, jobs=1, out=path)
    assert (report.computed, report.reused, report.total, report.missing) == (16, 0, 16, 0)
    return path


def test_the_stored_file_holds_every_member_sorted_with_provenance_apart(reference):
    content = store.read_json(reference, kind="toy")
    keys = [r["key"] for r in content["members"]]
    assert keys == sorted(keys) and len(set(keys)) == 16
    losses = {r["result"]["loss"] for r in content["members"]}
    assert len(losses) == 16, "every member computes its own numbers"
    assert content["summary"]["all_decreased"] is True
    prov = content["provenance"]
    assert prov["engine"] == "in-process" and prov["jobs"] == 1
    assert prov["members"] == {"total": 16, "computed": 16, "reused": 0}
    for field in ("command", "commit", "dirty", "python", "torch", "numpy", "cpu", "blas", "threads", "wall_seconds",
                  "created"):
        assert field in prov, field
    assert prov["threads"]["torch"] == 1
    assert list(content)[-1] == "provenance"


def test_stored_bytes_are_the_same_on_every_engine(reference, tmp_path):
    """jobs=1, jobs=2 (loky) and a Dask LocalCluster of two worker processes on 127.0.0.1: the same bytes. The
    LocalCluster's nannies, which run in this process, leave its environment as it was."""
    loky = runner.run(TOY, jobs=2, out=tmp_path / "loky.json")
    environ = dict(os.environ)
    dask = runner.run(TOY, jobs=2, dask="local", out=tmp_path / "dask.json")
    assert dict(os.environ) == environ
    assert stored(loky.path) == stored(reference)
    assert stored(dask.path) == stored(reference)
    assert store.read_json(loky.path)["provenance"]["engine"] == "joblib-loky"
    assert store.read_json(dask.path)["provenance"]["engine"] == "dask LocalCluster"
    assert (tmp_path / "loky.json").read_bytes() != reference.read_bytes(), "provenance differs (engine, times)"


def test_an_interrupted_run_resumes_to_the_same_bytes(reference, tmp_path):
    """A run that stops after 5 members (the 6th raises) leaves 5 member records and no stored file; the re-run
    computes only the other 11 and stores the reference bytes."""
    calls = []

    def fails_at_the_sixth(settings, member):
        if len(calls) == 5:
            raise RuntimeError("interrupted")
        calls.append(member.key)
        return studies_toy.run_member(settings, member)

    out = tmp_path / "toy.json"
    with pytest.raises(RuntimeError, match="interrupted"):
        runner.run(dataclasses.replace(TOY, run_member=fails_at_the_sixth), jobs=1, out=out)
    assert not out.exists()
    assert sorted(p.stem for p in runner.members_dir(out).glob("*.json")) == sorted(calls)

    again = []

    def counting(settings, member):
        again.append(member.key)
        return studies_toy.run_member(settings, member)

    report = runner.run(dataclasses.replace(TOY, run_member=counting), jobs=1, out=out)
    assert (report.computed, report.reused) == (11, 5)
    assert not set(again) & set(calls) and len(again) == 11
    assert stored(out) == stored(reference)
    assert store.read_json(out)["provenance"]["members"] == {"total": 16, "computed": 11, "reused": 5}


def test_a_second_run_recomputes_only_the_missing_members(reference, tmp_path):
    """Counted through the files: after 3 member records are deleted, a jobs=2 re-run writes exactly those 3 again and
    leaves the other 13 files untouched."""
    out = tmp_path / "toy.json"
    runner.run(TOY, jobs=2, out=out)
    folder = runner.members_dir(out)
    before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.json")}
    assert len(before) == 16
    gone = sorted(before)[::6]
    for name in gone:
        (folder / name).unlink()
    report = runner.run(TOY, jobs=2, out=out)
    assert (report.computed, report.reused) == (3, 13)
    after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.json")}
    assert set(after) == set(before)
    assert [n for n in sorted(after) if after[n] != before[n]] == gone
    assert stored(out) == stored(reference)
    nothing = runner.run(TOY, jobs=2, out=out)
    assert (nothing.computed, nothing.reused) == (0, 16)


def test_only_runs_a_subset_and_the_file_waits_for_the_rest(reference, tmp_path):
    out = tmp_path / "toy.json"
    report = runner.run(TOY, jobs=1, out=out, only=["n012"])
    assert report.path is None and (report.computed, report.missing) == (8, 8) and not out.exists()
    report = runner.run(TOY, jobs=1, out=out)
    assert (report.computed, report.reused) == (8, 8) and stored(out) == stored(reference)
    with pytest.raises(ValueError, match="selects none"):
        runner.run(TOY, out=out, only=["zzz"])


def test_records_made_with_other_settings_are_refused_then_recomputed_on_restart(tmp_path):
    out = tmp_path / "toy.json"
    runner.run(TOY, jobs=1, out=out, only=["n012-s00"])
    other = dataclasses.replace(TOY, settings=dataclasses.replace(TOY.settings, steps=21))
    with pytest.raises(runner.StudyError, match="other settings.*--restart"):
        runner.run(other, jobs=1, out=out, only=["n012-s00"])
    report = runner.run(other, jobs=1, out=out, only=["n012-s00"], restart=True)
    assert report.computed == 1


def test_verify_passes_on_a_correct_file_and_fails_on_a_tampered_one(reference, tmp_path, capsys):
    assert runner.verify(TOY, sample=3, path=reference)
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("ok   n012-s00"), "the cheapest member (smallest cost, then key) comes first"
    assert len([line for line in lines if line.startswith("ok ")]) == 3

    record = json.loads(reference.read_text())
    record["members"][0]["result"]["loss"] *= 1 + 1e-6  # the cheapest member, always recomputed
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(record, indent=1))
    assert not runner.verify(TOY, sample=1, path=tampered)
    out = capsys.readouterr().out
    assert "FAIL n012-s00" in out and "n012-s00.result.loss: stored" in out

    record = json.loads(reference.read_text())
    record["members"][0]["result"]["decreased"] = False
    tampered.write_text(json.dumps(record, indent=1))
    assert not runner.verify(TOY, sample=1, path=tampered)


def test_differences_uses_the_stated_tolerances():
    assert runner.differences({"x": 1.0}, {"x": 1.0 + 1e-12}, rtol=1e-9)[0] == []
    assert runner.differences({"x": 1.0}, {"x": 1.0 + 1e-8}, rtol=1e-9)[0]
    assert runner.differences({"n": 3}, {"n": 4}, rtol=1.0)[0]
    assert runner.differences({"b": True}, {"b": 1}, rtol=1.0)[0], "a boolean is not an integer"
    assert runner.differences({"s": "nan"}, {"s": float("nan")}, rtol=1e-9)[0] == [], "NaN equals NaN"
    assert runner.differences([1.0, 2.0], [1.0], rtol=1e-9)[0]


def test_members_and_studies_are_checked_where_they_are_built():
    with pytest.raises(ValueError, match="key"):
        runner.Member(key="a/b", fields={})
    with pytest.raises(ValueError, match="cost"):
        runner.Member(key="a", fields={}, cost=0)
    with pytest.raises(ValueError, match="name"):
        dataclasses.replace(TOY, name="verify")
    with pytest.raises(ValueError, match="relative"):
        dataclasses.replace(TOY, stored="../outside.json")
    with pytest.raises(TypeError, match="settings"):
        dataclasses.replace(TOY, settings={"steps": 3})
    with pytest.raises(ValueError, match="jobs"):
        runner.run(TOY, jobs=0)


def test_the_registry_lists_and_loads(toy_registered):
    assert list(registry.studies()) == ["toy"]
    with pytest.raises(ValueError, match="unknown study 'nope'; the studies are: toy"):
        registry.get("nope")
    runner.run(TOY, quick=True, out=toy_registered / TOY.stored)
    loaded = registry.load("toy")
    assert loaded["study"] == "toy" and len(loaded["members"]) == 2 and "provenance" in loaded


def test_cli_runs_lists_and_verifies_a_study(toy_registered, capsys):
    assert cli.main(["study", "--list"]) == 0
    assert capsys.readouterr().out.startswith("toy  16 members  ")
    assert cli.main(["study", "toy", "--quick"]) == 0
    out = capsys.readouterr().out
    assert "2 computed, 0 reused, 2 members" in out
    path = toy_registered / "studies" / "toy.quick.json"
    assert store.read_json(path, kind="toy")["provenance"]["command"] == "python -m onelayer study toy --quick"
    assert cli.main(["study", "verify", "toy", "--quick", "--sample", "2"]) == 0
    assert capsys.readouterr().out.count("\nok   ") == 2


@pytest.mark.parametrize("argv, message", [
    (["study", "nope"], "unknown study 'nope'; the studies are: toy"),
    (["study", "toy", "--jobs", "0"], "--jobs must be an integer >= 1, got '0'"),
    (["study", "toy", "--jobs", "two"], "--jobs must be an integer >= 1, got 'two'"),
    (["study", "verify", "toy", "--sample", "0"], "--sample must be an integer >= 1"),
    (["study"], "name one study"),
    (["study", "--list", "toy"], "either --list or NAME"),
])
def test_cli_usage_errors_are_one_line(toy_registered, capsys, argv, message):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err


def test_adopted_results_make_the_same_bytes_as_a_run_and_say_so_in_provenance(reference, tmp_path):
    """A pre-runner script's results, adopted member for member, give the file run() gives (provenance apart), and the
    provenance says where they came from; a missing or foreign member is refused by name."""
    content = store.read_json(reference, kind="toy")
    results = {r["key"]: r["result"] for r in content["members"]}
    out = tmp_path / "toy.json"
    runner.adopt(TOY, results, source="old/toy.json", command="python old_toy.py", made={"seconds": 3.5},
                 out=out)
    assert stored(out) == stored(reference)
    prov = store.read_json(out, kind="toy")["provenance"]
    assert prov["engine"] == "pre-runner script (members adopted)" and prov["commit"] == "unknown"
    assert prov["adopted"]["from"] == "old/toy.json" and prov["adopted"]["made"] == {"seconds": 3.5}
    assert runner.verify(TOY, sample=2, path=out, echo=None)
    first = sorted(results)[0]
    with pytest.raises(ValueError, match="results must hold exactly"):
        runner.adopt(TOY, {k: v for k, v in results.items() if k != first}, source="s", command="c", out=out)
    with pytest.raises(ValueError, match="source must be"):
        runner.adopt(TOY, results, source="", command="c", out=out)


def test_verify_cheapest_selects_by_recorded_seconds_skips_above_the_cap_and_fails_on_a_planted_change(
        reference, toy_registered, tmp_path, capsys):
    """``study verify --all --cheapest``: each study's cheapest member by its recorded seconds (the runner's
    ``member_seconds``), skipped (not failed) above ``--max-seconds``; a planted change in that stored member FAILS."""
    record = json.loads(reference.read_text())
    seconds = record["provenance"]["member_seconds"]
    assert set(seconds) == {r["key"] for r in record["members"]}, "the runner records each member's wall seconds"
    record["provenance"]["member_seconds"] = {k: 5.0 for k in seconds} | {"n024-s03": 1.0}  # recorded, not timed
    path = toy_registered / TOY.stored
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record, indent=1))

    assert cli.main(["study", "verify", "--all", "--cheapest"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok      toy [n024-s03, recorded 1.0 s (member seconds)]"), out
    assert out[-1].startswith("total: 1 ok, 0 skipped, 0 FAILED of 1 studies")

    assert cli.main(["study", "verify", "--all", "--cheapest", "--max-seconds", "0.5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "skipped toy: cheapest member n024-s03 recorded 1.0 s (member seconds) > 0.5 s", out
    assert out[-1].startswith("total: 0 ok, 1 skipped, 0 FAILED of 1 studies")

    planted = next(r for r in record["members"] if r["key"] == "n024-s03")
    planted["result"]["trace"] *= 1 + 1e-6
    path.write_text(json.dumps(record, indent=1))
    assert cli.main(["study", "verify", "--all", "--cheapest"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FAILED  toy [n024-s03]: 1 difference(s), largest relative difference 1.0e-06"), out
    assert "n024-s03.result.trace: stored" in out[0]
    assert out[-1].startswith("total: 0 ok, 0 skipped, 1 FAILED of 1 studies")
    assert cli.main(["study", "toy", "--cheapest"]) == 2 and "options of 'study verify'" in capsys.readouterr().err


def test_measured_fields_are_stored_apart_never_compared_and_not_part_of_the_bytes(tmp_path, capsys):
    """A study's measured fields (readings of the machine, such as wall seconds; here the worker's process id) sit
    beside the result: stored, shown by verify, never failing it, and left out of stored_without_provenance (the
    comparison across engines)."""
    study = studies_toy.TIMED
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    runner.run(study, quick=True, out=one)
    runner.run(study, quick=True, out=two, jobs=2)
    members = store.read_json(one, kind="toy")["members"]
    assert all(set(m) == {"key", "fields", "result", "measured"} and "worker" not in m["result"] for m in members)
    assert members[0]["measured"]["worker"] == os.getpid()  # jobs=1 runs here; jobs=2 in loky workers
    assert store.read_json(two, kind="toy")["members"][0]["measured"]["worker"] != os.getpid()
    assert stored(one) == stored(two)
    record = json.loads(one.read_text())
    record["members"][0]["measured"]["worker"] = -1  # a reading of another machine: shown, not compared
    one.write_text(json.dumps(record, indent=1))
    assert runner.verify(study, sample=2, path=one)
    assert "measured, not compared: worker stored -1, now" in capsys.readouterr().out
    with pytest.raises(TypeError, match="measured"):
        dataclasses.replace(TOY, measured="seconds")
