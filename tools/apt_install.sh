#!/usr/bin/env bash
# Installs Debian packages for the set-up scripts (tools/pdf_setup.sh, tools/e2e_setup.sh), one apt-get at a time.
# .ci/run builds the PDF beside the browser tests, so on a fresh machine both set-ups install at once, and two
# apt-get processes fail on apt's lock ("Could not get lock /var/lib/apt/lists/lock"). They take turns on a lock of
# ours (flock), and wait for apt's own locks (DPkg::Lock::Timeout) if another apt-get holds them.
# Usage: bash tools/apt_install.sh [apt-get install options] PACKAGE...
set -euo pipefail

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "apt_install: need root to run: $*" >&2; return 1
  fi
}

[ "$#" -gt 0 ] || { echo "apt_install: name the packages to install" >&2; exit 2; }
lock="${ONELAYER_APT_LOCK:-${TMPDIR:-/tmp}/onelayer-apt.lock}"
as_root env DEBIAN_FRONTEND=noninteractive flock "$lock" bash -c '
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@" >/dev/null' apt_install "$@"
