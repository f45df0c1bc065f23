"""Scrubbers (onelayer.scrubber) in a real browser: the picture follows the slider with no kernel.

* A page written here from ``Scrubber._repr_html_`` (one slider and a two-slider
  grid): keyboard and programmatic moves, *Play*, alt and value texts, and the
  degraded view when scripts are stripped (what JupyterLab does to untrusted output).
* JupyterLab: a stored (untrusted, so sanitised) scrubber output shows its first
  frame and the note and no dead controls; after running the cell the slider works,
  by mouse and keyboard.
* Every page of the built book (``_build/html``, pages from ``_toc.yml``): each
  scrubber found is moved end to end and its picture must change. The number found
  is printed (run with ``-s`` or ``-rA``); with no scrubber in the book yet the test
  passes with a count of 0.
"""

from __future__ import annotations

import re

import pytest

from e2e_support import HTML_DIR, TOC_FILE, is_local, keep_offline, serve_directory, toc_entries

STATE = r"""
root => {
  const img = root.querySelector('img');
  return {
    src: img.getAttribute('src'), alt: img.alt, loaded: img.complete && img.naturalWidth > 0,
    frame: root.getAttribute('data-frame'), ready: root.getAttribute('data-ready'),
    values: [...root.querySelectorAll('[data-value]')].map(e => e.textContent),
    valuetexts: [...root.querySelectorAll('input[type=range]')].map(e => e.getAttribute('aria-valuetext')),
    controls_visible: [...root.querySelectorAll('input[type=range]')].some(e => !!e.offsetParent),
    note: !!root.querySelector('[data-note]'),
    play: (root.querySelector('[data-play]') || {}).textContent,
  };
}
"""



def _set(root, knob: int, value: int) -> None:
    """Set slider ``knob`` of a scrubber to ``value`` and dispatch 'input', as a script or assistive tool would."""
    root.evaluate("(root, [knob, value]) => { const i = root.querySelectorAll('input[type=range]')[knob];"
                  " i.value = value; i.dispatchEvent(new Event('input', {bubbles: true})); }", [knob, value])


def _collect_errors(page) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(f"uncaught exception: {err.message}"))
    page.on("console", lambda msg: msg.type == "error" and is_local((msg.location or {}).get("url", "") or "http://127.0.0.1")
            and errors.append(f"console error: {msg.text}"))
    return errors


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory):
    """A page with a one-slider scrubber and a 3 x 2 grid, and the same page with its scripts stripped."""
    import matplotlib

    matplotlib.use("Agg")
    from onelayer.plots import new_figure
    from onelayer.scrubber import scrub, scrub_grid

    def draw(slope, offset=0.0):
        fig, ax = new_figure(1, width=3.0, height=2.0)
        ax.plot([0, 1], [offset, offset + slope])
        ax.set_ylim(-1, 5)
        ax.set_title(f"slope {slope:g}, offset {offset:g}")
        return fig

    one = scrub(draw, [0, 1, 2, 3], label="slope", name="one", alt="A line of slope {value}", interval_ms=60)
    grid = scrub_grid(draw, [0, 1, 2], [0.0, 1.0], labels=("slope", "offset"), name="grid",
                      alt="slope {0}, offset {1}", fmt=("{:d}", "{:.1f}"), interval_ms=60)
    directory = tmp_path_factory.mktemp("scrubbers")
    body = f"<h1>scrubbers</h1>\n{one._repr_html_()}\n<p>between</p>\n{grid._repr_html_()}\n"
    page = f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>s</title></head><body>{body}</body></html>'
    (directory / "index.html").write_text(page)
    stripped = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)  # as JupyterLab's sanitizer does
    (directory / "untrusted.html").write_text(stripped)
    with serve_directory(directory) as base:
        yield base, one, grid


@pytest.fixture
def demo_tab(browser_context, demo_page):
    """The demo page open offline in a fresh tab: ``(page, errors, one, grid)``; the tab is closed afterwards."""
    base, one, grid = demo_page
    page = browser_context.new_page()
    errors = _collect_errors(page)
    keep_offline(page, None)
    page.goto(f"{base}/index.html", wait_until="load")
    yield page, errors, one, grid
    page.close()


def _uri(png: bytes) -> str:
    import base64

    return "data:image/png;base64," + base64.b64encode(png).decode()


