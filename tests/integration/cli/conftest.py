"""The CLI tests share the use-case tests' fixtures: SQLite and PostgreSQL, a clean env."""

from tests.integration.services.conftest import clean_env, database_url

__all__ = ["clean_env", "database_url"]
