"""tools/apt_install.sh: the set-up scripts install one apt-get at a time (.ci/run runs `make pdf` beside `make e2e`;
on a fresh machine both install, and two apt-get processes at once fail on apt's lock)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.structural  # no floating-point result: the portability lanes skip it

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "apt_install.sh"

# A stand-in for apt-get that holds a "lock" for a moment and fails, as apt does, when another one holds it.
FAKE_APT = """#!/usr/bin/env bash
mkdir "$FAKE_DIR/held" 2>/dev/null || { echo "E: Could not get lock" >&2; exit 100; }
echo "$*" >> "$FAKE_DIR/calls"
sleep 1
rmdir "$FAKE_DIR/held"
"""


@pytest.fixture()
def fake_apt(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(FAKE_APT)
    (bin_dir / "apt-get").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_DIR": str(tmp_path),
           "ONELAYER_APT_LOCK": str(tmp_path / "apt.lock")}
    return tmp_path, env


def _run_two(env, locked=True):
    script = SCRIPT.read_text() if locked else SCRIPT.read_text().replace('flock "$lock" ', "")
    path = Path(env["FAKE_DIR"]) / "apt_install.sh"
    path.write_text(script)
    first = subprocess.Popen(["bash", str(path), "chromium"], env=env, stderr=subprocess.PIPE, text=True)
    held = Path(env["FAKE_DIR"]) / "held"
    deadline = time.monotonic() + 20
    while not held.exists() and time.monotonic() < deadline:  # the second starts while the first holds apt's lock
        time.sleep(0.02)
    second = subprocess.Popen(["bash", str(path), "latexmk"], env=env, stderr=subprocess.PIPE, text=True)
    return [(p.wait(timeout=60), p.stderr.read()) for p in (first, second)]


@pytest.mark.skipif(os.geteuid() != 0, reason="the script runs apt-get through sudo when not root")
def test_two_installs_at_once_take_turns(fake_apt):
    tmp, env = fake_apt
    results = _run_two(env)
    assert [code for code, _ in results] == [0, 0], results
    calls = (tmp / "calls").read_text().splitlines()
    assert sorted(c.split()[-1] for c in calls if " install " in f" {c} ") == ["chromium", "latexmk"]
    assert all("DPkg::Lock::Timeout=600" in c for c in calls)


@pytest.mark.skipif(os.geteuid() != 0, reason="the script runs apt-get through sudo when not root")
def test_without_the_lock_the_fake_apt_collides(fake_apt):
    # the check above can fail: without flock the two stand-ins overlap and one exits 100, like apt-get
    tmp, env = fake_apt
    results = _run_two(env, locked=False)
    assert 100 in [code for code, _ in results]


def test_no_package_named_is_an_error():
    res = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True)
    assert res.returncode == 2 and "name the packages" in res.stderr
