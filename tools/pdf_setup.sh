#!/usr/bin/env bash
# Set-up for `make pdf`: TeX Live from Debian's packages, installed only when xelatex or latexmk is missing
# (about 80 MB, under a minute). xelatex for Unicode text, the recommended LaTeX packages and fonts, the
# extra packages Sphinx's LaTeX writer loads, latexmk, and a Unicode OpenType font family.
set -euo pipefail

if command -v xelatex >/dev/null 2>&1 && command -v latexmk >/dev/null 2>&1; then
  echo "pdf_setup: $(xelatex --version | head -n 1) is installed"
else
  echo "pdf_setup: installing TeX Live (xelatex, latexmk)"
  bash "$(dirname "$0")/apt_install.sh" --no-install-recommends texlive-xetex texlive-latex-recommended \
    texlive-fonts-recommended texlive-latex-extra latexmk fonts-freefont-otf
  xelatex --version | head -n 1
fi
