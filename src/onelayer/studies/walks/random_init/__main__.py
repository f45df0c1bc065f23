"""``python -m onelayer.studies.walks.random_init``: :func:`onelayer.studies.walks.random_init.stored.main`."""

from .stored import main

raise SystemExit(main())
