"""A session belongs to the key that submitted it: another key gets 404 (SessionNotFound),
an admin reads it (the services' principal check, as for batches). On a temporary SQLite
database through the composition root; nothing is scored."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from judge.domain.listing import ListFilter
from judge.domain.principal import OPERATOR, Principal
from judge.errors import SessionNotFound
from judge.persistence.database import Database
from judge.runtime.composition import build_runtime
from judge.settings import load_settings

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

#: a couple session with four client checkpoints (also the listing and API tests')
SESSION: dict[str, Any] = {
    "participants": [
        {"id": "ann", "role": "client"},
        {"id": "bob", "role": "client"},
        {"id": "t", "role": "therapist"},
    ],
    "turns": [
        {"speaker": "ann", "text": "You never listen."},
        {"speaker": "bob", "text": "I do."},
        {"speaker": "t", "text": "Let us slow down.", "to": ["all"]},
        {"speaker": "ann", "text": "Fine."},
        {"speaker": "bob", "text": "Okay."},
    ],
}


async def _owned(url: str) -> None:
    settings = load_settings(database_url=url)
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    runtime = build_runtime(settings, runs_jobs=False)
    try:
        alice, bob = Principal(key_id="alice"), Principal(key_id="bob")
        sessions = runtime.sessions
        prepared, run = sessions.prepare(
            SESSION, rubric_id="rescue-couple", panel_name=None, owner=alice.owner
        )
        await runtime.jobs.store_batch(prepared, along=[run])
        assert prepared.batch.kind == "session"
        view = await sessions.view(alice, run.id)
        # four client turns; turns 0-3 see the whole prefix in their recent window: one job
        # each; turn 4 has both windows
        assert [c.index for c in view.checkpoints] == [0, 1, 3, 4]
        assert view.total == 5
        assert all(c.status == "queued" for c in view.checkpoints)
        assert view.measures is None
        assert view.turns[2].to == ["ann", "bob"]
        assert (await sessions.view(OPERATOR, run.id)).id == run.id
        with pytest.raises(SessionNotFound):
            await sessions.view(bob, run.id)
        # the session's batch is no plain batch: not listed, not cancellable
        page = await runtime.batches.listed(alice, ListFilter())
        assert run.batch_id not in {b.id for b in page.batches}
    finally:
        await runtime.close()


def test_a_session_is_its_owners(tmp_path: Path) -> None:
    with pytest.MonkeyPatch.context() as env:
        for name in [k for k in os.environ if k.startswith("JUDGE_")]:
            env.delenv(name)
        asyncio.run(_owned(f"sqlite+aiosqlite:///{tmp_path / 'sessions.db'}"))
