#!/usr/bin/env bash
# Set-up for `make pdf`: TeX Live from Debian's packages, installed only when xelatex or latexmk is missing
# (about 80 MB, under a minute). xelatex for Unicode text, the recommended LaTeX packages and fonts, the
# extra packages Sphinx's LaTeX writer loads, latexmk, and a Unicode OpenType font family.
set -euo pipefail

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "pdf_setup: need root to run: $*" >&2; return 1
  fi
}

if command -v xelatex >/dev/null 2>&1 && command -v latexmk >/dev/null 2>&1; then
  echo "pdf_setup: $(xelatex --version | head -n 1) is installed"
else
  echo "pdf_setup: installing TeX Live (xelatex, latexmk)"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq
  as_root apt-get install -y -qq --no-install-recommends texlive-xetex texlive-latex-recommended \
    texlive-fonts-recommended texlive-latex-extra latexmk fonts-freefont-otf >/dev/null
  xelatex --version | head -n 1
fi
