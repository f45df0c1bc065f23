"""``python -m onelayer.walks.scaling``: :func:`onelayer.walks.scaling.stored.main`."""

from .stored import main

raise SystemExit(main())
