"""The data directory, the versioned file format and the chapter helpers."""

import json
import subprocess
import sys

import numpy as np
import pytest

from onelayer import chapter, paths, store


def test_data_dir_defaults_to_the_repository_book_folder(monkeypatch):
    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    assert paths.data_dir() == paths.REPOSITORY_DATA
    assert (paths.REPOSITORY_DATA / "walks" / "data").is_dir()


def test_data_dir_follows_the_environment_variable(monkeypatch, tmp_path):
    monkeypatch.setenv(paths.ENV_VAR, str(tmp_path))
    assert paths.data_dir() == tmp_path.resolve()
    assert paths.data_path("walks/data/x.json") == tmp_path.resolve() / "walks" / "data" / "x.json"


@pytest.mark.parametrize("bad", ["/abs/x.json", "../x.json", ""])
def test_data_path_rejects_paths_outside_the_directory(bad):
    with pytest.raises(ValueError, match="relative"):
        paths.data_path(bad)


def test_data_path_rejects_non_paths():
    with pytest.raises(TypeError, match="relative"):
        paths.data_path(3)


def test_json_round_trip_with_version_and_kind(tmp_path):
    path = store.write_json(tmp_path / "a" / "b.json", {"x": np.float64(1.5), "v": np.arange(3), "bad": float("nan")}, kind="demo")
    raw = json.loads(path.read_text())
    assert list(raw)[:2] == ["schema_version", "kind"] and raw["schema_version"] == store.SCHEMA_VERSION
    assert store.read_json(path, kind="demo") == {"x": 1.5, "v": [0, 1, 2], "bad": "nan"}
    with pytest.raises(store.SchemaError, match="expected 'other'"):
        store.read_json(path, kind="other")


def test_non_finite_floats_round_trip_through_their_strings(tmp_path):
    content = {"runs": [{"step": float("nan"), "top": float("inf")}, {"step": 3.0, "low": float("-inf")}],
               "name": "nan-free text", "note": "inf"}
    path = store.write_json(tmp_path / "x.json", content, kind="test-kind")
    back = store.from_jsonable(store.read_json(path, kind="test-kind"))
    assert np.isnan(back["runs"][0]["step"]) and back["runs"][0]["top"] == float("inf")
    assert back["runs"][1] == {"step": 3.0, "low": float("-inf")}
    # the three reserved strings come back as floats, any other string is left alone
    assert back["name"] == "nan-free text" and back["note"] == float("inf")


def test_json_without_version_is_refused(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"runs": []}))
    with pytest.raises(store.SchemaError, match="schema_version None"):
        store.read_json(path)


def test_json_rejects_reserved_keys_and_bad_kind(tmp_path):
    with pytest.raises(ValueError, match="reserved"):
        store.write_json(tmp_path / "x.json", {"kind": 1}, kind="demo")
    with pytest.raises(ValueError, match="kind"):
        store.write_json(tmp_path / "x.json", {}, kind="")
    with pytest.raises(TypeError, match="content"):
        store.write_json(tmp_path / "x.json", [1], kind="demo")


def test_csv_round_trip_and_checks(tmp_path):
    path = store.write_csv(tmp_path / "t.csv", [{"a": 1, "b": 0.5}, {"a": 2, "b": np.float64(0.25)}], kind="demo")
    assert path.read_text().splitlines()[0] == f"# schema_version: {store.SCHEMA_VERSION}, kind: demo"
    assert store.read_csv(path, kind="demo") == [{"a": "1", "b": "0.5"}, {"a": "2", "b": "0.25"}]
    with pytest.raises(ValueError, match="columns"):
        store.write_csv(tmp_path / "u.csv", [{"a": 1}, {"b": 2}], kind="demo")
    with pytest.raises(TypeError, match="rows"):
        store.write_csv(tmp_path / "u.csv", [], kind="demo")


def test_show_table_prints_the_text_table_outside_a_notebook(capsys):
    chapter.show_table([{"n": 3, "x": 0.123456}], ["n", "x"], digits=3)
    assert capsys.readouterr().out.splitlines() == ["n      x", "-  -----", "3  0.123"]


def test_table_html_is_a_real_escaped_table_with_headers():
    from onelayer.tables import Table

    t = Table([{"n": 3, "x": 0.123456, "s": "a|b<c"}], ["n", "x", "s"], digits=3, headers={"x": "error"},
              caption="one seed")
    html = t._repr_html_()
    assert html.startswith('<table class="onelayer-table"><caption>one seed</caption>')
    assert "<th>error</th>" in html and "<th>x</th>" not in html
    assert '<td class="num">0.123</td>' in html and "<td>a|b&lt;c</td>" in html
    assert repr(t).splitlines()[0] == "one seed"


def test_table_checks_its_arguments():
    from onelayer.tables import Table

    with pytest.raises(ValueError, match="columns"):
        Table([{"a": 1}], [])
    with pytest.raises(TypeError, match="headers"):
        Table([{"a": 1}], ["a"], headers=["b"])
    with pytest.raises(TypeError, match="caption"):
        Table([{"a": 1}], ["a"], caption=3)


def test_glue_numbers_displays_what_myst_nb_glue_displays(monkeypatch):
    """The glued outputs are myst_nb.glue's (display=False): the same bundle, raw flag and metadata, per value."""
    import IPython.display
    import myst_nb.ext.glue

    ours, theirs = [], []
    monkeypatch.setattr(IPython.display, "display", lambda *a, **kw: ours.append((a, kw)))
    monkeypatch.setattr(myst_nb.ext.glue, "ipy_display", lambda *a, **kw: theirs.append((a, kw)))
    values = {"count": 7, "text": "0/20 [0.00, 0.16]", "rounded": 0.1235, "flag": True}
    chapter.glue_numbers(**values)
    for name, value in values.items():
        myst_nb.ext.glue.glue(name, value, display=False)
    assert ours == theirs and len(ours) == len(values)
    assert chapter.GLUE_PREFIX == myst_nb.ext.glue.GLUE_PREFIX


def test_glue_numbers_needs_values():
    with pytest.raises(ValueError, match="name=value"):
        chapter.glue_numbers()


def test_start_seeds_torch():
    import torch

    chapter.start(3)
    a = torch.rand(2)
    chapter.start(3)
    assert torch.equal(a, torch.rand(2))  # exact: the same seeded draw twice
