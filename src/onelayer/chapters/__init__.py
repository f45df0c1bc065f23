"""One module per chapter: what a chapter shows, defined once.

``onelayer.chapters.<name>`` mirrors ``book/<name>.ipynb`` (and ``onelayer.chapters.<part>.<name>`` mirrors
``book/<part>/<name>.ipynb``). A chapter module holds, in this order:

* the chapter's settings, a frozen dataclass ``Settings`` with its instance ``SETTINGS`` at the top;
* its experiments, tables and figures, each a function the notebook cell calls; every figure or table the
  command line can make is registered (:func:`onelayer.registry.register`) and returns ``(figure or None,
  numbers)``, so that the notebook, ``python -m onelayer make NAME`` and the stored numbers in
  ``book/numbers/`` come from one definition;
* ``verdict_rows()``: the chapter's verdicts, one row per claim and reading (``claim``, ``source``, ``reading``,
  ``settings``, ``measurement``, ``verdict``, ``class``, ``chapter``); ``class`` is derived from the numbers
  (:func:`onelayer.claims.exact_class`, or a rule of the module's own), and a class that comes from rates of runs
  is given by :func:`onelayer.claims.rated`, which also stores those rates in the row (``rates``, with ``checks``
  for the exact checks combined with them); :mod:`onelayer.claims` groups the rows into claims and renders them.

The layering (checked by ``tests/test_layering.py``): the papers' packages (:mod:`onelayer.walks`,
:mod:`onelayer.trees`) and the shared core never import ``onelayer.chapters``; a chapter module imports no other
chapter module; every registered function of a chapter module is called by its notebook. The registry finds the
registered functions by importing every module of this package.

Every chapter has its module; ``book/api_book.md`` lists them.
"""
