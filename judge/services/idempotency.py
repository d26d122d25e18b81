"""Submissions recorded under an ``Idempotency-Key``: stored in the same transaction as what
they create, so a retried request finds the first submission instead of making a second."""

from __future__ import annotations

import re
from dataclasses import dataclass

from judge.errors import IdempotencyKeyInvalid, IdempotencyKeyReused
from judge.persistence import idempotency as idempotency_repo
from judge.persistence.database import Database
from judge.persistence.tables import IdempotencyRecord

_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


@dataclass(frozen=True)
class IdempotencyKey:
    """A caller's ``Idempotency-Key`` (as sent: checked when used) and the digest of the
    request it came with."""

    key: str
    request_hash: str

    def submission(self, owner: str | None, route: str) -> Submission:
        """The record of this submission; :class:`IdempotencyKeyInvalid` unless the key is
        1 to 255 visible ASCII characters."""
        if not _KEY.match(self.key):
            raise IdempotencyKeyInvalid()
        return Submission(owner, route, self.key, self.request_hash)


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


async def replayed(database: Database, submission: Submission, *, ttl_s: float) -> str | None:
    """The resource the live earlier submission with this key created, None when there is
    none; :class:`IdempotencyKeyReused` when that submission was a different request."""
    found = await find_submission(database, submission, ttl_s=ttl_s)
    if found is None:
        return None
    resource_id, first_hash = found
    if first_hash != submission.request_hash:
        raise IdempotencyKeyReused()
    return resource_id
