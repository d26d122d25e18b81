"""Which dimensions a panel's latest verbosity probe marked.

A dimension stays ``length_sensitive`` for a rubric (content hash) and panel (signature) until
a later completed verbosity probe of that panel clears it: only the latest one counts, of the
probes run by the scored item's owner (keyless items: keyless probes), never another key's.
"""

from __future__ import annotations

import json
from typing import Protocol

from sqlalchemy import select
from sqlmodel import col

from judge.domain.rubric import Rubric
from judge.persistence.database import Database
from judge.persistence.memo import TtlMemo
from judge.persistence.tables import ProbeRun

COMPLETED = "completed"
VERBOSITY = "verbosity"


class _Panel(Protocol):
    def signature(self) -> str: ...


async def length_sensitive(
    database: Database, owner: str | None, rubric_hash: str, signature: str
) -> frozenset[str]:
    """Dimensions the latest completed verbosity probe of ``owner``, rubric and panel marked."""
    mine = col(ProbeRun.owner_key_id)
    async with database.session() as session:
        rows = await session.execute(
            select(col(ProbeRun.flags_json))
            .where(
                col(ProbeRun.rubric_hash) == rubric_hash,
                col(ProbeRun.kind) == VERBOSITY,
                col(ProbeRun.status) == COMPLETED,
                col(ProbeRun.panel_signature) == signature,
                mine.is_(None) if owner is None else mine == owner,
            )
            .order_by(col(ProbeRun.finished_at).desc(), col(ProbeRun.id).desc())
            .limit(1)
        )
        found = rows.scalars().first()
    if found is None:
        return frozenset()
    return frozenset(json.loads(found).get("length_sensitive") or [])


class SqlProbeFlags:
    """Looks up length-sensitive dimensions, remembering answers for a few seconds."""

    def __init__(self, database: Database, *, ttl_s: float = 5.0) -> None:
        self._db = database
        self._memo: TtlMemo[tuple[str | None, str, str], frozenset[str]] = TtlMemo(ttl_s)

    def forget(self) -> None:
        self._memo.forget()

    async def length_sensitive(
        self, rubric: Rubric, panel: _Panel, *, owner: str | None
    ) -> frozenset[str]:
        key = (owner, rubric.content_hash, panel.signature())
        return await self._memo.get(key, lambda: length_sensitive(self._db, *key))
