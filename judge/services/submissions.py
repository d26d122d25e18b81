"""What the API needs from the database to admit a request: API keys (cached briefly, and
kept usable while the database is down), queue counts for quotas, and the submissions
recorded under an ``Idempotency-Key``."""

from __future__ import annotations

import time
from dataclasses import dataclass

from judge.persistence import idempotency as idempotency_repo
from judge.persistence import jobs as repo
from judge.persistence.database import Database, is_unavailable
from judge.persistence.keys import KeyInfo, KeyStore, hash_key
from judge.persistence.tables import IdempotencyRecord

__all__ = ["KeyCache", "KeyInfo", "Submission", "find_submission", "queue_counts"]


class KeyCache:
    """API keys by hash, looked up at most every ``fresh_s``; a key seen within ``stale_s``
    is still accepted while the database does not answer."""

    def __init__(self, store: KeyStore, *, fresh_s: float, stale_s: float) -> None:
        self._store = store
        self._fresh_s = fresh_s
        self._stale_s = stale_s
        self._seen: dict[str, tuple[float, KeyInfo | None]] = {}

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


async def queue_counts(database: Database, owner: str | None) -> tuple[int, int]:
    """(items queued in all, unfinished items of ``owner``)."""
    async with database.session() as session:
        return await repo.count_queued(session), await repo.count_unfinished(session, owner)


@dataclass(frozen=True)
class Submission:
    """A submission under an ``Idempotency-Key``: stored with what it creates."""

    owner: str | None
    route: str
    key: str
    request_hash: str

    @property
    def id(self) -> str:
        return idempotency_repo.record_id(self.owner, self.route, self.key)

    def row(self, resource_id: str) -> IdempotencyRecord:
        return IdempotencyRecord(
            id=self.id,
            owner_key_id=self.owner,
            route=self.route,
            request_hash=self.request_hash,
            resource_id=resource_id,
        )


async def find_submission(
    database: Database, submission: Submission, *, ttl_s: float
) -> tuple[str, str] | None:
    """(resource id, request hash) of the live earlier submission with this key, if any."""
    found = await idempotency_repo.find(database, submission.id, ttl_s=ttl_s)
    return None if found is None else (found.resource_id, found.request_hash)
