"""Benchmarks of onelayer: ``python -m benchmarks [--quick] [--only NAME]`` (``make bench``).

Every module ``benchmarks/bench_<name>.py`` exposes ``run(quick: bool = False) -> list[dict]``
returning rows in the format documented in :mod:`benchmarks.harness`. The runner
(:mod:`benchmarks.__main__`) runs them, prints one table and writes
``benchmarks/results/latest.json`` and ``latest.md`` (the table the book's runtime
appendix includes).
"""
