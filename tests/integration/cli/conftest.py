"""The CLI tests share the use-case tests' clean environment; ``database_url`` (SQLite and
PostgreSQL) comes from the ``tests.fixtures.stacks`` plugin."""

from tests.integration.services.conftest import clean_env

__all__ = ["clean_env"]
