"""API keys: only a sha256 of each key is stored; the key itself is shown once, at creation."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import col

from judge.persistence.database import Database
from judge.persistence.tables import ApiKey, utcnow

KEY_PREFIX = "ej_"
SCOPES = ("score", "batch", "calibrate", "admin")


@dataclass(frozen=True)
class KeyInfo:
    id: str
    name: str
    prefix: str
    scopes: tuple[str, ...]
    created_at: str
    revoked: bool
    last_used_at: str | None


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _info(row: ApiKey) -> KeyInfo:
    return KeyInfo(
        id=row.id,
        name=row.name,
        prefix=row.prefix,
        scopes=tuple(s for s in row.scopes.split(",") if s),
        created_at=row.created_at.isoformat(),
        revoked=row.revoked_at is not None,
        last_used_at=row.last_used_at.isoformat() if row.last_used_at else None,
    )


class KeyStore:
    def __init__(self, database: Database) -> None:
        self._db = database

    async def create(self, name: str, scopes: tuple[str, ...]) -> tuple[str, KeyInfo]:
        unknown = [s for s in scopes if s not in SCOPES]
        if unknown:
            raise ValueError(f"unknown scopes {unknown}; choose from {', '.join(SCOPES)}")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        row = ApiKey(
            id=uuid.uuid4().hex,
            name=name,
            prefix=secret[:10],
            key_hash=hash_key(secret),
            scopes=",".join(scopes),
        )
        async with self._db.session() as session:
            session.add(row)
            await session.commit()
        return secret, _info(row)

    async def list(self) -> list[KeyInfo]:
        async with self._db.session() as session:
            rows = await session.execute(select(ApiKey).order_by(col(ApiKey.created_at)))
            return [_info(r) for r in rows.scalars().all()]

    async def revoke(self, key_id_or_prefix: str) -> KeyInfo | None:
        async with self._db.session() as session:
            rows = await session.execute(
                select(ApiKey).where(
                    (col(ApiKey.id) == key_id_or_prefix) | (col(ApiKey.prefix) == key_id_or_prefix)
                )
            )
            row = rows.scalars().first()
            if row is None:
                return None
            row.revoked_at = row.revoked_at or utcnow()
            session.add(row)
            await session.commit()
            return _info(row)

    async def authenticate(self, presented: str) -> KeyInfo | None:
        """The key's info when it exists and is not revoked; records its use."""
        async with self._db.session() as session:
            rows = await session.execute(
                select(ApiKey).where(col(ApiKey.key_hash) == hash_key(presented))
            )
            row = rows.scalars().first()
            if row is None or row.revoked_at is not None:
                return None
            row.last_used_at = utcnow()
            session.add(row)
            await session.commit()
            return _info(row)

    async def active_hashes(self) -> set[str]:
        """The hashes of every unrevoked key."""
        async with self._db.session() as session:
            rows = await session.execute(
                select(col(ApiKey.key_hash)).where(col(ApiKey.revoked_at).is_(None))
            )
            return set(rows.scalars().all())

    async def count_active(self) -> int:
        return sum(1 for k in await self.list() if not k.revoked)
