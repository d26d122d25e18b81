"""SQL persistence (SQLModel on SQLAlchemy, async): SQLite by default, PostgreSQL by URL.

The only package that imports sqlmodel or sqlalchemy. Schema changes go through the Alembic
migrations in ``migrations/`` (``judge db upgrade``); the service refuses an unmigrated database.
"""
