"""A batch is sent to the broker in chunks, each chunk's outbox rows cleared once it is sent:
a send that fails part-way leaves exactly the unsent jobs to the drainer, which sends them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from judge.runtime.composition import build_runtime
from judge.runtime.outbox import OutboxDispatcher, OutboxDrainer
from judge.sample_conversations import load_sample
from judge.services import schema
from judge.settings import load_settings
from tests.fixtures.stacks import query

OUTBOX = "SELECT count(*) FROM job_outbox"


class FlakyBroker:
    """A dispatcher (our own protocol) that records each send and refuses the ``fail_at``-th."""

    def __init__(self, fail_at: int | None) -> None:
        self.fail_at = fail_at
        self.sends: list[list[str]] = []

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        if len(self.sends) + 1 == self.fail_at:
            self.fail_at = None
            raise ConnectionError("the broker went away")
        self.sends.append(list(job_ids))


def test_a_failed_chunk_and_the_rest_are_left_to_the_drainer(tmp_path: Path) -> None:
    settings = load_settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'outbox.db'}",
        simulator={"url": "http://127.0.0.1:9/v1"},  # nothing is scored here
    )
    item = load_sample("reddit_style_post.json")

    async def run() -> tuple[list[int], list[str], int, list[int], int]:
        await schema.upgrade(settings.database_url)
        runtime = build_runtime(settings, runs_jobs=False)
        try:
            lines = [(n, dict(item, id=f"i{n}")) for n in range(1, 1_201)]
            _, job_ids = await runtime.jobs.submit_batch(
                rubric_id="epitome", panel_name=None, lines=lines
            )
            broker = FlakyBroker(fail_at=2)
            await OutboxDispatcher(broker, runtime.jobs, chunk=500).dispatch(job_ids)
            first_round = [len(s) for s in broker.sends]
            sent_first = [j for s in broker.sends for j in s]
            left = (await asyncio.to_thread(query, settings.database_url, OUTBOX))[0][0]
            broker.sends.clear()
            drained = await OutboxDrainer(
                runtime.jobs, OutboxDispatcher(broker, runtime.jobs)
            ).drain(grace_s=0)
            second_round = [len(s) for s in broker.sends]
            return first_round, sent_first, left, second_round, drained
        finally:
            await runtime.close()

    first_round, sent_first, left, second_round, drained = asyncio.run(run())
    assert first_round == [500]  # the second chunk failed: no more sends in this request
    assert len(set(sent_first)) == 500
    assert left == 700  # the failed chunk and the one never tried
    assert drained == 700
    assert sum(second_round) == 700
    assert query(settings.database_url, OUTBOX) == [(0,)]


class SlowBroker:
    """A dispatcher that holds each send until told to go on (a large batch mid-send)."""

    def __init__(self) -> None:
        self.sends: list[list[str]] = []
        self.go_on = asyncio.Event()
        self.sending = asyncio.Event()

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        self.sends.append(list(job_ids))
        self.sending.set()
        await self.go_on.wait()


def test_the_drainer_never_resends_rows_of_a_submission_still_being_sent(tmp_path: Path) -> None:
    settings = load_settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'outbox.db'}",
        simulator={"url": "http://127.0.0.1:9/v1"},
    )
    item = load_sample("reddit_style_post.json")

    async def run() -> tuple[int, list[str], list[str]]:
        await schema.upgrade(settings.database_url)
        runtime = build_runtime(settings, runs_jobs=False)
        try:
            lines = [(n, dict(item, id=f"o{n}")) for n in range(1, 31)]
            _, job_ids = await runtime.jobs.submit_batch(
                rubric_id="epitome", panel_name=None, lines=lines
            )
            broker = SlowBroker()
            dispatcher = OutboxDispatcher(broker, runtime.jobs, chunk=10)
            sending = asyncio.create_task(dispatcher.dispatch(job_ids))
            await broker.sending.wait()  # the first chunk is on its way, 20 rows wait
            drained = await OutboxDrainer(runtime.jobs, dispatcher, open_=dispatcher.sending).drain(
                grace_s=0
            )
            broker.go_on.set()
            await sending
            sent = [j for s in broker.sends for j in s]
            return drained, sent, list(dispatcher.sending)
        finally:
            await runtime.close()

    drained, sent, still_open = asyncio.run(run())
    assert drained == 0
    assert sorted(sent) == sorted(set(sent))  # each job sent once
    assert len(sent) == 30
    assert still_open == []
    assert query(settings.database_url, OUTBOX) == [(0,)]


def test_a_single_scores_row_is_cleared_behind_its_send(tmp_path: Path) -> None:
    """An interactive send (a score, maybe waited for) leaves its outbox row to be cleared
    behind (many sends' rows per statement); every row is gone once the dispatcher closes."""
    settings = load_settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'outbox.db'}",
        simulator={"url": "http://127.0.0.1:9/v1"},
    )
    item = load_sample("reddit_style_post.json")

    async def run() -> tuple[int, list[list[str]]]:
        await schema.upgrade(settings.database_url)
        runtime = build_runtime(settings, runs_jobs=False)
        try:
            scores = [
                await runtime.jobs.submit_score(
                    rubric_id="epitome", raw_item=dict(item, id=f"s{n}"), panel_name=None
                )
                for n in range(3)
            ]
            broker = FlakyBroker(fail_at=None)
            dispatcher = OutboxDispatcher(broker, runtime.jobs)
            for score in scores:
                await dispatcher.dispatch([score.id], interactive=True)
            await dispatcher.close()
            at_close = (await asyncio.to_thread(query, settings.database_url, OUTBOX))[0][0]
            return at_close, broker.sends
        finally:
            await runtime.close()

    at_close, sends = asyncio.run(run())
    assert len(sends) == 3
    assert at_close == 0
