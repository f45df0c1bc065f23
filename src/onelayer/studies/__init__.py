"""Studies: the experiments on the papers' objects, one layer above them.

A study builds data and models from the papers (:mod:`onelayer.walks`, :mod:`onelayer.trees`), trains them over seeds, sizes or
readings, and returns numbers and histories; a stored study is run by one runner (:mod:`onelayer.studies.runner`, registry in :mod:`onelayer.studies.registry`). Studies import the
papers' floor and the shared tools (``training``, ``batched``, ``rates``, ``store``, ``paths``, ``jitter``), never the
book side (chapters, figures, plots, widgets, registry): ``tests/test_floors.py`` checks the direction.
"""
