"""Submitting work: quota -> persist -> dispatch -> optionally wait, the one sequence behind
every resource that queues jobs (scores, batches, calibrations, probes).

The quota, the dispatcher and the completion waiter belong to the process that takes the
submission (the API) and come in as an :class:`Intake`; the caller's principal owns what is
created. With an ``Idempotency-Key`` a retry of the same request returns what the first one
created instead of creating it again (recorded in the same transaction as the resource).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from judge.domain.principal import Principal
from judge.persistence.database import Database
from judge.services.idempotency import IdempotencyKey, Submission, replayed
from judge.services.jobs import CompletionWaiter, Dispatcher


class QueueQuota(Protocol):
    """Admission of the taking process: room in the queue, and slots for waiting callers.
    Both raise when refused (the API answers 429)."""

    async def check_queue(self, owner: str | None, items: int) -> None: ...

    def waiter(self, owner: str | None) -> AbstractAsyncContextManager[None]: ...


@dataclass(frozen=True)
class Intake:
    """What the submitting process brings to a submission."""

    quota: QueueQuota
    dispatcher: Dispatcher
    waiter: CompletionWaiter
    database: Database
    #: the longest a caller may wait for its jobs in one request
    max_wait_s: float
    #: how long an ``Idempotency-Key`` is remembered
    idempotency_ttl_s: float


@dataclass(frozen=True)
class Persisted:
    """What a resource's ``persist`` step stored: the resource and the jobs to dispatch."""

    id: str
    job_ids: Sequence[str]
    #: a single score: dispatched in the interactive lane (see ``Dispatcher``)
    interactive: bool = False


@dataclass(frozen=True)
class Submitted:
    id: str
    #: an earlier submission with the same ``Idempotency-Key`` created it
    replayed: bool
    #: ``time.monotonic()`` at which the caller's wait ends (now, without one)
    until: float


Persist = Callable[[Submission | None], Awaitable[Persisted]]


def _no_jobs(_resource_id: str) -> Sequence[str]:
    return ()


async def submit_and_wait(
    intake: Intake,
    who: Principal,
    persist: Persist,
    *,
    items: int,
    wait: float | None = None,
    resource: str = "",
    idempotency: IdempotencyKey | None = None,
    replayed_jobs: Callable[[str], Sequence[str]] = _no_jobs,
) -> Submitted:
    """Submit ``items`` queued items owned by ``who``: check the quota, ``persist`` (it is
    given the idempotency record to store along), dispatch its jobs, and wait up to ``wait``
    seconds (capped) for them to finish.

    ``resource`` names what is created (``scores``...), for the idempotency record;
    ``replayed_jobs`` gives the jobs to wait for when an earlier submission is replayed.
    """
    timeout = min(wait or 0.0, intake.max_wait_s)
    until = time.monotonic() + timeout
    slot = intake.quota.waiter(who.owner) if timeout > 0 else contextlib.nullcontext()
    async with slot:
        record = None if idempotency is None else idempotency.submission(who.owner, resource)
        resource_id = await _replayed(intake, record)
        if resource_id is None:
            try:
                await intake.quota.check_queue(who.owner, items)
                done = await persist(record)
                await intake.dispatcher.dispatch(done.job_ids, interactive=done.interactive)
            except Exception:
                # a concurrent request with this key may have committed first: answer with
                # its resource (when none did, the failure is this request's own)
                resource_id = await _replayed(intake, record)
                if resource_id is None:
                    raise
            else:
                if timeout > 0:
                    await intake.waiter.wait(done.job_ids, timeout)
                return Submitted(done.id, replayed=False, until=until)
        if timeout > 0:
            await intake.waiter.wait(replayed_jobs(resource_id), timeout)
    return Submitted(resource_id, replayed=True, until=until)


async def _replayed(intake: Intake, record: Submission | None) -> str | None:
    if record is None:
        return None
    return await replayed(intake.database, record, ttl_s=intake.idempotency_ttl_s)
