"""The LLM call cache in SQL on SQLite and PostgreSQL: entries written behind, many per
statement, read back by another process's cache; an entry written twice is kept once."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from judge.domain.cached_reply import CachedReply
from judge.persistence.cache import SqlCallCache
from judge.persistence.database import Database
from tests.integration.persistence.test_jobs import BACKENDS, _url, _with_database

pytestmark = pytest.mark.integration


def _reply(n: int) -> CachedReply:
    return CachedReply(
        content=f'{{"n": {n}}}', resolved_model="accurate", prompt_tokens=10 + n,
        completion_tokens=5, cost_usd=0.001 * n, simulated=True,
    )  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_entries_written_behind_are_read_back(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    async def body(database: Database) -> Any:
        writer = SqlCallCache(database)
        await asyncio.gather(*(writer.put(f"k{n}", "openai/accurate", _reply(n)) for n in range(3)))
        await writer.flush()
        await writer.put("k0", "openai/accurate", _reply(9))  # already stored: kept as it was
        await writer.flush()
        reader = SqlCallCache(database)  # nothing buffered: every answer is read
        return await asyncio.gather(*(reader.get(k) for k in ("k0", "k1", "k2", "missing")))

    found = _with_database(_url(backend, tmp_path, request), body)
    assert found == [_reply(0), _reply(1), _reply(2), None]
