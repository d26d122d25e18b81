"""The LLM call cache in SQL: one row per exact (model, parameters, messages, schema) request."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError

from judge.domain.cached_reply import CachedReply
from judge.persistence.database import Database
from judge.persistence.tables import LlmCacheEntry


class SqlCallCache:
    def __init__(self, database: Database) -> None:
        self._db = database

    async def get(self, key: str) -> CachedReply | None:
        async with self._db.session() as session:
            row = await session.get(LlmCacheEntry, key)
            if row is None:
                return None
            return CachedReply(
                content=row.content,
                resolved_model=row.resolved_model,
                prompt_tokens=row.prompt_tokens,
                completion_tokens=row.completion_tokens,
                cost_usd=row.cost_usd,
            )

    async def put(self, key: str, model: str, reply: CachedReply) -> None:
        async with self._db.session() as session:
            session.add(
                LlmCacheEntry(
                    key=key,
                    model=model,
                    resolved_model=reply.resolved_model,
                    content=reply.content,
                    prompt_tokens=reply.prompt_tokens,
                    completion_tokens=reply.completion_tokens,
                    cost_usd=reply.cost_usd,
                )
            )
            try:
                await session.commit()
            except IntegrityError:
                await session.rollback()  # another process cached the same call first
