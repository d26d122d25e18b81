"""Evidence scripts: slow simulations on real data, run with `uv run python -m evidence.<name>`."""
