"""onelayer.scrubber: precomputed frames for the static HTML book (browser behaviour: tests/e2e/test_scrubbers.py)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from onelayer import scrubber
from onelayer.plots import new_figure
from onelayer.scrubber import Knob, Scrubber, scrub, scrub_grid

SANITIZE_CFG = Path(__file__).resolve().parent / "nbval_sanitize.cfg"
DATA_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")


def line(slope, offset=0.0):
    fig, ax = new_figure(1, width=3.0, height=2.0)
    ax.plot([0, 1], [offset, offset + slope])
    ax.set_ylim(-1, 4)
    ax.set_title(f"slope {slope:g}")
    return fig


def nbval_sanitize(text: str) -> str:
    """The patterns of tests/nbval_sanitize.cfg, read and applied the way nbval does."""
    patterns = re.findall(r"^regex: (.*)$\n^replace: (.*)$", SANITIZE_CFG.read_text(), flags=re.MULTILINE)
    for regex, replace in patterns:
        text = re.sub(regex, replace, text)
    return text


def payload(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)[1])


def frames_in(html: str) -> list[bytes]:
    """The PNG frames the player shows, in order (the first is the <img>'s own src)."""
    first = re.search(r'<img [^>]*src="data:image/png;base64,([^"]+)"', html)[1]
    rest = [DATA_URI.fullmatch(uri)[1] for uri in payload(html)["frames"][1:]]
    return [base64.b64decode(b) for b in [first, *rest]]


@pytest.fixture
def no_new_figures():
    before = set(plt.get_fignums())
    yield
    assert set(plt.get_fignums()) == before, "a scrubber left matplotlib figures open"


def test_one_knob_frames_text_and_html(no_new_figures):
    s = scrub(line, [0, 1, 2, 3], label="slope", name="lines", alt="A line of slope {value}")
    assert len(s) == 4 and s.shape == (4,)
    assert repr(s) == "Scrubber('lines': 4 frames, slope 0 .. 3)"
    bundle = s._repr_mimebundle_()
    assert bundle == {"text/html": s._repr_html_(), "text/plain": repr(s)}
    html = s._repr_html_()
    assert frames_in(html) == s.frames
    assert len(set(s.frames)) == 4, "different settings must give different pictures"
    assert all(f.startswith(b"\x89PNG") for f in s.frames)
    data = payload(html)
    assert data["shape"] == [4] and data["texts"] == [["0", "1", "2", "3"]]
    assert data["alt"] == [f"A line of slope {v}" for v in range(4)]
    assert data["frames"][0] == "", "the first frame is stored once, as the <img> src"
    assert 'alt="A line of slope 0"' in html
    # accessibility: a <label> per slider, live value text, a button (created by the script)
    controls = data["controls"]
    assert '<label for="onelayer-scrub-lines-knob0">slope</label>' in controls
    assert 'aria-live="polite"' in controls and 'aria-valuetext="0"' in controls
    assert '<button type="button" id="onelayer-scrub-lines-play"' in controls
    # degrades without scripts: no control outside the scripts, a note shown; white picture background for dark themes
    outside = re.sub(r"<script\b.*?</script>", "", html, flags=re.S)
    assert "<input" not in outside and "<button" not in outside and "<label" not in outside
    assert "data-note" in outside and "background:#fff" in outside
    assert s.size == (300, 200)  # 3 x 2 inches at dpi 100, never "tight" (font dependent)
    assert f'width="{s.size[0]}" height="{s.size[1]}"' in html


def test_ids_derive_from_name_and_are_unique():
    s = scrub_grid(lambda a, b: line(a, b), [0, 1], [0, 1], labels=("slope", "offset"), name="grid_1", alt="{0} {1}")
    ids = re.findall(r'\bid="([^"]+)"', s._repr_html_() + payload(s._repr_html_())["controls"])
    assert len(ids) == len(set(ids))
    assert all(i.startswith("onelayer-scrub-grid_1") for i in ids)
    assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{4}", s._repr_html_()), "no uuid-like ids"


def test_html_is_deterministic(no_new_figures):
    make = lambda: scrub(line, [0.5, 1.5], label="slope", name="same", alt="slope {value}")  # noqa: E731
    first, second = make()._repr_html_(), make()._repr_html_()
    assert first == second


def test_nbval_sanitizer_hides_only_the_png_bytes():
    """Two machines rendering different pixels (same sizes) give the same sanitized output."""
    figs_a = [scrubber.png_bytes(line(v)) for v in (0, 1, 2)]
    figs_b = [scrubber.png_bytes(line(v, offset=0.5)) for v in (0, 1, 2)]
    assert figs_a != figs_b
    knob = Knob("slope", (0, 1, 2), ("0", "1", "2"))
    a = Scrubber(figs_a, [knob], name="s", alt="slope {value}")._repr_html_()
    b = Scrubber(figs_b, [knob], name="s", alt="slope {value}")._repr_html_()
    assert a != b
    clean = nbval_sanitize(a)
    assert clean == nbval_sanitize(b)
    assert clean.count("data:image/png;base64,PNG") == 3
    assert not re.search(r"[A-Za-z0-9+/]{200}", clean), "a base64 run survived the sanitizer"
    assert "0xADDRESS" not in clean


def test_two_knob_grid_order_and_repr(no_new_figures):
    calls = []

    def draw(a, b):
        calls.append((a, b))
        return line(a, b)

    s = scrub_grid(draw, [0, 1, 2], [0.0, 0.5], labels=("slope", "offset"), name="grid",
                   alt="slope {0}, offset {1}", fmt=("{:d}", "{:.1f}"))
    assert calls == [(a, b) for a in (0, 1, 2) for b in (0.0, 0.5)], "row-major: frame i * n2 + j"
    assert s.shape == (3, 2) and len(s) == 6
    assert repr(s) == "Scrubber('grid': 3 x 2 frames, slope 0 .. 2, offset 0.0 .. 0.5)"
    html = s._repr_html_()
    data = payload(html)
    assert data["shape"] == [3, 2] and data["texts"] == [["0", "1", "2"], ["0.0", "0.5"]]
    assert data["alt"][3] == "slope 1, offset 0.5"
    controls = data["controls"]
    assert controls.count('type="range"') == 2 and controls.count("<label") == 2 and controls.count("<button") == 1
    assert len(set(frames_in(html))) == 6


def test_sequence_of_figures_and_nested_rows(no_new_figures):
    s = scrub([line(v) for v in (0, 1)], [0, 1], label="slope", name="lst", alt="slope {value}")
    assert len(s) == 2
    g = scrub_grid([[line(a, b) for b in (0, 1)] for a in (0, 1)], [0, 1], [0, 1], labels=("a", "b"),
                   name="nested", alt="{0} {1}")
    assert len(g) == 4


def test_escaping_of_caller_text():
    s = scrub(line, [1], label="<b>x</b>", name="esc", alt='a "quote" </script>', fmt=lambda v: "</script>")
    html = s._repr_html_()
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in payload(html)["controls"]
    assert html.count("</script>") == 2, "only the two closing tags of the player's own scripts"
    assert payload(html)["alt"] == ['a "quote" </script>']


def test_save_writes_a_standalone_page(tmp_path):
    s = scrub(line, [0, 1], label="slope", name="page", alt="slope {value}")
    path = s.save(tmp_path / "p.html", title="demo")
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and s._repr_html_() in text and "<title>demo</title>" in text


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(values=[]), ValueError, "values must contain at least one"),
        (dict(values=3), TypeError, "values must be a sequence"),
        (dict(name="bad name"), ValueError, "name must start with a letter"),
        (dict(name="1abc"), ValueError, "name must start with a letter"),
        (dict(name=""), ValueError, "name must"),
        (dict(name=3), TypeError, "name must be a string"),
        (dict(label=""), ValueError, "label must not be empty"),
        (dict(alt=None), TypeError, "alt must be a string"),
        (dict(alt="step {step}"), ValueError, "alt"),
        (dict(alt="{0} and {1}"), ValueError, "alt"),
        (dict(fmt="{:d}", values=[0.5]), ValueError, "fmt"),
        (dict(fmt=3), TypeError, "fmt must be"),
        (dict(dpi=5), ValueError, "dpi must be"),
        (dict(dpi=scrubber.FRAME_DPI - 1), ValueError, "dpi must be"),
        (dict(interval_ms=0), ValueError, "interval_ms must be"),
        (dict(max_bytes=1000), ValueError, "max_bytes=1,000"),
        (dict(values=range(scrubber.MAX_FRAMES + 1)), ValueError, "at most"),
    ],
)
def test_scrub_validates(kwargs, exc, match, no_new_figures):
    args = dict(draw=line, values=[0, 1], label="slope", name="v", alt="slope {value}") | kwargs
    with pytest.raises(exc, match=match):
        scrub(args.pop("draw"), args.pop("values"), **args)


