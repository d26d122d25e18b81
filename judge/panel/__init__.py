"""The judge panel: run judges concurrently on an item, aggregate, and flag reliability."""
