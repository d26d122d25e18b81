"""The API's key cache on SQLite and PostgreSQL: junk tokens never evict a real key, and a
revocation it has read keeps the key refused (its lookups may fail during an outage)."""

from __future__ import annotations

import asyncio

import pytest

from judge.persistence.database import Database
from judge.services.keys import KeyCache, KeyStore

pytestmark = pytest.mark.integration


def test_junk_tokens_never_evict_a_real_key_and_a_read_revocation_holds(
    database_url: str,
) -> None:
    async def scenario() -> None:
        database = Database(database_url)
        try:
            await database.upgrade()
            store = KeyStore(database)
            secret, info = await store.create("real", ("score",))
            cache = KeyCache(store, fresh_s=60, stale_s=300)
            cache.MAX_UNKNOWN = 100  # a small bound, reached by a small flood
            key = await cache.authenticate(secret)
            assert key is not None
            assert key.id == info.id
            for n in range(cache.MAX_UNKNOWN * 3):
                assert await cache.authenticate(f"ej_junk-{n}") is None
            assert cache.known(secret)  # still a key this process knows
            assert await cache.any_active()

            await store.revoke(info.id)
            await cache.sync()  # what the API does every key_cache_s
            assert not cache.known(secret)
            assert await cache.authenticate(secret) is None
            await database.dispose()  # closed: lookups fail from here on
            assert await cache.authenticate(secret) is None  # answered without a lookup
        finally:
            await database.dispose()

    asyncio.run(scenario())
