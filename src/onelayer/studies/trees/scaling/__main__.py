"""``python -m onelayer.studies.trees.scaling``: :func:`onelayer.studies.trees.scaling.stored.main`."""

from .stored import main

if __name__ == "__main__":
    raise SystemExit(main())
