"""Throughput benchmarks of the wiki_assets dispatch engine against simpler designs.

``python -m benchmarks.dispatch`` is the entry point; see ``docs/benchmarks.md``.
"""
