"""Stored player frames (tools/player_frames.py): each file carries the digest of the committed numbers its frames
plot, and its knobs are those numbers' knobs; a change of what a frame plots fails here until the frames are rendered
again (``python -m tools.player_frames NAME``)."""

from __future__ import annotations

import importlib
import json

import pytest

from onelayer import registry
from onelayer.scrubber import Knob, Scrubber, load_frames, numbers_digest, save_frames
from tools import player_frames
from tools.book_numbers import numbers_path


@pytest.mark.parametrize("name", sorted(player_frames.PLAYERS))
def test_stored_frames_plot_the_committed_numbers(name):
    assert name in registry.available()
    player = load_frames(player_frames.frames_file(name))
    assert player.digest == player_frames.committed_digest(name), (
        f"the stored frames of {name} plot other numbers than book/numbers/{name}.json: "
        f"python -m tools.player_frames {name}")
    knobs = json.loads(numbers_path(name).read_text())["numbers"]["knobs"]
    assert [(k.label, list(k.texts)) for k in player.knobs] == [(k["label"], k["texts"]) for k in knobs]
    assert len(player) == len(json.loads(numbers_path(name).read_text())["numbers"]["frames"])


@pytest.mark.parametrize("name", sorted(player_frames.PLAYERS))
def test_the_chapter_shows_the_stored_frames_without_drawing(name, monkeypatch):
    from matplotlib.figure import Figure

    def no_drawing(*args, **kwargs):
        raise AssertionError("the chapter's player must not draw")

    module, function, _ = player_frames.PLAYERS[name]
    player = getattr(importlib.import_module(module), function)
    monkeypatch.setattr(Figure, "__init__", no_drawing)
    assert player()._repr_html_() == load_frames(player_frames.frames_file(name))._repr_html_()
    with pytest.raises(TypeError, match="live"):
        player(live="yes")


def test_save_and_load_frames_round_trip(tmp_path):
    import matplotlib.pyplot as plt

    from onelayer.scrubber import png_bytes

    frames = []
    for slope in (0, 1):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, slope])
        frames.append(png_bytes(fig, dpi=100))
    s = Scrubber(frames, [Knob("slope", (0, 1), ("0", "1"))], name="lines", alt="slope {value}")
    numbers = {"knobs": [{"label": "slope", "values": [0, 1], "texts": ["0", "1"]}], "frames": [1.5, float("nan")]}
    back = load_frames(save_frames(s, tmp_path / "lines.json", digest=numbers_digest(numbers)))
    assert back._repr_html_() == s._repr_html_() and back.digest == numbers_digest(json.loads(json.dumps(numbers)))
    with pytest.raises(ValueError, match="holds no stored frames"):
        load_frames(tmp_path / "missing.json")
    with pytest.raises(TypeError, match="scrubber must be a Scrubber"):
        save_frames("lines", tmp_path / "x.json", digest="d")


def _recording_player(live=False):
    """A one-frame player that records the drawing state it is called in (for the test below)."""
    import matplotlib
    import matplotlib.pyplot as plt
    import numpy as np
    import torch

    from onelayer.scrubber import png_bytes

    _recording_player.state = {"live": live, "dtype": torch.get_default_dtype(), "draw": float(np.random.rand()),
                               **{k: matplotlib.rcParams[k] for k in ("axes.grid", "font.size", "axes.spines.top")}}
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    return Scrubber([png_bytes(fig, dpi=100)], [Knob("slope", (1,), ("1",))], name="lines", alt="slope {value}")


RECORDING_FRAMES = "frames/recording.json"


def test_render_draws_in_the_chapters_state(tmp_path, monkeypatch):
    """Stored frames must look like the live player in the notebook, which runs after onelayer.chapter.start():
    the book's plot style, every generator seeded with 0, float64 (not whatever the tool's process has)."""
    import matplotlib
    import numpy as np
    import torch

    from onelayer.plots import BOOK_STYLE

    monkeypatch.setenv("ONELAYER_DATA", str(tmp_path))
    monkeypatch.setattr(player_frames, "PLAYERS", {"recording": (__name__, "_recording_player", "RECORDING_FRAMES")})
    monkeypatch.setattr(player_frames, "committed_digest", lambda name: "d")
    torch.set_default_dtype(torch.float32)
    np.random.seed(5)
    with matplotlib.rc_context({"axes.grid": False, "font.size": 10.0, "axes.spines.top": True}):
        path = player_frames.render("recording")
        assert matplotlib.rcParams["font.size"] == 10.0  # the style is the tool's only while it draws
    np.random.seed(0)
    assert _recording_player.state == {"live": True, "dtype": torch.float64, "draw": float(np.random.rand()),
                                       **{k: BOOK_STYLE[k] for k in ("axes.grid", "font.size", "axes.spines.top")}}
    assert path == tmp_path / RECORDING_FRAMES and load_frames(path).digest == "d"