def test_slider_moves_the_picture(demo_tab):
    page, errors, one, grid = demo_tab
    root = page.locator("#onelayer-scrub-one")
    state = root.evaluate(STATE)
    assert state["ready"] == "1" and state["controls_visible"] and not state["note"]
    assert state["src"] == _uri(one.frames[0]) and state["loaded"] and state["values"] == ["0"]
    # keyboard: the native range input
    slider = page.locator("#onelayer-scrub-one-knob0")
    slider.focus()
    page.keyboard.press("ArrowRight")
    state = root.evaluate(STATE)
    assert state["src"] == _uri(one.frames[1]) and state["frame"] == "1"
    assert state["values"] == ["1"] and state["valuetexts"] == ["1"] and state["alt"] == "A line of slope 1"
    page.keyboard.press("End")
    assert root.evaluate(STATE)["src"] == _uri(one.frames[3])
    # programmatic: set the value and dispatch 'input'
    _set(root, 0, 2)
    state = root.evaluate(STATE)
    assert state["src"] == _uri(one.frames[2]) and state["values"] == ["2"] and state["loaded"]
    assert not errors, errors


def test_play_runs_to_the_end_and_stops(demo_tab):
    page, errors, one, _ = demo_tab
    root = page.locator("#onelayer-scrub-one")
    play = page.locator("#onelayer-scrub-one-play")
    play.click()
    assert play.text_content() == "Pause"
    page.wait_for_function("() => document.querySelector('#onelayer-scrub-one').getAttribute('data-frame') === '3'")
    page.wait_for_function("() => document.querySelector('#onelayer-scrub-one-play').textContent === 'Play'")
    state = root.evaluate(STATE)
    assert state["src"] == _uri(one.frames[3]) and state["values"] == ["3"]
    play.click()  # at the end, Play starts again from the first frame
    page.wait_for_function("() => +document.querySelector('#onelayer-scrub-one').getAttribute('data-frame') < 3")
    play.click()  # pause
    assert play.text_content() == "Play"
    assert not errors, errors


def test_two_slider_grid(demo_tab):
    page, errors, _, grid = demo_tab
    root = page.locator("#onelayer-scrub-grid")
    page.locator("#onelayer-scrub-grid-knob0").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.locator("#onelayer-scrub-grid-knob1").focus()
    page.keyboard.press("ArrowRight")
    state = root.evaluate(STATE)
    assert state["frame"] == str(2 * 2 + 1) and state["src"] == _uri(grid.frames[5])
    assert state["values"] == ["2", "1.0"] and state["alt"] == "slope 2, offset 1.0"
    # the other scrubber on the page did not move
    assert page.locator("#onelayer-scrub-one").evaluate(STATE)["frame"] == "0"
    assert not errors, errors


def test_without_scripts_the_first_frame_and_a_note_show(browser_context, demo_page):
    base, one, _ = demo_page
    page = browser_context.new_page()
    keep_offline(page, None)
    try:
        page.goto(f"{base}/untrusted.html", wait_until="load")
        state = page.locator("#onelayer-scrub-one").evaluate(STATE)
        assert state["loaded"] and state["src"] == _uri(one.frames[0]) and state["alt"] == "A line of slope 0"
        assert state["note"] and not state["controls_visible"] and state["ready"] is None
    finally:
        page.close()


def test_every_scrubber_in_the_built_book_moves(browser_context):
    if not (HTML_DIR / "index.html").exists():
        pytest.skip(f"no built book at {HTML_DIR}: run 'make book' first (or set ONELAYER_E2E_HTML)")
    found: dict[str, int] = {}
    failures: list[str] = []
    with serve_directory(HTML_DIR) as base:
        for entry in toc_entries(TOC_FILE):
            if not (HTML_DIR / f"{entry}.html").exists():
                failures.append(f"{entry}: in {TOC_FILE.name} but not built")
                continue
            page = browser_context.new_page()
            keep_offline(page)
            try:
                page.goto(f"{base}/{entry}.html", wait_until="load")
                roots = page.locator(".onelayer-scrubber")
                count = roots.count()
                if count:
                    found[entry] = count
                    ids = page.evaluate("() => [...document.querySelectorAll('.onelayer-scrubber')].map(e => e.id)")
                    if len(set(ids)) != len(ids):
                        failures.append(f"{entry}: two scrubbers share a name: {sorted(ids)}")
                for k in range(count):
                    root = roots.nth(k)
                    name = root.get_attribute("id")
                    before = root.evaluate(STATE)
                    if before["ready"] != "1" or not before["controls_visible"] or before["note"]:
                        failures.append(f"{entry} #{name}: the player script did not run")
                        continue
                    if not before["loaded"]:
                        failures.append(f"{entry} #{name}: the first frame did not load")
                    for knob in range(root.locator("input[type=range]").count()):
                        top = int(root.locator("input[type=range]").nth(knob).get_attribute("max"))
                        if top == 0:
                            continue
                        _set(root, knob, top)
                        after = root.evaluate(STATE)
                        if after["src"] == before["src"] or after["values"] == before["values"]:
                            failures.append(f"{entry} #{name}: slider {knob} moved to {top} but the picture "
                                            "or its value label did not change")
                        _set(root, knob, 0)
            finally:
                page.close()
    total = sum(found.values())
    print(f"\nscrubbers in the built book ({HTML_DIR}): {total} on {len(found)} pages {found}")
    assert not failures, "\n".join(failures)


