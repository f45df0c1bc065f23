"""The command line ``python -m onelayer``: in a subprocess (as a reader runs it) and in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from onelayer import cli, registry, store
from onelayer.studies import registry as studies_registry, runner

# The command line's behaviour (exit codes, messages, files written): no floating-point result is compared here.
pytestmark = pytest.mark.structural

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}


def run(*args, cwd=None, env_extra=None):
    env = {k: v for k, v in ENV.items() if k != "ONELAYER_DATA"} | (env_extra or {})
    return subprocess.run([sys.executable, "-m", "onelayer", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_help_lists_the_subcommands(capsys):
    res = run("--help")
    assert res.returncode == 0, res.stderr
    assert "list" in res.stdout and "make" in res.stdout
    with pytest.raises(SystemExit) as info:
        cli.main(["make", "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0 and "--out" in out and "--all" in out and "--quick" in out


def test_list_in_a_subprocess_shows_every_figure_with_its_description():
    res = run("list")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    specs = registry.available()
    assert len(lines) == len(specs)
    for line, (name, spec) in zip(lines, specs.items()):
        assert line.startswith(name + " ") and line.endswith(spec.description)


def test_make_in_a_subprocess_writes_png_and_json(tmp_path):
    res = run("make", "selector-error-vs-lambda", "selector-default-state", "--out", str(tmp_path / "out"), "--quick")
    assert res.returncode == 0, res.stderr
    for name in ["selector-error-vs-lambda", "selector-default-state"]:
        assert (tmp_path / "out" / f"{name}.png").stat().st_size > 1000
        record = json.loads((tmp_path / "out" / f"{name}.json").read_text())
        assert record["name"] == name and record["quick"] is True
        assert name in res.stdout
    csv_lines = (tmp_path / "out" / "selector-error-vs-lambda.csv").read_text().splitlines()
    assert csv_lines[0] == "# schema_version: 1, kind: figure-table selector-error-vs-lambda"
    assert csv_lines[1].startswith("lambda,l1_error,bound")


def test_console_script_runs(tmp_path):
    script = Path(sys.executable).with_name("onelayer")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable} (pip install -e .)")
    res = subprocess.run([str(script), "--version"], capture_output=True, text=True, env=ENV, timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("onelayer ")


def test_unknown_name_exits_2_and_suggests(tmp_path):
    res = run("make", "selector-eror-vs-lambda", "--out", str(tmp_path))
    assert res.returncode == 2
    assert "unknown figure 'selector-eror-vs-lambda'" in res.stderr
    assert "did you mean: selector-error-vs-lambda" in res.stderr
    assert not any(tmp_path.iterdir()), "nothing is made when a name is unknown"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["make", "selector-default-state"], "required: --out"),
        (["make", "--out", "x"], "name at least one figure"),
        (["make", "selector-default-state", "--all", "--out", "x"], "not both"),
        (["make", "selector-default-state", "--out", "x", "--fast"], "unrecognized arguments: --fast"),
        (["draw"], "invalid choice: 'draw'"),
        ([], "required: COMMAND"),
    ],
)
def test_bad_options_exit_2_with_a_message(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_make_all_in_process(tmp_path, capsys, monkeypatch):
    # Only the foundation chapter's figures here (tests/test_registry.py runs every registered one).
    registry.discover()
    monkeypatch.setattr(registry, "chapter_modules", lambda: ["onelayer.chapters.selector"])
    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry._REGISTRY.items()
                                                if v.module == "onelayer.chapters.selector"})
    assert cli.main(["make", "--all", "--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert sorted(registry.available()) == ["selector-default-state", "selector-error-vs-lambda", "selector-scale-for-accuracy",
                                            "selector-scale-frames"]
    for name in registry.available():
        assert json.loads((tmp_path / f"{name}.json").read_text())["name"] == name
        assert out.count(f"{name}: ") == 1


def test_list_json(capsys):
    assert cli.main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == {name: spec.description for name, spec in registry.available().items()}


def test_a_failing_figure_exits_1_and_names_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @registry.register("test-fails", "always raises")
    def fails(quick):
        raise RuntimeError("boom")

    assert cli.main(["make", "test-fails", "selector-default-state", "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "test-fails: FAILED" in captured.err and "boom" in captured.err
    assert "1 of 2 failed: test-fails" in captured.err
    assert (tmp_path / "selector-default-state.json").exists(), "the other figures are still made"


def test_make_writes_versioned_json(tmp_path):
    assert cli.main(["make", "selector-default-state", "--out", str(tmp_path), "--quick"]) == 0
    raw = json.loads((tmp_path / "selector-default-state.json").read_text())
    assert raw["schema_version"] == 1 and raw["kind"] == "figure"
    assert store.read_json(tmp_path / "selector-default-state.json", kind="figure")["name"] == "selector-default-state"


def test_works_from_a_temporary_directory_with_another_data_dir(tmp_path):
    """Installed and run from elsewhere: no path depends on the working directory."""
    data = tmp_path / "data"
    res = run("--data-dir", str(data), "info", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert f"data directory: {data.resolve()} (from $ONELAYER_DATA)" in res.stdout
    res = run("study", "--list", cwd=tmp_path, env_extra={"ONELAYER_DATA": str(data)})
    assert res.returncode == 0, res.stderr
    known = studies_registry.studies()
    assert len(res.stdout.splitlines()) == len(known)
    for name, study in known.items():
        assert str(data.resolve() / study.stored) in res.stdout and name in res.stdout
    res = run("make", "selector-error-vs-lambda", "--out", "figs", "--quick", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "figs" / "selector-error-vs-lambda.png").exists()


def test_usage_errors(capsys):
    for argv, message in ((["--data-dir", " ", "info"], "--data-dir must not be empty"),
                          (["list", "--bogus"], "unrecognized arguments: --bogus")):
        with pytest.raises(SystemExit) as info:
            cli.main(argv)
        assert info.value.code == 2
        assert message in capsys.readouterr().err


def test_bench_subcommand_hands_options_to_the_benchmarks(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["bench", "--help"])
    assert info.value.code == 0 and "--quick" in capsys.readouterr().out


def test_quick_study_from_a_temporary_directory_writes_into_the_data_dir(tmp_path):
    """``study NAME`` without --out writes the study's file in the data directory, versioned, readable back."""
    from onelayer.studies.walks.scaling import stored as ws_stored

    data = tmp_path / "data"
    res = run("--data-dir", str(data), "study", "walks-scaling", "--quick", "--only", "p0.7-N-", "critical-attention",
              cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "still missing" in res.stdout  # only some members: the file waits for the rest
    res = run("--data-dir", str(data), "study", "walks-scaling", "--quick", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    stored = data / studies_registry.get("walks-scaling").stored.replace(".json", ".quick.json")
    content = store.read_json(stored, kind="walks-scaling")
    assert content["quick"] is True and content["provenance"]["members"]["reused"] == 12
    loaded = ws_stored.load(stored)
    assert loaded["meta"]["quick"] is True and len(loaded["critical"]) == 4
    assert all(row["seconds_per_step"] > 0 for row in loaded["studies"]["p=0.7"]["N"])  # measured, kept


def test_findings_writes_and_checks_the_stored_rows(tmp_path, monkeypatch, capsys):
    from onelayer import claims, findings
    from onelayer.paths import ENV_VAR

    monkeypatch.setenv(ENV_VAR, str(tmp_path))  # restored afterwards (--data-dir sets the variable for the process)
    rows = [{**{k: "x" for k in findings.KEYS}, "doc": "walks/ring"}]
    monkeypatch.setattr(findings, "collect", lambda part=None: [dict(r) for r in rows])
    monkeypatch.setattr(claims, "write_grids", lambda: str(tmp_path / claims.GRIDS))  # the rows here are no claims
    monkeypatch.setattr(claims, "write_sentences", lambda: str(tmp_path / claims.SENTENCES))
    assert cli.main(["--data-dir", str(tmp_path), "findings"]) == 0
    assert (tmp_path / findings.STORED).exists() and findings.load(path=tmp_path / findings.STORED) == rows
    assert cli.main(["--data-dir", str(tmp_path), "findings", "--check"]) == 0
    rows[0]["verdict"] = "fails"
    capsys.readouterr()
    assert cli.main(["--data-dir", str(tmp_path), "findings", "--check"]) == 1
    err = capsys.readouterr().err
    assert "verdict" in err and findings.COMMAND in err


def test_make_studies_runs_every_registered_study_and_no_sweep_remains():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    makefile = (root / "Makefile").read_text()
    assert "\nsweeps:" not in makefile and "onelayer sweep" not in makefile
    assert not (root / "src" / "onelayer" / "sweeps.py").exists()
    with pytest.raises(SystemExit):
        cli.main(["sweep", "--list"])


def _bad_folders(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """A folder that cannot be created (under a file) and one that exists but cannot be written (read-only mount)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return {"cannot create": (blocker / "out", "Not a directory"), "cannot write": (Path("/proc"), "")}


@pytest.mark.parametrize("kind", ["cannot create", "cannot write"])
@pytest.mark.parametrize("command", ["make", "study", "findings", "bench"])
def test_an_output_folder_that_cannot_be_written_costs_one_line(command, kind, tmp_path, capsys, monkeypatch):
    folder, reason = _bad_folders(tmp_path)[kind]
    monkeypatch.setenv("ONELAYER_DATA", str(tmp_path))  # --data-dir sets it in this process: restored afterwards
    called = []
    monkeypatch.setattr(registry, "make", lambda *a, **k: called.append(a))
    monkeypatch.setattr(runner, "run", lambda *a, **k: called.append(a))
    argv = {"make": ["make", "walks-fig4", "--out", str(folder)],
            "study": ["study", "walks-scaling", "--out", str(folder / "scaling.json")],
            "findings": ["--data-dir", str(folder), "findings"],
            "bench": ["bench", "--only", "core", "--out", str(folder)]}[command]
    if command == "findings" and kind == "cannot write":
        monkeypatch.setattr("onelayer.paths.data_path", lambda rel: folder / "findings.json")
    if command == "study" and kind == "cannot write":
        argv[-1] = str(folder / "scaling.json")
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # the benchmarks' own parser exits
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and not called
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert str(folder) in lines[0] and kind in lines[0] and reason in lines[0]
