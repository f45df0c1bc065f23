"""The Makefile on machines unlike ours: `make lab` as root, the Python 3.11.5+ check, the optional torch index.

``make lab`` is started exactly as make would run it (the command from ``make -s -n lab``), with extra
arguments that keep it headless on a free 127.0.0.1 port with a random token and Jupyter's settings in a scratch
directory; the test passes once ``/api/status`` answers. The set-up's Python check runs on a copy of the
Makefile in a scratch directory with a fake interpreter, so no venv is made.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = ROOT / "Makefile"
NEEDS = "onelayer needs Python 3.11.5+ (a 3.11 from 3.11.5 on: the pins in requirements.txt are for it); found"
# make's own variables from an outer `make test` must not leak into the make we ask.
MAKE_ENV = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"}}


def _make(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["make", *args], cwd=cwd, env=MAKE_ENV, capture_output=True, text=True, timeout=60)


def lab_command() -> list[str]:
    """The command the ``lab`` target runs: the last line of ``make -s -n lab`` (the lines before it, if any,
    are the set-up's, printed when the install stamp is out of date)."""
    res = _make("-s", "-n", "lab", cwd=ROOT)
    assert res.returncode == 0, res.stderr
    lines = [line for line in res.stdout.splitlines() if line.strip()]
    assert lines, "make -n lab printed nothing"
    return shlex.split(lines[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_lab_command_allows_root_only_for_root():
    cmd = lab_command()
    assert cmd[:2] == [".venv/bin/jupyter", "lab"] and cmd[-1] == "book", cmd
    assert ("--allow-root" in cmd) == (os.geteuid() == 0), cmd


def test_make_lab_starts_and_answers(tmp_path):
    cmd = lab_command()
    jupyter = ROOT / cmd[0]
    assert (jupyter.parent / "jupyter-lab").is_file(), f"jupyter-lab is not installed in {jupyter.parent} (make setup)"
    port, token = _free_port(), secrets.token_hex(16)
    headless = [
        "--no-browser",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.ip=127.0.0.1",
        f"--IdentityProvider.token={token}",  # jupyter_server 2's name for the deprecated --ServerApp.token
        "--ServerApp.open_browser=False",
        "--LabApp.news_url=",
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    env = {
        **MAKE_ENV,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTER_DATA_DIR": str(tmp_path / "data"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
    }
    log = tmp_path / "lab.log"
    url = f"http://127.0.0.1:{port}/api/status?token={token}"
    answered = False
    with log.open("w") as out:
        proc = subprocess.Popen(cmd + headless, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not answered:
            if proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    answered = response.status == 200
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.25)
    finally:
        _stop(proc)
    assert answered, (f"`{shlex.join(cmd)}` (from make -n lab) did not answer on {url.split('?')[0]} "
                      f"(exit code {proc.returncode}):\n{log.read_text()[-3000:]}")


@pytest.fixture
def makefile_copy(tmp_path):
    """The Makefile alone in a scratch directory, with the set-up's prerequisites as empty files."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(MAKEFILE, work / "Makefile")
    (work / "requirements.txt").write_text("")
    (work / "pyproject.toml").write_text("")
    return work


def _fake_python(path: Path, version: str) -> Path:
    """An interpreter that reports VERSION to ``-c`` and records any other call (``-m venv``) and fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nif [ "$1" = "-c" ]; then echo {version}; exit 0; fi\n'
                    f'echo "$@" >> "{path}.called"\necho "fake python: $*" >&2\nexit 1\n')
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("version", ["3.12.1", "3.10.14", "3.11.4", "3.11.0"])
def test_setup_stops_at_once_on_another_python(makefile_copy, tmp_path, version):
    fake = _fake_python(tmp_path / "bin" / "python3", version)
    res = _make(f"PYTHON={fake}", "setup", cwd=makefile_copy)
    assert res.returncode != 0
    assert f"{NEEDS} {version} at {fake}. Run e.g. `make PYTHON=python3.11 book`." in res.stderr, res.stderr
    assert not (makefile_copy / ".venv").exists()
    assert not Path(f"{fake}.called").exists(), "the venv was to be made despite the wrong Python"


def test_setup_names_a_missing_python(makefile_copy, tmp_path):
    res = _make(f"PYTHON={tmp_path / 'no-such-python'}", "setup", cwd=makefile_copy)
    assert res.returncode != 0
    assert f"{NEEDS} no Python at {tmp_path / 'no-such-python'}." in res.stderr, res.stderr
    assert not (makefile_copy / ".venv").exists()


@pytest.mark.parametrize("version", ["3.11.5", "3.11.9", "3.11.14"])
def test_setup_goes_on_to_the_venv_with_python_311(makefile_copy, tmp_path, version):
    fake = _fake_python(tmp_path / "bin" / "python3", version)
    res = _make(f"PYTHON={fake}", "setup", cwd=makefile_copy)
    assert NEEDS not in res.stderr
    assert Path(f"{fake}.called").read_text().split() == ["-m", "venv", ".venv"]  # then the fake fails
    assert res.returncode != 0 and not (makefile_copy / ".venv").exists()


def test_setup_checks_an_existing_venv(makefile_copy, tmp_path):
    _fake_python(makefile_copy / ".venv" / "bin" / "python", "3.12.1")
    fake = _fake_python(tmp_path / "bin" / "python3", "3.11.9")
    res = _make(f"PYTHON={fake}", "setup", cwd=makefile_copy)
    assert res.returncode != 0
    assert f"{NEEDS} 3.12.1 at .venv/bin/python. Remove .venv (make distclean)" in res.stderr, res.stderr
    assert not Path(f"{fake}.called").exists() and not (makefile_copy / ".venv" / "bin" / "python.called").exists()


def _pip_requirements_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if "pip install" in line and "requirements.txt" in line]
    return line.strip()


def test_torch_index_is_optional(makefile_copy):
    plain = _make("-n", "setup", cwd=makefile_copy)
    assert plain.returncode == 0, plain.stderr
    expected = ".venv/bin/python -m pip install --quiet -r requirements.txt "
    assert _pip_requirements_line(plain.stdout).startswith(expected)
    index = "https://download.pytorch.org/whl/cpu"
    cpu = _make("-n", "setup", f"TORCH_INDEX={index}", cwd=makefile_copy)  # -n: printed, not run
    assert cpu.returncode == 0, cpu.stderr
    assert f"pip install --quiet --extra-index-url {index} -r requirements.txt " in _pip_requirements_line(cpu.stdout)
