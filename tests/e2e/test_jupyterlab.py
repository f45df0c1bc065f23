"""A chapter in JupyterLab, as a reader runs it: open book/selector.ipynb, run all cells, move the slider.

JupyterLab (from the project venv, so the ``python3`` kernel is the project's
Python) serves a scratch copy of the notebook on a free 127.0.0.1 port with a
random token and throw-away settings/workspace directories; the committed
notebook is never touched. Headless chromium (Playwright) clicks Run > Run All
Cells, waits for every cell, checks that no cell failed, drags the lambda slider
of the ``selector.explorer()`` cell and checks that the figure below it is redrawn.
The chapters' MyST (admonitions, theorem blocks, roles, labels) is rendered by
jupyterlab-myst, which the lock installs: a chapter read in Lab shows no raw ``:::{``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from e2e_support import ROOT, SCREENSHOT_DIR, free_port, keep_offline

NOTEBOOK = ROOT / "book" / "selector.ipynb"
#: A chapter read (not run) in Lab: the code its HTML hides opens collapsed (tools/lab_view.py).
READ_CHAPTER = ROOT / "book" / "walks" / "theorem31.ipynb"
#: The notebook on screen. Lab restores the workspace of an earlier test (its panels stay in the DOM, hidden), so
#: every selector is scoped to the visible panel, and every page opens with ``?reset`` (a fresh workspace).
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"
WIDGET_CALL = "selector.explorer("
KERNEL_IDLE = re.compile(r"^(?!No Kernel).+ \| Idle$")


def _code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def _wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with code {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _settled_image(page, cell_index: int, timeout: float = 60.0) -> str:
    """The ``src`` of the widget's figure once the kernel is idle and the image stopped changing."""
    probe = """i => {
        const img = document.querySelectorAll('PANEL .jp-CodeCell')[i].querySelector('.widget-output img');
        const idle = [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(e => / \\| Idle$/.test(e.textContent));
        return [idle, img && img.complete && img.naturalWidth > 0 ? img.getAttribute('src') : null];
    }"""
    probe = probe.replace("PANEL", PANEL)
    last, stable = None, 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        idle, src = page.evaluate(probe, cell_index)
        stable = stable + 1 if (idle and src and src == last) else 0
        if stable >= 4:  # unchanged and idle for 2 s
            return src
        last = src
        time.sleep(0.5)
    raise AssertionError(f"the widget's figure did not settle within {timeout:.0f} s")


