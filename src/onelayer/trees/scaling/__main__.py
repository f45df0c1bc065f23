"""``python -m onelayer.trees.scaling``: :func:`onelayer.trees.scaling.stored.main`."""

from .stored import main

if __name__ == "__main__":
    raise SystemExit(main())
