"""Benchmark scripts (run with ``uv run python -m bench.<name>``); numbers go in issue notes."""