def _stop(proc: subprocess.Popen, base: str, token: str) -> None:
    """Ask the server to shut down (it stops its kernels), then make sure the process group is gone."""
    try:
        request = urllib.request.Request(f"{base}/api/shutdown", method="POST", headers={"Authorization": f"token {token}"})
        urllib.request.urlopen(request, timeout=5).close()
        proc.wait(timeout=15)
    except Exception:
        pass
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a scratch directory holding a copy of the chapter; yields (base URL, token)."""
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        pytest.fail(f"jupyter-lab is not installed next to {sys.executable}")
    tmp_path = tmp_path_factory.mktemp("jupyterlab")
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(NOTEBOOK, work / NOTEBOOK.name)
    shutil.copy(READ_CHAPTER, work / READ_CHAPTER.name)
    settings = tmp_path / "lab-settings"
    # Render every cell (no virtual scrolling) so the test can see all prompts and outputs.
    tracker = settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    # No "get notified about official Jupyter news?" pop-up over the screenshots.
    notification = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text(json.dumps({"fetchNews": "false"}))
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    env.pop("MPLBACKEND", None)  # the kernel must use the inline backend, as for a reader
    log = tmp_path / "jupyterlab.log"
    cmd = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={work}",
        "--ServerApp.allow_root=True",  # CI containers run as root
        "--LabApp.news_url=",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    base = f"http://127.0.0.1:{port}"
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_server(f"{base}/api/status?token={token}", proc, log)
        yield base, token
    finally:
        _stop(proc, base, token)
    assert proc.poll() is not None, "JupyterLab is still running"


def test_selector_slider_redraws_the_figure_in_jupyterlab(browser_context, lab):
    base, token = lab
    code = _code_cells(NOTEBOOK)
    widget_cell = next(i for i, src in enumerate(code) if WIDGET_CALL in src)
    page = browser_context.new_page()
    keep_offline(page)
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(err.message))
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(f"{base}/lab/tree/{NOTEBOOK.name}?reset&token={token}", wait_until="domcontentloaded")
        cells = page.locator(f"{PANEL} .jp-Notebook .jp-CodeCell")
        # The notebook is loaded when all its code cells are there, and the kernel is connected when
        # the status bar names it and says it is idle (before that it reads "No Kernel | Initializing").
        page.wait_for_function(f"n => document.querySelectorAll('{PANEL} .jp-CodeCell').length === n", arg=len(code))
        status = page.locator(".jp-StatusBar-TextItem", has_text=KERNEL_IDLE)
        status.first.wait_for()
        # The book's hidden code opens collapsed (no input prompt to read): View > Expand All Code, as a reader may.
        assert cells.locator(".jp-InputPlaceholder").count() > 0, "no collapsed input: is tools/lab_view.py applied?"
        page.locator(".lm-MenuBar-item", has_text="View").first.click()
        page.locator(".lm-Menu-item", has_text=re.compile(r"^Expand All Code")).first.click()
        page.wait_for_function(f"() => !document.querySelector('{PANEL} .jp-CodeCell .jp-InputPlaceholder')")

        # Run > Run All Cells, through the menu as a reader would.
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text=re.compile(r"^Run All Cells")).first.click()

        # Done when every prompt shows an execution count and the kernel is idle again.
        page.wait_for_function(
            """n => {
                const prompts = [...document.querySelectorAll('PANEL .jp-CodeCell .jp-InputArea-prompt')];
                const idle = [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(e => / \\| Idle$/.test(e.textContent));
                return idle && prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
            }""".replace("PANEL", PANEL),
            arg=len(code),
            timeout=90_000,
        )
        counts = [int(re.sub(r"\D", "", t)) for t in cells.locator(".jp-InputArea-prompt").all_text_contents()]
        assert counts == list(range(1, len(code) + 1)), f"cells did not run in order: {counts}"
        failed = page.locator(".jp-OutputArea-output", has_text="Traceback (most recent call last)")
        assert failed.count() == 0, failed.first.text_content()[:2000]

        cell = cells.nth(widget_cell)
        slider = cell.locator(".widget-hslider").first
        slider.wait_for()
        image = cell.locator(".widget-output img").first
        image.wait_for()
        before_src = image.get_attribute("src")
        readout = cell.locator(".widget-readout").first
        assert float(readout.text_content()) == pytest.approx(1.0)

        # Drag the handle to three quarters of the track.
        slider.scroll_into_view_if_needed()
        handle = slider.locator(".noUi-handle").first.bounding_box()
        track = slider.locator(".noUi-base, .noUi-target").first.bounding_box()
        y = handle["y"] + handle["height"] / 2
        page.mouse.move(handle["x"] + handle["width"] / 2, y)
        page.mouse.down()
        page.mouse.move(track["x"] + 0.75 * track["width"], y, steps=8)
        page.mouse.up()

        # Every intermediate value of the drag is drawn in turn: wait until the kernel is done.
        after_src = _settled_image(page, widget_cell)
        lam = float(readout.text_content())
        assert lam > 5.0, f"the slider did not move: lambda = {lam}"
        assert after_src != before_src, "the figure did not change when lambda moved"
        page.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab_selector.png"))

        # Type the default back into the readout: the figure of lambda = 1 comes back.
        readout.click()
        page.keyboard.press("Control+A")
        page.keyboard.type("1")
        page.keyboard.press("Enter")
        assert _settled_image(page, widget_cell) == before_src, "the figure does not follow the slider back to lambda = 1"
        assert float(readout.text_content()) == pytest.approx(1.0)
        assert not errors, f"uncaught exceptions in JupyterLab: {errors}"
    except Exception:
        page.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab_failure.png"))
        raise
    finally:
        page.close()


#: What jupyterlab-myst marks as a problem in a rendered cell: an inline warning (``span.text-yellow-600``, its
#: message in the title) or a block error (``pre`` with the message in its title), e.g. a formula KaTeX cannot typeset.
MYST_WARNINGS = "span.text-yellow-600[title], pre[title]"
#: Warnings that say what jupyterlab-myst cannot do, not what a chapter gets wrong: it reads no bibliography
#: (jupyter-book/jupyterlab-myst#127) and resolves references within one notebook only ({ref} to another chapter).
MYST_LIMITS = {"Citation Not Found", "Cross Reference Not Found"}
#: A rendered markdown cell: jupyterlab-myst's (``.myst``) or, without it, JupyterLab's CommonMark one.
RENDERED = ".jp-MarkdownCell :is(.myst, .jp-RenderedMarkdown)"


def _rendered_markdown(page, notebook: Path) -> dict:
    """Wait until every markdown cell of ``notebook`` is rendered and its math has stopped changing; return the
    cells' text without the formulas (KaTeX keeps the TeX source in the page), how many cells jupyterlab-myst
    rendered, the number of formulas it typeset and the warnings (message, text) it shows."""
    n_markdown = sum(c["cell_type"] == "markdown" for c in json.loads(notebook.read_text())["cells"])
    page.wait_for_function(f"n => document.querySelectorAll('{PANEL} {RENDERED}').length === n", arg=n_markdown)
    probe = """() => {
        const cells = [...document.querySelectorAll('PANEL RENDERED')];
        const text = cells.map(c => {
            const copy = c.cloneNode(true);
            copy.querySelectorAll('.katex, .katex-display').forEach(m => m.remove());
            return copy.textContent;
        });
        const warnings = cells.flatMap(c => [...c.querySelectorAll('WARNINGS')])
            .map(w => [w.getAttribute('title'), w.textContent.trim().slice(0, 80)]);
        const myst = cells.filter(c => c.classList.contains('myst')).length;
        return {text, warnings, myst, math: document.querySelectorAll('PANEL .jp-MarkdownCell .myst .katex').length};
    }""".replace("PANEL", PANEL).replace("RENDERED", RENDERED).replace("WARNINGS", MYST_WARNINGS)
    last, stable = None, 0
    for _ in range(600):  # polls, not a clock: a slow machine waits longer, it never reads a half-rendered page
        now = page.evaluate(probe)
        stable = stable + 1 if now == last else 0
        if stable >= 4:  # unchanged for four polls in a row
            return now
        last = now
        page.wait_for_timeout(500)
    raise AssertionError("the chapter's rendered markdown never stopped changing (600 polls)")


def test_chapter_math_renders_in_jupyterlab(browser_context, lab):
    """Markdown math as JupyterLab shows it (jupyterlab-myst typesets it with KaTeX): no TeX errors and no
    undefined macros.

    The HTML book defines its macros (``\\R``, ``\\softmax``, ...) in _config.yml; JupyterLab does not
    read that file, so a chapter must define the macros it uses where JupyterLab sees them too.
    """
    base, token = lab
    page = browser_context.new_page()
    keep_offline(page)
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{base}/lab/tree/{NOTEBOOK.name}?reset&token={token}", wait_until="domcontentloaded")
        rendered = _rendered_markdown(page, NOTEBOOK)
        assert rendered["math"] > 0, "no math was typeset in JupyterLab"
        problems = [w for w in rendered["warnings"] if w[0] not in MYST_LIMITS]
        assert not problems, (
            f"{len(problems)} formulas or blocks render with errors in JupyterLab (macros from _config.yml are unknown "
            f"there): {problems}"
        )
    finally:
        page.close()


def _book_macros() -> list[str]:
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    return sorted(config["sphinx"]["config"].get("mathjax3_config", {}).get("tex", {}).get("macros", {}))


def _toc_notebooks() -> list[Path]:
    from e2e_support import toc_entries

    return [ROOT / f"{e}.ipynb" for e in toc_entries() if (ROOT / f"{e}.ipynb").exists()]


@pytest.mark.parametrize("notebook", _toc_notebooks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_chapter_defines_the_macros_it_uses_for_jupyterlab(notebook):
    """The same property as above for every chapter, read from the file (opening each one in JupyterLab is slow).

    Fix: ``python tools/notebook_macros.py``: a first markdown cell tagged ``remove-cell`` (skipped by the HTML, which
    has the macros already) whose MyST front matter defines them (``math:``), read by jupyterlab-myst.
    """
    cells = json.loads(notebook.read_text())["cells"]
    text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    used = {m for m in _book_macros() if re.search(rf"\\{m}(?![A-Za-z])", text)}
    defined = set(re.findall(r"\\(?:newcommand|renewcommand|def)\s*\{?\s*\\([A-Za-z]+)", text))
    defined |= set(re.findall(r"^\s+'\\([A-Za-z]+)':", text, flags=re.M))  # MyST front matter (math:)
    missing = sorted(used - defined)
    assert not missing, f"macros used but not defined for JupyterLab (see this test's docstring): {missing}"


def test_chapter_opens_with_its_bookkeeping_collapsed_in_jupyterlab(browser_context, lab):
    """A chapter opened with make lab shows the code the book shows; the cells whose code the book hides open with
    their input collapsed (tools/lab_view.py sets metadata.jupyter.source_hidden), their outputs visible."""
    base, token = lab
    nb = json.loads(READ_CHAPTER.read_text())
    n_code = sum(c["cell_type"] == "code" for c in nb["cells"])
    n_collapsed = sum(bool(c.get("metadata", {}).get("jupyter", {}).get("source_hidden")) for c in nb["cells"])
    assert 0 < n_collapsed < n_code, f"{READ_CHAPTER.name}: {n_collapsed} of {n_code} code cells collapsed"
    page = browser_context.new_page()
    keep_offline(page)
    page.set_default_timeout(120_000)
    try:
        page.goto(f"{base}/lab/tree/{READ_CHAPTER.name}?reset&token={token}", wait_until="domcontentloaded")
        page.wait_for_function(f"n => document.querySelectorAll('{PANEL} .jp-CodeCell').length === n", arg=n_code)
        placeholders = page.locator(f"{PANEL} .jp-CodeCell .jp-InputPlaceholder").count()
        assert placeholders == n_collapsed, f"{placeholders} collapsed code inputs shown, {n_collapsed} expected"
        page.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab_theorem31.png"))
    finally:
        page.close()


#: MyST source as a JupyterLab without jupyterlab-myst shows it (CommonMark): directives, roles, label lines.
RAW_MYST = (":::{", "```{", "{cite", "{prf:", "{glue", "{term}", "{py:", "{numref}", "{ref}", "{doc}", "{eq}")
LABEL_LINE = re.compile(r"^\([\w-]+\)=$", flags=re.M)


def test_chapter_myst_renders_in_jupyterlab(browser_context, lab):
    """A chapter's MyST reads in JupyterLab as in the HTML: labels become anchors, admonitions and theorem blocks are
    drawn, roles are rendered, and no raw ``:::{``, ``{cite`` or ``(label)=`` is left in the text (jupyterlab-myst,
    locked in requirements.txt). The screenshots are of the chapter's opening and its theorem statement."""
    base, token = lab
    source = "\n".join(
        "".join(c["source"]) for c in json.loads(READ_CHAPTER.read_text())["cells"] if c["cell_type"] == "markdown"
    )
    labels = LABEL_LINE.findall(source)
    n_proofs = len(re.findall(r"^(?::::|```)\{prf:[a-z]+\}", source, flags=re.M))
    assert labels and n_proofs and ":::{admonition}" in source, f"{READ_CHAPTER.name} no longer has what this test reads"
    page = browser_context.new_page()
    keep_offline(page)
    page.set_default_timeout(120_000)
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(f"{base}/lab/tree/{READ_CHAPTER.name}?reset&token={token}", wait_until="domcontentloaded")
        rendered = _rendered_markdown(page, READ_CHAPTER)
        panel = page.locator(PANEL)
        heading = panel.locator(".jp-MarkdownCell h1").first
        heading.scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab_theorem31_myst.png"))
        text = "\n".join(rendered["text"])
        raw = sorted({m for m in RAW_MYST if m in text} | set(LABEL_LINE.findall(text)))
        assert not raw, f"raw MyST in {READ_CHAPTER.name} as JupyterLab renders it: {raw}"
        theorem = panel.locator("aside.myst-proof", has_text=re.compile(r"^Theorem \d")).first
        theorem.scroll_into_view_if_needed()
        theorem.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab_theorem31_theorem.png"))
        # Labels stacked on one target (the HTML gives it every id) give it one id in JupyterLab: any of them.
        stacks = [LABEL_LINE.findall(m) for m in re.findall(r"(?:^\([\w-]+\)=\n)+", source + "\n", flags=re.M)]
        assert rendered["myst"] == len(rendered["text"]), "markdown cells not rendered by jupyterlab-myst"
        missing = [s for s in stacks if not any(panel.locator(f"[id='{label[1:-2]}']").count() == 1 for label in s)]
        assert not missing, f"labels that are not anchors in JupyterLab: {missing}"
        assert panel.locator("aside.myst-proof").count() == n_proofs, "theorem/lemma/proof blocks not all drawn"
        assert panel.locator("aside.myst-admonition", has_text="Learning goals").count() == 1, "no Learning goals admonition"
        assert rendered["math"] > 0, "no math was typeset"
        problems = [w for w in rendered["warnings"] if w[0] not in MYST_LIMITS]
        assert not problems, f"jupyterlab-myst reports problems in {READ_CHAPTER.name}: {problems}"
    except Exception:
        page.screenshot(path=str(SCREENSHOT_DIR / "jupyterlab_myst_failure.png"))
        raise
    finally:
        page.close()
