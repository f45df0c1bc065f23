"""The registry of reproducible figures (onelayer.registry): registration, discovery, output files."""

from __future__ import annotations

import json
import sys
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pytest

from onelayer import attention, registry, store
from onelayer.chapters import selector
from tools import figure_numbers

FOUNDATION = ["selector-default-state", "selector-error-vs-lambda", "selector-scale-for-accuracy"]


@pytest.fixture
def scratch_registry(monkeypatch):
    """A scratch copy of the registry, so test figures never leak into other tests."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    return registry._REGISTRY


def test_foundation_figures_are_registered_with_one_line_descriptions():
    specs = registry.available()
    assert set(FOUNDATION) <= set(specs)
    assert list(specs) == sorted(specs)
    for spec in specs.values():
        assert spec.description and "\n" not in spec.description


@pytest.mark.parametrize("name", list(registry.available()))
def test_every_registered_figure_makes_in_quick_mode(name, tmp_path):
    plt.close("all")  # figures an earlier test left open are not this make()'s to close
    made = registry.make(name, tmp_path, quick=True)
    record = json.loads((tmp_path / f"{name}.json").read_text())
    assert record["name"] == name and record["quick"] is True and isinstance(record["numbers"], dict)
    assert (tmp_path / f"{name}.json") in made.paths
    for path in made.paths:
        assert path.exists() and path.stat().st_size > 0
    png = tmp_path / f"{name}.png"
    if png in made.paths:
        image = plt.imread(png)
        assert image.shape[0] > 50 and image.shape[1] > 50
    assert ((tmp_path / f"{name}.csv") in made.paths) == ("table" in record["numbers"])
    assert not plt.get_fignums(), "make() must close the figure it saved"
    # The numbers against the stored ones (tests/data/figure_numbers, tolerance in tools/figure_numbers.py).
    diffs = figure_numbers.check(name, record["numbers"])
    if not figure_numbers.reference_path(name).exists():
        pytest.fail(diffs[0])
    assert not diffs, (f"{len(diffs)} number(s) of {name} differ from the stored ones; first: {diffs[0]}\n"
                       f"if the change is intended: {figure_numbers.UPDATE_COMMAND} {name}")


def test_stored_numbers_are_those_of_the_registered_figures():
    stored = {p.stem: json.loads(p.read_text()) for p in figure_numbers.REFERENCE_DIR.glob("*.json")}
    assert set(stored) == set(registry.available()), (
        f"stale: {sorted(set(stored) - set(registry.available()))}, "
        f"missing: {sorted(set(registry.available()) - set(stored))}; run {figure_numbers.UPDATE_COMMAND}")
    for name, record in stored.items():
        assert record["name"] == name and record["quick"] is True
        assert record["tolerance"] == figure_numbers.tolerances(name), f"stale tolerance in {name}.json: {figure_numbers.UPDATE_COMMAND} {name}"


def test_number_comparison_names_the_first_difference():
    stored = {"steps": 3, "ok": True, "label": "a", "bad": "nan", "table": [{"acc": 0.52, "loss": 1e-14}, {"acc": 1.0, "loss": 0.0}]}
    same = {"steps": 3, "ok": True, "label": "a", "bad": "nan", "table": [{"acc": 0.52 * (1 + 5e-7), "loss": 5e-13}, {"acc": 1.0, "loss": 0.0}]}
    assert list(figure_numbers.mismatches(stored, same)) == []  # within rel 1e-6 / abs 1e-12
    changed = json.loads(json.dumps(same))
    changed["table"][0]["acc"] = 0.55
    diffs = list(figure_numbers.mismatches(stored, changed))
    assert len(diffs) == 1 and diffs[0].startswith("numbers.table[0].acc: 0.52 (stored) vs 0.55 (now)")
    for key, value, expected in [("steps", 3.0, "numbers.steps: 3 (int, stored) vs 3.0 (float, now)"),
                                 ("ok", False, "numbers.ok: True (stored) vs False (now)"),
                                 ("bad", "inf", "numbers.bad: 'nan' (stored) vs 'inf' (now)"),
                                 ("table", same["table"][:1], "numbers.table: length 2 (stored) vs 1 (now)")]:
        assert list(figure_numbers.mismatches(stored, {**same, key: value}))[0] == expected
    assert list(figure_numbers.mismatches(stored, {k: v for k, v in same.items() if k != "label"})) == ["numbers.label: stored but missing now"]
    assert list(figure_numbers.mismatches(stored, {**same, "extra": 1})) == ["numbers.extra: new, not in the stored numbers"]
    looser = {"numbers.table[*].acc": {"rel": 0.1, "abs": 0.0, "why": "test"}, "numbers.label": {"rel": None, "abs": None, "why": "test"}}
    assert list(figure_numbers.mismatches(stored, {**changed, "label": "b"}, looser=looser)) == []


def test_a_figure_without_stored_numbers_fails_naming_the_update_command():
    (message,) = figure_numbers.check("no-such-figure", {"x": 1.0})
    assert "no stored numbers" in message and "python -m tools.figure_numbers --update no-such-figure" in message


def test_figure_numbers_command_reports_agreement(capsys):
    assert figure_numbers.main(["selector-default-state"]) == 0
    assert "ok   selector-default-state" in capsys.readouterr().out


def test_selector_error_vs_lambda_numbers_match_the_attention_module(tmp_path):
    registry.make("selector-error-vs-lambda", tmp_path)
    numbers = json.loads((tmp_path / "selector-error-vs-lambda.json").read_text())["numbers"]
    z = np.array(selector.SETTINGS.z)
    assert numbers["gap"] == pytest.approx(0.6)
    assert numbers["maximal_set"] == [0]
    assert numbers["bound_holds"] is True
    rows = store.read_csv(tmp_path / "selector-error-vs-lambda.csv", kind="figure-table selector-error-vs-lambda")
    assert [r["lambda"] for r in rows] == ["0.0", "1.0", "2.0", "5.0", "10.0", "20.0", "40.0"]
    for row in rows:
        lam = float(row["lambda"])
        assert float(row["l1_error"]) == pytest.approx(attention.selection_error(z, lam), rel=1e-12)
        assert float(row["l1_error"]) <= float(row["bound"])


def test_default_state_weights_are_a_distribution(tmp_path):
    registry.make("selector-default-state", tmp_path)
    numbers = json.loads((tmp_path / "selector-default-state.json").read_text())["numbers"]
    assert sum(numbers["weights"]) == pytest.approx(1.0)
    assert numbers["limit"] == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert numbers["l1_error"] <= numbers["bound"]


def test_table_only_figure_writes_no_png_and_the_bound_is_attained(tmp_path):
    made = registry.make("selector-scale-for-accuracy", tmp_path)
    assert {p.suffix for p in made.paths} == {".json", ".csv"}
    rows = json.loads((tmp_path / "selector-scale-for-accuracy.json").read_text())["numbers"]["table"]
    assert [r["l1_error"] for r in rows] == pytest.approx([1e-6] * 3, rel=1e-5)


def test_make_is_deterministic(tmp_path):
    registry.make("selector-error-vs-lambda", tmp_path / "a")
    registry.make("selector-error-vs-lambda", tmp_path / "b")
    assert (tmp_path / "a/selector-error-vs-lambda.json").read_text() == (tmp_path / "b/selector-error-vs-lambda.json").read_text()


def test_register_validates(scratch_registry):
    with pytest.raises(ValueError, match="lower-case words"):
        registry.register("Bad Name", "x")
    with pytest.raises(ValueError, match="one non-empty line"):
        registry.register("ok-name", "two\nlines")
    with pytest.raises(TypeError, match="must decorate a function"):
        registry.register("ok-name", "x")(3)

    @registry.register("test-dup", "first")
    def first(quick):
        return None, {}

    registry.register("test-dup", "same function again")(first)  # a re-import is fine
    with pytest.raises(ValueError, match="already registered"):

        @registry.register("test-dup", "second")
        def second(quick):
            return None, {}


def test_quick_flag_reaches_the_function(scratch_registry, tmp_path):
    seen = []

    @registry.register("test-quick", "records its argument")
    def fn(quick):
        seen.append(quick)
        return None, {"quick_seen": quick, "values": np.arange(3), "bad": np.nan, "big": -np.inf}

    registry.make("test-quick", tmp_path, quick=True)
    registry.make("test-quick", tmp_path)
    assert seen == [True, False]
    numbers = json.loads((tmp_path / "test-quick.json").read_text())["numbers"]
    assert numbers == {"quick_seen": False, "values": [0, 1, 2], "bad": "nan", "big": "-inf"}
    with pytest.raises(TypeError, match="quick must be"):
        registry.make("test-quick", tmp_path, quick="yes")


def test_bad_results_are_reported_by_name(scratch_registry, tmp_path):
    registry.register("test-not-a-tuple", "x")(lambda quick: {"a": 1})
    registry.register("test-not-a-figure", "x")(lambda quick: ("figure", {}))
    registry.register("test-ragged-table", "x")(lambda quick: (None, {"table": [{"a": 1}, {"b": 2}]}))
    registry.register("test-object", "x")(lambda quick: (None, {"obj": object()}))
    with pytest.raises(TypeError, match="test-not-a-tuple.*must return"):
        registry.make("test-not-a-tuple", tmp_path)
    with pytest.raises(TypeError, match="test-not-a-figure.*not a matplotlib Figure"):
        registry.make("test-not-a-figure", tmp_path)
    with pytest.raises(ValueError, match="test-ragged-table.*columns"):
        registry.make("test-ragged-table", tmp_path)
    with pytest.raises(TypeError, match="cannot store a object"):
        registry.make("test-object", tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="out_dir must be a directory"):
        registry.make("selector-default-state", tmp_path / "file")


def test_unknown_name_suggests_close_matches():
    with pytest.raises(registry.UnknownFigureError, match="did you mean selector-default-state") as info:
        registry.get("selector-default-stat")
    assert info.value.matches[0] == "selector-default-state"
    assert isinstance(info.value, ValueError)
    found = registry.close_matches("selector")
    assert 1 <= len(found) <= 3 and all("selector" in name for name in found)
    assert registry.close_matches("zzzz") == []


def test_a_broken_chapter_module_is_never_silently_skipped(scratch_registry, monkeypatch, tmp_path):
    pkg = tmp_path / "brokenchapters"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "broken.py").write_text("raise RuntimeError('broken figure module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "CHAPTERS_PACKAGE", "brokenchapters")
    with pytest.raises(RuntimeError, match="broken figure module"):
        registry.discover()
    for name in [m for m in sys.modules if m.startswith("brokenchapters")]:
        monkeypatch.delitem(sys.modules, name)


def test_discover_walks_the_chapters_package(scratch_registry, monkeypatch, tmp_path):
    """Every module of the chapters package (sub-packages included) is imported: a figure there needs no other line."""
    part = tmp_path / "fakechapters" / "walks"
    part.mkdir(parents=True)
    (tmp_path / "fakechapters" / "__init__.py").write_text("")
    (part / "__init__.py").write_text("")
    (part / "ring.py").write_text(textwrap.dedent('''
        from onelayer.registry import register

        @register("fake-chapter-figure", "registered by a chapter module")
        def figure(quick=False):
            return None, {"ok": True}
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "CHAPTERS_PACKAGE", "fakechapters")
    assert registry.chapter_modules() == ["fakechapters.walks.ring"]
    assert registry.discover() == ["fakechapters.walks.ring"]
    assert registry.available()["fake-chapter-figure"].module == "fakechapters.walks.ring"
    for name in [m for m in sys.modules if m.startswith("fakechapters")]:
        monkeypatch.delitem(sys.modules, name)
