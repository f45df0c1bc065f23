"""``python -m onelayer.studies.walks.scaling``: :func:`onelayer.studies.walks.scaling.stored.main`."""

from .stored import main

raise SystemExit(main())
