"""``submit_and_wait``: quota, then persist, then dispatch, then (when asked) wait; nothing is
stored or sent when the quota refuses, and a wait is capped and holds a waiter slot. The
idempotency paths need a database: tests/integration/services/test_ownership.py."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from judge.domain.principal import Principal
from judge.errors import IdempotencyKeyInvalid
from judge.services.idempotency import IdempotencyKey, Submission
from judge.services.submission import Admission, Intake, Persisted, submit_and_wait

ALICE = Principal(key_id="a" * 32, scopes=("score",))


class Refused(Exception):
    pass


class Recorder:
    """Quota, dispatcher and waiter in one, recording each step in order."""

    def __init__(self, *, refuse: bool = False) -> None:
        self.steps: list[Any] = []
        self.refuse = refuse

    async def check_queue(self, owner: str | None, items: int) -> None:
        self.steps.append(("quota", owner, items))
        if self.refuse:
            raise Refused

    @contextlib.asynccontextmanager
    async def waiter(self, owner: str | None) -> AsyncIterator[None]:
        self.steps.append(("slot", owner))
        try:
            yield
        finally:
            self.steps.append(("slot freed", owner))

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        self.steps.append(("dispatch", list(job_ids)))

    async def wait(self, job_ids: Sequence[str], timeout: float) -> dict[str, Any]:
        self.steps.append(("wait", list(job_ids), timeout))
        return {}

    def expect(self, job_ids: Sequence[str]) -> Expected:
        self.steps.append(("expect", list(job_ids)))
        return Expected(self, list(job_ids))

    def notify(self, job_id: str, job: Any = None) -> None:
        raise AssertionError("not called by a submission")

    def intake(self) -> Intake:
        # no database: these submissions carry no Idempotency-Key
        return Intake(self, self, self, None, max_wait_s=30, idempotency_ttl_s=60)  # type: ignore[arg-type]

    def admit(self, depth: int, mine: int, items: int) -> None:
        raise AssertionError("counts are read by a persist step with a session")

    async def persist(self, record: Submission | None, admission: Admission) -> Persisted:
        await admission.check()  # as a persist step without a session of its own does
        self.steps.append(("persist", record))
        return Persisted("r" * 32, ["j1", "j2"])


class Expected:
    """A registered wait: it records its wait and its closing in the recorder's steps."""

    def __init__(self, recorder: Recorder, job_ids: list[str]) -> None:
        self.recorder, self.job_ids = recorder, job_ids

    async def wait(self, timeout: float) -> dict[str, Any]:
        self.recorder.steps.append(("wait", self.job_ids, timeout))
        self.close()
        return {}

    def close(self) -> None:
        self.recorder.steps.append(("closed", self.job_ids))


def submit(recorder: Recorder, **options: Any) -> Any:
    return asyncio.run(
        submit_and_wait(recorder.intake(), ALICE, recorder.persist, items=2, **options)
    )


def test_quota_then_persist_then_dispatch_without_a_wait() -> None:
    recorder = Recorder()
    submitted = submit(recorder)
    assert (submitted.id, submitted.replayed) == ("r" * 32, False)
    assert recorder.steps == [
        ("quota", ALICE.owner, 2),
        ("persist", None),
        ("dispatch", ["j1", "j2"]),
    ]


def test_a_wait_holds_a_slot_and_is_capped() -> None:
    recorder = Recorder()
    submit(recorder, wait=3600)
    assert recorder.steps == [
        ("slot", ALICE.owner),
        ("quota", ALICE.owner, 2),
        ("persist", None),
        ("expect", ["j1", "j2"]),  # before the dispatch: no notice can come first
        ("dispatch", ["j1", "j2"]),
        ("wait", ["j1", "j2"], 30),
        ("closed", ["j1", "j2"]),
        ("slot freed", ALICE.owner),
    ]


def test_a_refused_quota_stores_and_sends_nothing() -> None:
    recorder = Recorder(refuse=True)
    with pytest.raises(Refused):
        submit(recorder, wait=1)
    assert recorder.steps == [
        ("slot", ALICE.owner),
        ("quota", ALICE.owner, 2),
        ("slot freed", ALICE.owner),
    ]


def test_a_malformed_idempotency_key_is_refused_before_anything_is_done() -> None:
    recorder = Recorder()
    with pytest.raises(IdempotencyKeyInvalid):
        submit(recorder, resource="scores", idempotency=IdempotencyKey("two words", "h"))
    assert recorder.steps == []
