"""Per-chunk CPU, cold import and concurrency benchmarks (issue 9).

Run everything with ``python benchmarks/run.py`` (``--quick`` for a smoke run); see
``benchmarks/README.md``. Nothing in the library imports this package.
"""
