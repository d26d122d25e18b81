"""Submissions recorded under an ``Idempotency-Key``: stored in the same transaction as what
they create, so a retried request finds the first submission instead of making a second."""

from __future__ import annotations

from dataclasses import dataclass

from judge.persistence import idempotency as idempotency_repo
from judge.persistence.database import Database
from judge.persistence.tables import IdempotencyRecord


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
