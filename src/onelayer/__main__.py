"""``python -m onelayer``: the command line (see :mod:`onelayer.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
