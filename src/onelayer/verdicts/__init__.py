"""The verdict rows of every chapter that tests a claim: one module per chapter (``walks_theorem31`` for
``book/walks/theorem31.ipynb``, ``scaling`` for ``book/scaling.ipynb``), pure functions from the chapter's settings
and measured numbers to the rows :func:`onelayer.findings.collect` gathers (keys :data:`onelayer.findings.KEYS`).

Each claim is stated once here with its rule: the words and the class of its verdict follow from the rates and exact
checks it is given (:func:`onelayer.claims.rated`, :func:`onelayer.claims.exact_class`). The chapter module's
``verdict_rows()`` loads the stored studies, reads them with the chapter's settings and passes the numbers in; these
modules load nothing and never import a chapter module (``tests/test_layering.py``), so a test can hand them any rates.
"""
