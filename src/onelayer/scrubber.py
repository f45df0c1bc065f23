"""Precomputed-frames players: exploration in the static HTML book, without a kernel.

The live apps of :mod:`onelayer.widgets` need a running kernel; in the HTML
book they show their saved state and moving a slider changes nothing. A
*scrubber* instead draws one figure per setting ahead of time (with the same
package functions the chapter calls), stores the frames as PNG images inside
one self-contained ``<div>``, and lets the reader move a native range slider
(mouse or keyboard) or press *Play*; a few lines of inline JavaScript swap the
picture. No kernel, no network, no JavaScript library.

* :func:`scrub` — one knob: ``draw(value) -> Figure`` over ``values``.
* :func:`scrub_grid` — two knobs: ``draw(a, b) -> Figure`` over a (coarse) grid.
* :func:`frame_numbers` — the numbers behind a scrubber's frames (each setting and what its figure plots),
  for the scrubber's registered figure (``python -m onelayer make NAME``).
* :class:`Scrubber` — the object both return; a notebook shows it through
  ``_repr_mimebundle_`` (``text/html`` plus a short ``text/plain``), and
  :meth:`Scrubber.save` writes a standalone page.
* :func:`save_frames` / :func:`load_frames` — a scrubber's rendered frames stored in a file with the digest of
  their numbers (:func:`numbers_digest` of :func:`frame_numbers`), so that a chapter shows its player without
  drawing it on every execution (``python -m tools.player_frames`` renders them again).

Where it works. The book's HTML (myst-nb writes ``text/html`` outputs raw, so
the inline script runs) and any trusted notebook output. JupyterLab sanitises
untrusted outputs (scripts, ``on*`` and ``data-*`` attributes are removed): there
the player degrades to its first frame with a note pointing to the live widget,
which stays the explorable cell in JupyterLab (the script creates the controls,
so no dead slider is shown). Once the cell is run, the output is trusted and the
player works there too, keyboard included. All of this is checked in a browser by
``tests/e2e/test_scrubbers.py``.

Stability under nbval. Element ids are derived from ``name`` (no random ids),
value labels and alt texts are formatted by the caller's ``fmt`` and ``alt``,
the PNG metadata carries no version, and figures keep their own size (no
``bbox_inches="tight"``, whose result depends on font metrics). The PNG bytes
themselves may differ between machines (font rendering); ``tests/nbval_sanitize.cfg``
replaces every ``data:image/png;base64,...`` run by a placeholder.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import re
import struct
from base64 import b64decode, b64encode
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import product

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from .validation import check_int

__all__ = ["Scrubber", "Knob", "scrub", "scrub_grid", "frame_numbers", "png_bytes", "numbers_digest", "save_frames",
           "load_frames", "MAX_BYTES", "MAX_FRAMES"]

#: Default limit on the size of one scrubber's HTML (the frames are most of it).
#: The resolution of a scrubber frame, dots per inch, and the lowest allowed: frames are shown at their own
#: size like the book's other figures, and below 100 dpi their text falls under 9 px on screen.
FRAME_DPI = 100

MAX_BYTES = 2_000_000
#: Most frames one scrubber may hold (a coarse grid, not a movie).
MAX_FRAMES = 400
#: Allowed names: they become element ids, so letters, digits, ``-`` and ``_``.
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Knob:
    """One slider: its ``label``, the ``values`` it runs over and their display ``texts``."""

    label: str
    values: tuple
    texts: tuple[str, ...]


def _check_name(name) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__} {name!r}")
    if not NAME_PATTERN.match(name):
        raise ValueError(f"name must start with a letter and contain only letters, digits, '-' and '_' "
                         f"(at most 64 characters; it becomes an element id), got {name!r}")
    return name


def _check_text(param: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{param} must be a string, got {type(value).__name__} {value!r}")
    if not value.strip():
        raise ValueError(f"{param} must not be empty")
    return value


def _knob(param: str, label_param: str, label, values, fmt) -> Knob:
    label = _check_text(label_param, label)
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        try:
            values = tuple(values)
        except TypeError:
            raise TypeError(f"{param} must be a sequence of settings, got {type(values).__name__}") from None
    values = tuple(values)
    if not values:
        raise ValueError(f"{param} must contain at least one setting")
    if callable(fmt):
        texts = tuple(fmt(v) for v in values)
    elif isinstance(fmt, str):
        try:
            texts = tuple(fmt.format(v) for v in values)
        except (ValueError, TypeError, IndexError, KeyError) as exc:
            raise ValueError(f"fmt {fmt!r} cannot format the entries of {param}: {exc}") from None
    else:
        raise TypeError(f"fmt must be a format string such as '{{:g}}' or a callable, got {type(fmt).__name__}")
    if not all(isinstance(t, str) for t in texts):
        raise TypeError("fmt must return strings")
    return Knob(label, values, texts)


def _alt_texts(alt, knobs: Sequence[Knob]) -> list[str]:
    """``alt`` formatted for every setting, row-major."""
    alt = _check_text("alt", alt)
    out = []
    for texts in product(*(k.texts for k in knobs)):
        try:
            out.append(alt.format(*texts, value=texts[0]))
        except (IndexError, KeyError, ValueError) as exc:
            raise ValueError(f"alt {alt!r} must use only {{value}}, {{0}}"
                             f"{', {1}' if len(knobs) == 2 else ''}: {exc!r}") from None
    return out


def png_bytes(fig, *, dpi: int = 80) -> bytes:
    """Render ``fig`` to PNG bytes (white background, no version metadata) and close it."""
    if not isinstance(fig, Figure):
        raise TypeError(f"expected a matplotlib Figure, got {type(fig).__name__}")
    dpi = check_int("dpi", dpi, low=20, high=300)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, facecolor="white", metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()


def _png_size(data: bytes) -> tuple[int, int]:
    if data[:8] != _PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError("frames must be PNG images")
    return struct.unpack(">II", data[16:24])


def _data_uri(data: bytes) -> str:
    return "data:image/png;base64," + b64encode(data).decode("ascii")


class Scrubber:
    """A player over precomputed PNG frames, shown as self-contained HTML.

    Parameters
    ----------
    frames:
        PNG bytes, one per setting; with two knobs in row-major order
        (``frames[i * len(knobs[1].values) + j]`` is setting ``(i, j)``).
    knobs:
        One or two :class:`Knob` (first slider first). *Play* runs the first knob.
    name:
        Element ids are ``onelayer-scrub-<name>...``; unique on a page.
    alt:
        Alt text template, formatted per frame with the knobs' texts:
        ``alt.format(*texts, value=texts[0])``, e.g. ``"Attention at step {value}"``.
    interval_ms:
        Time between frames while playing.
    max_bytes:
        A :class:`ValueError` is raised when the HTML would exceed this size.
    """

    def __init__(self, frames: Sequence[bytes], knobs: Sequence[Knob], *, name: str, alt: str,
                 interval_ms: int = 400, max_bytes: int = MAX_BYTES):
        self.name = _check_name(name)
        knobs = tuple(knobs)
        if not 1 <= len(knobs) <= 2 or not all(isinstance(k, Knob) for k in knobs):
            raise TypeError("knobs must be one or two Knob objects")
        self.knobs = knobs
        self.shape = tuple(len(k.values) for k in knobs)
        count = 1
        for n in self.shape:
            count *= n
        if count > MAX_FRAMES:
            raise ValueError(f"a scrubber holds at most {MAX_FRAMES} frames; the settings give {count} "
                             f"({' x '.join(map(str, self.shape))}): use a coarser grid")
        frames = [bytes(f) for f in frames]
        if len(frames) != count:
            raise ValueError(f"frames has {len(frames)} images but the settings give {count} "
                             f"({' x '.join(map(str, self.shape))})")
        self.size = _png_size(frames[0]) if frames else (0, 0)
        for f in frames:
            _png_size(f)
        self.frames = frames
        self.alt = alt
        self.alt_texts = _alt_texts(alt, knobs)
        self.interval_ms = check_int("interval_ms", interval_ms, low=20, high=10_000)
        self.max_bytes = check_int("max_bytes", max_bytes, low=1)
        self._html = self._build_html()
        if len(self._html) > self.max_bytes:
            raise ValueError(f"scrubber {name!r} is {len(self._html):,} bytes, over max_bytes={self.max_bytes:,}: "
                             "use fewer settings, a smaller figure or a lower dpi")

    # ----------------------------------------------------------------- display
    @property
    def nbytes(self) -> int:
        """Size of the HTML in bytes."""
        return len(self._html)

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        ranges = ", ".join(f"{k.label} {k.texts[0]} .. {k.texts[-1]}" for k in self.knobs)
        return f"Scrubber({self.name!r}: {' x '.join(map(str, self.shape))} frames, {ranges})"

    def _repr_html_(self) -> str:
        return self._html

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self._html, "text/plain": repr(self)}

    def save(self, path, *, title: str | None = None):
        """Write a standalone HTML page holding only this scrubber; returns the path."""
        from pathlib import Path

        title = html.escape(title or self.name)
        page = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n'
                f'</head>\n<body>\n{self._html}\n</body>\n</html>\n')
        path = Path(path)
        path.write_text(page, encoding="utf-8")
        return path

    def _build_html(self) -> str:
        root = f"onelayer-scrub-{self.name}"
        esc = html.escape
        width, height = self.size
        rows = []
        for i, knob in enumerate(self.knobs):
            button = (f'<button type="button" id="{root}-play" data-play style="min-width:4.5em">Play</button> '
                      if i == 0 else "")
            rows.append(
                f'<div style="margin:.2em 0">{button}'
                f'<label for="{root}-knob{i}">{esc(knob.label)}</label> '
                f'<input type="range" id="{root}-knob{i}" min="0" max="{len(knob.values) - 1}" step="1" value="0" '
                f'aria-valuetext="{esc(knob.texts[0])}" style="vertical-align:middle;width:18em;max-width:50%"> '
                f'<span id="{root}-value{i}" data-value aria-live="polite">{esc(knob.texts[0])}</span></div>')
        # The controls are created by the script (from "controls"), so that where scripts are stripped
        # (JupyterLab's sanitizer on untrusted output) no dead slider is shown, only the first frame and the note.
        # frames[0] is the <img>'s own src: the script reads it from there rather than storing it twice.
        data = {
            "controls": "\n".join(rows),
            "shape": list(self.shape),
            "texts": [list(k.texts) for k in self.knobs],
            "alt": self.alt_texts,
            "interval": self.interval_ms,
            "frames": [""] + [_data_uri(f) for f in self.frames[1:]],
        }
        payload = json.dumps(data, separators=(",", ":"), ensure_ascii=True).replace("</", "<\\/")
        note = ("Static picture (first frame). In the HTML book the controls here replay precomputed frames; "
                "in JupyterLab use the live widget, or trust the notebook.")
        return (
            f'<div class="onelayer-scrubber" id="{root}" data-scrubber="{self.name}" style="margin:.5em 0">\n'
            f'<img id="{root}-img" src="{_data_uri(self.frames[0])}" alt="{esc(self.alt_texts[0])}" '
            f'width="{width}" height="{height}" '
            f'style="display:block;max-width:100%;height:auto;background:#fff;padding:2px;border-radius:2px">\n'
            f'<div id="{root}-controls" data-controls></div>\n'
            f'<p id="{root}-note" data-note style="font-size:.85em;margin:.2em 0">{note}</p>\n'
            f'<script type="application/json" id="{root}-data">{payload}</script>\n'
            f"<script>{_PLAYER_JS.replace('ROOT_ID', root)}</script>\n"
            "</div>"
        )


#: The player: the root is the script's parent (robust to a page showing the same name twice),
#: the id is only a fallback. Runs once per root.
_PLAYER_JS = """(function () {
  var s = document.currentScript, root = s ? s.parentNode : document.getElementById("ROOT_ID");
  if (!root || root.getAttribute("data-ready")) return;
  root.setAttribute("data-ready", "1");
  var d = JSON.parse(root.querySelector("script[type='application/json']").textContent);
  root.querySelector("[data-controls]").innerHTML = d.controls;
  var img = root.querySelector("img"), first = img.getAttribute("src");
  var knobs = root.querySelectorAll("input[type=range]"), shown = root.querySelectorAll("[data-value]");
  var play = root.querySelector("[data-play]"), timer = null;
  function show() {
    var k = 0;
    for (var i = 0; i < knobs.length; i++) {
      var v = +knobs[i].value, t = d.texts[i][v];
      k = k * d.shape[i] + v;
      shown[i].textContent = t;
      knobs[i].setAttribute("aria-valuetext", t);
    }
    img.src = d.frames[k] || first;
    img.alt = d.alt[k];
    root.setAttribute("data-frame", k);
  }
  function stop() { clearInterval(timer); timer = null; play.textContent = "Play"; }
  function tick() {
    var k = knobs[0];
    if (+k.value >= +k.max) { stop(); return; }
    k.value = +k.value + 1;
    show();
  }
  play.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (+knobs[0].value >= +knobs[0].max) { knobs[0].value = 0; show(); }
    timer = setInterval(tick, d.interval);
    play.textContent = "Pause";
  });
  // A host page may bind keys (JupyterLab's notebook shortcuts): the slider's own keys stay with the slider.
  function own(e) { e.stopPropagation(); }
  for (var i = 0; i < knobs.length; i++) {
    knobs[i].addEventListener("input", show);
    knobs[i].addEventListener("keydown", own);
  }
  var note = root.querySelector("[data-note]");
  if (note) note.parentNode.removeChild(note);
  show();
})();"""


def _two_knobs(values, values2, labels, fmt) -> list[Knob]:
    """The two knobs of a grid: ``labels`` a pair, ``fmt`` one format or a pair."""
    if not isinstance(labels, (tuple, list)) or len(labels) != 2:
        raise TypeError("labels must be a pair of strings, one per slider")
    fmts = tuple(fmt) if isinstance(fmt, (tuple, list)) else (fmt, fmt)
    if len(fmts) != 2:
        raise TypeError("fmt must be one format or a pair of formats")
    return [_knob("values", "labels[0]", labels[0], values, fmts[0]),
            _knob("values2", "labels[1]", labels[1], values2, fmts[1])]


def _render(fig, param: str, dpi: int) -> bytes:
    if not isinstance(fig, Figure):
        if fig is not None and hasattr(fig, "figure") and isinstance(fig.figure, Figure):
            plt.close(fig.figure)
        raise TypeError(f"{param} must return (or hold) matplotlib Figures, got {type(fig).__name__}")
    return png_bytes(fig, dpi=dpi)


def scrub(draw: Callable[[object], Figure] | Sequence[Figure], values: Sequence, *, label: str, name: str, alt: str,
          fmt: str | Callable[[object], str] = "{:g}", dpi: int = FRAME_DPI, interval_ms: int = 400,
          max_bytes: int = MAX_BYTES) -> Scrubber:
    """One slider over ``values``: frame ``i`` is ``draw(values[i])`` (or ``draw[i]`` for a list of figures).

    Each figure is rendered to PNG at ``dpi`` and closed at once. ``fmt`` turns a
    value into the text beside the slider; ``alt`` is the picture's alt text,
    formatted with that text (``"Attention at step {value}"``). See :class:`Scrubber`.
    """
    dpi = check_int("dpi", dpi, low=FRAME_DPI, high=300)
    knob = _knob("values", "label", label, values, fmt)
    if len(knob.values) > MAX_FRAMES:
        raise ValueError(f"values has {len(knob.values)} settings; a scrubber holds at most {MAX_FRAMES}")
    _check_name(name)
    _alt_texts(alt, [knob])  # fail before drawing
    if callable(draw):
        frames = [_render(draw(v), "draw", dpi) for v in knob.values]
    elif isinstance(draw, Sequence) and not isinstance(draw, (str, bytes)):
        if len(draw) != len(knob.values):
            raise ValueError(f"draw holds {len(draw)} figures but values has {len(knob.values)} settings")
        frames = [_render(f, "draw", dpi) for f in draw]
    else:
        raise TypeError(f"draw must be a callable value -> Figure or a sequence of Figures, got {type(draw).__name__}")
    return Scrubber(frames, [knob], name=name, alt=alt, interval_ms=interval_ms, max_bytes=max_bytes)


def scrub_grid(draw: Callable[[object, object], Figure] | Sequence[Sequence[Figure]], values: Sequence,
               values2: Sequence, *, labels: tuple[str, str], name: str, alt: str,
               fmt: str | Callable | tuple = "{:g}", dpi: int = FRAME_DPI, interval_ms: int = 400,
               max_bytes: int = MAX_BYTES) -> Scrubber:
    """Two sliders over the grid ``values x values2``: frame ``(i, j)`` is ``draw(values[i], values2[j])``.

    ``draw`` may also be a nested sequence of figures, ``draw[i][j]``. ``labels``
    and (optionally) ``fmt`` are pairs, one per slider; ``alt`` is formatted with
    both texts (``"... p = {0}, lr = {1}"``). *Play* runs the first slider.
    """
    dpi = check_int("dpi", dpi, low=FRAME_DPI, high=300)
    knobs = _two_knobs(values, values2, labels, fmt)
    n1, n2 = len(knobs[0].values), len(knobs[1].values)
    if n1 * n2 > MAX_FRAMES:
        raise ValueError(f"values x values2 gives {n1} x {n2} = {n1 * n2} settings; "
                         f"a scrubber holds at most {MAX_FRAMES}: use a coarser grid")
    _check_name(name)
    _alt_texts(alt, knobs)  # fail before drawing
    if callable(draw):
        frames = [_render(draw(a, b), "draw", dpi) for a, b in product(knobs[0].values, knobs[1].values)]
    elif isinstance(draw, Sequence) and not isinstance(draw, (str, bytes)):
        if len(draw) != n1 or any(not isinstance(row, Sequence) or len(row) != n2 for row in draw):
            raise ValueError(f"draw must hold {n1} rows of {n2} figures (values x values2)")
        frames = [_render(f, "draw", dpi) for row in draw for f in row]
    else:
        raise TypeError(f"draw must be a callable (a, b) -> Figure or rows of Figures, got {type(draw).__name__}")
    return Scrubber(frames, knobs, name=name, alt=alt, interval_ms=interval_ms, max_bytes=max_bytes)


def frame_numbers(draw: Callable, values: Sequence, values2: Sequence | None = None, *, labels: str | tuple[str, str],
                  fmt: str | Callable | tuple = "{:g}", digits: int = 8) -> dict:
    """The numbers behind the frames of a scrubber: what :func:`scrub` (or, with ``values2``, :func:`scrub_grid`) shows.

    ``draw``, ``values`` (``values2``), ``labels`` and ``fmt`` are those of the scrubber (one label, or a pair
    with ``values2``). Each frame's figure is drawn again, read with :func:`onelayer.plotted.figure_data` and
    closed (nothing is rendered). Returns ``{"knobs": [{"label", "values", "texts"}, ...], "frames": [...]}``
    with one frame per setting in the scrubber's order (row-major for two knobs), each
    ``{"setting": [value, ...], "texts": [text, ...], "figure": figure_data}``; ``texts`` are the texts beside the
    sliders, so they can be matched with a scrubber's HTML.
    """
    from .plotted import figure_data

    if not callable(draw):
        raise TypeError(f"draw must be a callable returning a matplotlib Figure, got {type(draw).__name__}")
    digits = check_int("digits", digits, low=1, high=17)
    knobs = [_knob("values", "labels", labels, values, fmt)] if values2 is None else _two_knobs(values, values2, labels, fmt)
    count = 1
    for knob in knobs:
        count *= len(knob.values)
    if count > MAX_FRAMES:
        raise ValueError(f"the settings give {count} frames; a scrubber holds at most {MAX_FRAMES}")
    frames = []
    for setting, texts in zip(product(*(k.values for k in knobs)), product(*(k.texts for k in knobs))):
        fig = draw(*setting)
        if not isinstance(fig, Figure):
            raise TypeError(f"draw must return a matplotlib Figure, got {type(fig).__name__}")
        try:
            frames.append({"setting": list(setting), "texts": list(texts), "figure": figure_data(fig, digits=digits)})
        finally:
            plt.close(fig)
    return {"knobs": [{"label": k.label, "values": list(k.values), "texts": list(k.texts)} for k in knobs], "frames": frames}


def numbers_digest(numbers: dict) -> str:
    """SHA-256 of ``numbers`` (a :func:`frame_numbers` result, or its copy read back from JSON) in canonical JSON."""
    from .store import to_jsonable

    if not isinstance(numbers, dict):
        raise TypeError(f"numbers must be a dict (a frame_numbers result), got {type(numbers).__name__}")
    text = json.dumps(to_jsonable(numbers), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def save_frames(scrubber: Scrubber, path, *, digest: str):
    """Write ``scrubber``'s rendered frames, knobs, name, alt text and interval to the JSON file ``path`` with
    ``digest`` (:func:`numbers_digest` of the numbers its frames plot); returns the path."""
    from pathlib import Path

    if not isinstance(scrubber, Scrubber):
        raise TypeError(f"scrubber must be a Scrubber, got {type(scrubber).__name__}")
    digest = _check_text("digest", digest)
    record = {"kind": "scrubber-frames", "name": scrubber.name, "digest": digest, "alt": scrubber.alt,
              "interval_ms": scrubber.interval_ms, "max_bytes": scrubber.max_bytes,
              "knobs": [{"label": k.label, "values": list(k.values), "texts": list(k.texts)} for k in scrubber.knobs],
              "frames": [b64encode(f).decode("ascii") for f in scrubber.frames]}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=0, ensure_ascii=True) + "\n", encoding="ascii")
    return path


def load_frames(path) -> Scrubber:
    """The :class:`Scrubber` stored by :func:`save_frames` in ``path`` (nothing is drawn); its ``digest`` attribute
    is the stored digest of the numbers its frames plot."""
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path {str(path)!r} holds no stored frames; render them with python -m tools.player_frames")
    record = json.loads(path.read_text(encoding="ascii"))
    if record.get("kind") != "scrubber-frames":
        raise ValueError(f"path {str(path)!r} is not a file of stored scrubber frames")
    knobs = [Knob(k["label"], tuple(k["values"]), tuple(k["texts"])) for k in record["knobs"]]
    out = Scrubber([b64decode(f) for f in record["frames"]], knobs, name=record["name"], alt=record["alt"],
                   interval_ms=record["interval_ms"], max_bytes=record["max_bytes"])
    out.digest = record["digest"]
    return out
