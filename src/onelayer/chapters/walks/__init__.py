"""The chapters of the part "Random walks on a ring" (``book/walks/``), one module each."""
