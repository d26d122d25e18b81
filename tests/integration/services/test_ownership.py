"""The use cases check who may read what, whatever edge calls them: a service call with another
key's principal gets NotFound (the same answer as an id that does not exist), admin and the
owner get the resource. And submissions under an ``Idempotency-Key`` replay the first one. In
process on SQLite and PostgreSQL; no job runs (nothing is dispatched to a runner)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import pytest

from judge.domain.principal import Principal
from judge.errors import (
    BatchNotFound,
    CalibrationNotFound,
    CalibrationNotReady,
    IdempotencyKeyReused,
    ItemInvalid,
    NotFound,
    ProbeNotFound,
    ScoreNotFound,
)
from judge.persistence.database import Database
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.services.idempotency import IdempotencyKey
from judge.services.submission import Intake
from judge.settings import load_settings
from tests.fixtures.sample_texts import POSTS, RESPONSES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ALICE = Principal(key_id="a" * 32, scopes=("score", "batch", "calibrate"))
BOB = Principal(key_id="b" * 32, scopes=("score", "batch", "calibrate"))
ADMIN = Principal(key_id="c" * 32, scopes=("admin",))
DIMS = ("emotional_reactions", "interpretations", "explorations")


def item(n: int) -> dict[str, Any]:
    return {"id": f"item-{n}", "seeker_post": POSTS[n % len(POSTS)], "response": RESPONSES[n]}


class Admit:
    """Quota, dispatcher and waiter of a process that admits everything and runs nothing."""

    def __init__(self) -> None:
        self.dispatched: list[str] = []

    async def check_queue(self, owner: str | None, items: int) -> None:
        return None

    def admit(self, depth: int, mine: int, items: int) -> None:
        return None

    @contextlib.asynccontextmanager
    async def waiter(self, owner: str | None) -> AsyncIterator[None]:
        yield

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        self.dispatched += job_ids

    async def wait(self, job_ids: Sequence[str], timeout: float) -> dict[str, Any]:
        return {}

    def expect(self, job_ids: Sequence[str]) -> Any:
        raise AssertionError("these submissions do not wait")

    def notify(self, job_id: str, job: Any = None) -> None:
        return None


async def _runtime(database_url: str) -> ServiceRuntime:
    settings = load_settings(database_url=database_url)
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    return build_runtime(settings, runs_jobs=False)


def _intake(runtime: ServiceRuntime, admit: Admit) -> Intake:
    return Intake(admit, admit, admit, runtime.database, max_wait_s=1, idempotency_ttl_s=3600)


async def _refused(call: Awaitable[Any], error: type[Exception]) -> str:
    with pytest.raises(error) as caught:
        await call
    return str(caught.value)


async def _scenario(runtime: ServiceRuntime) -> None:
    admit = Admit()
    intake = _intake(runtime, admit)
    score = await runtime.scores.submit(
        ALICE, intake, rubric_id="epitome", raw_item=item(0), panel_name=None
    )
    batch = await runtime.batches.submit(
        ALICE, intake, rubric_id="epitome", panel_name=None, lines=[(1, item(1))]
    )
    labelled = [{"item": item(n), "labels": {"expert": dict.fromkeys(DIMS, 1)}} for n in range(2)]
    run = await runtime.calibrations.start(
        ALICE, intake, rubric_id="epitome", panel_name=None, items=labelled
    )
    probe = await runtime.probes.start(
        ALICE, intake, rubric_id="epitome", panel_name=None, kind="verbosity", items=[item(2)]
    )
    assert len(admit.dispatched) == 1 + 1 + 2 + 2  # the probe: the item and its padded twin

    Read = Callable[[Principal, str], Awaitable[Any]]
    reads: list[tuple[Read, str, type[NotFound]]] = [
        (runtime.scores.get, score.id, ScoreNotFound),
        (runtime.batches.view, batch.id, BatchNotFound),
        (lambda who, i: runtime.batches.results(who, i, 10), batch.id, BatchNotFound),
        (runtime.calibrations.view, run.id, CalibrationNotFound),
        (runtime.probes.view, probe.id, ProbeNotFound),
    ]
    missing = "0" * 32
    for read, found, not_found in reads:
        assert await read(ALICE, found) is not None
        assert await read(ADMIN, found) is not None
        # another key's resource reads exactly like one that does not exist
        assert await _refused(read(BOB, found), not_found) == str(not_found(found))
        assert await _refused(read(ALICE, missing), not_found) == str(not_found(missing))

    # the aggregation comparison: another key's run is not found before it is not ready
    await _refused(runtime.insights.compare_aggregation(ALICE, run.id), CalibrationNotReady)
    await _refused(runtime.insights.compare_aggregation(BOB, run.id), CalibrationNotFound)
    # a plan may not read another key's batch, a canary may not watch another key's run
    plan = runtime.insights.plan(BOB, rubric_id="epitome", panel_name=None, pool_batch=batch.id)
    assert "no batch" in await _refused(plan, ItemInvalid)
    register = runtime.canaries.register(BOB, baseline_run_id=run.id, interval_s=60, name=None)
    await _refused(register, CalibrationNotFound)
    assert await runtime.canaries.listed(BOB) == []
    history = await runtime.canaries.history(BOB, "epitome")
    assert (history.calibrations, history.canaries) == ([], [])
    assert [r.id for r in (await runtime.canaries.history(ADMIN, "epitome")).calibrations] == [
        run.id
    ]


async def _idempotency(runtime: ServiceRuntime) -> None:
    admit = Admit()
    intake = _intake(runtime, admit)

    def submit(who: Principal, n: int, key: IdempotencyKey) -> Awaitable[Any]:
        return runtime.scores.submit(
            who, intake, rubric_id="epitome", raw_item=item(n), panel_name=None, idempotency=key
        )

    first = await submit(ALICE, 0, IdempotencyKey("k1", "hash-0"))
    again = await submit(ALICE, 0, IdempotencyKey("k1", "hash-0"))
    assert again.id == first.id
    assert admit.dispatched == [first.id]  # the replay neither stores nor sends anything
    await _refused(submit(ALICE, 1, IdempotencyKey("k1", "hash-1")), IdempotencyKeyReused)
    # keys are per API key: the same key of another caller is another submission
    other = await submit(BOB, 0, IdempotencyKey("k1", "hash-0"))
    assert other.id != first.id


@pytest.mark.parametrize("scenario", [_scenario, _idempotency], ids=["ownership", "idempotency"])
def test_services(
    database_url: str, clean_env: None, scenario: Callable[[ServiceRuntime], Awaitable[None]]
) -> None:
    async def run() -> None:
        runtime = await _runtime(database_url)
        try:
            await scenario(runtime)
        finally:
            await runtime.close()

    asyncio.run(run())
