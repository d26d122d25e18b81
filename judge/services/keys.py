"""API keys: the cache the API authenticates through (lookups cached briefly, a known key kept
usable while the database is down) and the key store the command line manages keys with."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from judge.persistence.database import is_unavailable
from judge.persistence.keys import SCOPES, KeyInfo, KeyStore, hash_key
from judge.services.schema import opened

__all__ = ["SCOPES", "KeyCache", "KeyInfo", "KeyStore", "keys_of"]


class KeyCache:
    """API keys by hash, looked up at most every ``fresh_s``; a key seen within ``stale_s``
    is still accepted while the database does not answer."""

    def __init__(self, store: KeyStore, *, fresh_s: float, stale_s: float) -> None:
        self._store = store
        self._fresh_s = fresh_s
        self._stale_s = stale_s
        self._seen: dict[str, tuple[float, KeyInfo | None]] = {}
        self._any_active: tuple[float, bool] | None = None

    async def any_active(self) -> bool:
        """Does any unrevoked key exist (looked up at most every ``fresh_s``)? True while the
        database does not answer (fail closed)."""
        now = time.monotonic()
        if self._any_active is not None and now - self._any_active[0] < self._fresh_s:
            return self._any_active[1]
        try:
            found = await self._store.count_active() > 0
        except Exception as exc:
            if is_unavailable(exc):
                return True
            raise
        self._any_active = (now, found)
        return found

    async def authenticate(self, token: str) -> KeyInfo | None:
        digest = hash_key(token)
        now = time.monotonic()
        cached = self._seen.get(digest)
        if cached is not None and now - cached[0] < self._fresh_s:
            return cached[1]
        try:
            key = await self._store.authenticate(token)
        except Exception as exc:
            if is_unavailable(exc) and cached is not None and now - cached[0] < self._stale_s:
                return cached[1]
            raise
        if len(self._seen) > 10_000:  # unknown tokens must not grow this without bound
            self._seen.clear()
        self._seen[digest] = (now, key)
        return key


@asynccontextmanager
async def keys_of(url: str) -> AsyncIterator[KeyStore]:
    """The key store of a migrated database, closed on exit."""
    async with opened(url) as database:
        await database.check_migrated()
        yield KeyStore(database)
