"""``python -m onelayer.walks.random_init``: :func:`onelayer.walks.random_init.stored.main`."""

from .stored import main

raise SystemExit(main())
