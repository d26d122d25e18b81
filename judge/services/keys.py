"""API keys: the cache the API authenticates through (lookups cached briefly, a known key kept
usable while the database is down) and the key store the command line manages keys with."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from judge.persistence.database import is_unavailable
from judge.persistence.keys import SCOPES, KeyInfo, KeyStore, hash_key
from judge.services.schema import opened

__all__ = ["SCOPES", "KeyCache", "KeyInfo", "KeyStore", "keys_of"]

log = logging.getLogger(__name__)


class KeyCache:
    """API keys by hash, looked up at most every ``fresh_s``; a key seen within ``stale_s``
    is still accepted while the database does not answer, unless it was revoked before the
    outage (:meth:`sync` learns revocations of every cached key, used or not). Unknown tokens
    are remembered apart (at most ``MAX_UNKNOWN``, oldest forgotten first), so a flood of junk
    tokens never evicts a real key."""

    #: unknown tokens remembered (each spares the database one lookup for ``fresh_s``)
    MAX_UNKNOWN = 10_000

    def __init__(self, store: KeyStore, *, fresh_s: float, stale_s: float) -> None:
        self._store = store
        self._fresh_s = fresh_s
        self._stale_s = stale_s
        self._seen: dict[str, tuple[float, KeyInfo]] = {}
        self._revoked: set[str] = set()
        self._unknown: OrderedDict[str, float] = OrderedDict()
        self._any_active: tuple[float, bool] | None = None

    def known(self, token: str) -> bool:
        """Was ``token`` found to be a valid key (and not revoked since, as far as known)?"""
        return hash_key(token) in self._seen

    async def authenticate(self, token: str) -> KeyInfo | None:
        digest = hash_key(token)
        now = time.monotonic()
        if digest in self._revoked:
            return None
        cached = self._seen.get(digest)
        if cached is not None and now - cached[0] < self._fresh_s:
            return cached[1]
        unknown_at = self._unknown.get(digest)
        if unknown_at is not None and now - unknown_at < self._fresh_s:
            return None
        try:
            key = await self._store.authenticate(token)
        except Exception as exc:
            if is_unavailable(exc) and cached is not None and now - cached[0] < self._stale_s:
                return cached[1]
            raise
        if key is not None:
            self._seen[digest] = (now, key)
        elif self._seen.pop(digest, None) is not None:
            self._revoked.add(digest)
        else:
            self._unknown[digest] = now
            self._unknown.move_to_end(digest)
            while len(self._unknown) > self.MAX_UNKNOWN:
                self._unknown.popitem(last=False)
        return key

    async def sync(self) -> None:
        """Read which keys are active: cached keys revoked since are refused from now on
        (during a later outage too), and :meth:`any_active` is refreshed."""
        active = await self._store.active_hashes()
        for digest in [d for d in self._seen if d not in active]:
            del self._seen[digest]
            self._revoked.add(digest)
        self._any_active = (time.monotonic(), bool(active))

    async def keep_synced(self) -> None:
        """:meth:`sync` every ``fresh_s`` (but not more often than once a second) until
        cancelled; a failed sync is retried at the next turn."""
        while True:
            await asyncio.sleep(max(self._fresh_s, 1.0))
            try:
                await self.sync()
            except Exception:
                log.debug("could not read the active API keys; will retry", exc_info=True)

    async def any_active(self) -> bool:
        """Does any unrevoked key exist (looked up at most every ``fresh_s``)? True while the
        database does not answer (fail closed)."""
        now = time.monotonic()
        if self._any_active is not None and now - self._any_active[0] < self._fresh_s:
            return self._any_active[1]
        try:
            await self.sync()
        except Exception as exc:
            if is_unavailable(exc):
                return True
            raise
        return self._any_active is not None and self._any_active[1]


@asynccontextmanager
async def keys_of(url: str) -> AsyncIterator[KeyStore]:
    """The key store of a migrated database, closed on exit."""
    async with opened(url) as database:
        await database.check_migrated()
        yield KeyStore(database)