def test_draw_must_give_figures(no_new_figures):
    with pytest.raises(ValueError, match="draw holds 1 figures but values has 2"):
        figs = [line(0)]
        try:
            scrub(figs, [0, 1], label="x", name="n", alt="{value}")
        finally:
            plt.close(figs[0])
    with pytest.raises(TypeError, match="draw must return"):
        scrub(lambda v: "not a figure", [0], label="x", name="n", alt="{value}")
    with pytest.raises(TypeError, match="draw must return"):  # an Axes is refused, and its figure closed
        scrub(lambda v: line(v).axes[0], [0], label="x", name="n", alt="{value}")
    with pytest.raises(TypeError, match="draw must be"):
        scrub(42, [0], label="x", name="n", alt="{value}")


def test_scrub_grid_validates(no_new_figures):
    base = dict(name="g", alt="{0} {1}")
    with pytest.raises(TypeError, match="labels must be a pair"):
        scrub_grid(line, [0], [0], labels="ab", **base)
    with pytest.raises(ValueError, match="values2 must contain at least one"):
        scrub_grid(line, [0], [], labels=("a", "b"), **base)
    with pytest.raises(ValueError, match="labels\\[1\\] must not be empty"):
        scrub_grid(line, [0], [0], labels=("a", " "), **base)
    with pytest.raises(ValueError, match="coarser grid"):
        scrub_grid(line, range(30), range(30), labels=("a", "b"), **base)
    with pytest.raises(ValueError, match="alt"):
        scrub_grid(line, [0], [0], labels=("a", "b"), name="g", alt="{2}")
    with pytest.raises(ValueError, match="rows of 2 figures"):
        scrub_grid([[None]], [0], [0, 1], labels=("a", "b"), **base)


def test_scrubber_validates_frames():
    knob = Knob("x", (0, 1), ("0", "1"))
    png = scrubber.png_bytes(line(0))
    with pytest.raises(ValueError, match="frames has 1 images but the settings give 2"):
        Scrubber([png], [knob], name="n", alt="{value}")
    with pytest.raises(ValueError, match="frames must be PNG"):
        Scrubber([png, b"GIF89a" + bytes(40)], [knob], name="n", alt="{value}")
    with pytest.raises(TypeError, match="knobs must be one or two"):
        Scrubber([png] * 8, [knob] * 3, name="n", alt="{value}")


def test_size_limit_names_the_knobs_to_turn():
    with pytest.raises(ValueError, match="fewer settings, a smaller figure or a lower dpi"):
        scrub(line, [0, 1, 2], label="x", name="big", alt="{value}", max_bytes=20_000)
    assert scrub(line, [0, 1, 2], label="x", name="ok", alt="{value}").nbytes < scrubber.MAX_BYTES
