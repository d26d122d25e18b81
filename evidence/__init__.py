"""Evidence behind the README's claims: simulations, checks and benchmark records.

Run one with ``uv run --group dev python -m evidence.<name>``; the figures go into the
Markdown files here and the issue notes."""