LAB_CODE = '''from onelayer.scrubber import scrub
from onelayer.plots import new_figure
def draw(v):
    fig, ax = new_figure(1, width=3, height=2); ax.plot([0, 1], [0, v]); ax.set_ylim(0, 3); return fig
s = scrub(draw, [0, 1, 2, 3], label="slope", name="lab", alt="slope {value}")
s'''

LAB_STATE = """() => {
  const r = document.querySelector('.jp-OutputArea-output .onelayer-scrubber');
  const img = r && r.querySelector('img');
  return r && {loaded: !!img && img.naturalWidth > 0, ready: r.getAttribute('data-ready'), frame: r.getAttribute('data-frame'),
               note: !!r.querySelector('p') && /^Static picture/.test(r.querySelector('p').textContent),
               inputs: r.querySelectorAll('input[type=range]').length};
}"""


def test_in_jupyterlab_untrusted_output_degrades_and_a_fresh_run_plays(browser_context, tmp_path):
    """A stored (untrusted) scrubber output shows its first frame and the note, no dead controls; once the cell
    is run (trusted output) the slider works, with the keyboard too (JupyterLab's shortcuts do not eat the keys)."""
    import os
    import secrets
    import subprocess
    import sys

    import matplotlib
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook, new_output

    from e2e_support import free_port
    from test_jupyterlab import KERNEL_IDLE, _stop, _wait_for_server

    matplotlib.use("Agg")
    namespace: dict = {}
    exec(LAB_CODE.rsplit("\n", 1)[0], namespace)
    work = tmp_path / "work"
    work.mkdir()
    cell = new_code_cell(LAB_CODE, execution_count=1)
    cell.outputs = [new_output("execute_result", data=namespace["s"]._repr_mimebundle_(), execution_count=1)]
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(new_notebook(cells=[cell], metadata={"kernelspec": kernelspec}), work / "s.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces")}
    env.pop("MPLBACKEND", None)
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
           "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={work}",
           "--ServerApp.allow_root=True", "--LabApp.news_url=", "--LabApp.extension_manager=readonly",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = tmp_path / "jupyterlab.log"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    page = None
    try:
        _wait_for_server(f"{base}/api/status?token={token}", proc, log)
        page = browser_context.new_page()
        keep_offline(page, None)
        page.set_default_timeout(60_000)
        page.goto(f"{base}/lab/tree/s.ipynb?token={token}", wait_until="domcontentloaded")
        page.locator(".jp-OutputArea-output .onelayer-scrubber img").first.wait_for()
        stored = page.evaluate(LAB_STATE)
        assert stored["loaded"] and stored["note"] and stored["inputs"] == 0 and stored["ready"] is None, stored

        page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE).first.wait_for()
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).first.click()
        page.wait_for_function("() => document.querySelector('.jp-OutputArea-output .onelayer-scrubber[data-ready]')",
                               timeout=90_000)
        fresh = page.evaluate(LAB_STATE)
        assert fresh["inputs"] == 1 and fresh["frame"] == "0", fresh
        page.locator("#onelayer-scrub-lab-knob0").focus()
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert page.evaluate(LAB_STATE)["frame"] == "2"
        box = page.locator("#onelayer-scrub-lab-knob0").bounding_box()
        page.mouse.click(box["x"] + 0.95 * box["width"], box["y"] + box["height"] / 2)
        assert page.evaluate(LAB_STATE)["frame"] == "3"
    finally:
        if page is not None:
            page.close()
        _stop(proc, base, token)
    assert proc.poll() is not None, "JupyterLab is still running"
