"""The chapters of the parts "Trees I: backward reasoning" and "Trees II: forward reasoning" (``book/trees/``), one
module each."""
