"""Simulations behind the statistical rules (run with ``uv run python -m evidence.<name>``);
their figures are in ``evidence/TRUST.md``. Slow: kept out of the default test run."""
