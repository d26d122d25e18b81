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
from dataclasses import dataclass, field
from typing import Protocol

from judge.domain.principal import Principal
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import ScoreJob
from judge.services.idempotency import IdempotencyKey, Submission, replayed
from judge.services.jobs import (
    ClaimedRunner,
    CompletionWaiter,
    Dispatcher,
    Expectation,
    FinishedJobs,
)


class QueueQuota(Protocol):
    """Admission of the taking process: room in the queue, and slots for waiting callers.
    Both raise when refused (the API answers 429)."""

    async def check_queue(self, owner: str | None, items: int) -> None: ...

    def admit(self, depth: int, mine: int, items: int) -> None:
        """``check_queue`` on counts already read (:func:`~judge.persistence.jobs.
        queue_counts`: queued items in all, unfinished items of the owner)."""

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
    #: the runner of this process, when jobs run here (embedded mode): a single score is
    #: inserted already claimed for it and handed over as its row (no claim, no outbox row)
    runner: ClaimedRunner | None = None


@dataclass(frozen=True)
class Persisted:
    """What a resource's ``persist`` step stored: the resource and the jobs to dispatch."""

    id: str
    job_ids: Sequence[str]
    #: a single score: dispatched in the interactive lane (see ``Dispatcher``)
    interactive: bool = False
    #: the jobs inserted already claimed for ``Intake.runner`` (then ``job_ids`` are theirs)
    claimed: Sequence[ScoreJob] = ()


@dataclass(frozen=True)
class Submitted:
    id: str
    #: an earlier submission with the same ``Idempotency-Key`` created it
    replayed: bool
    #: ``time.monotonic()`` at which the caller's wait ends (now, without one)
    until: float
    #: jobs that finished during the wait whose rows came with their notices (an in-process
    #: runner hands them over: the answer needs no second read)
    finished: FinishedJobs = field(default_factory=dict)


@dataclass(frozen=True)
class Admission:
    """The queue quota's check of one submission, run by its ``persist`` step before it
    stores anything: alone (:meth:`check`), or in the session of its insert
    (:meth:`in_session`: no session of its own; counts read in the insert's transaction
    are as soft as before, two submissions racing may both pass)."""

    quota: QueueQuota
    owner: str | None
    items: int

    async def check(self) -> None:
        await self.quota.check_queue(self.owner, self.items)

    @property
    def in_session(self) -> repo.BeforeInsert:
        def admit(depth: int, mine: int) -> None:
            self.quota.admit(depth, mine, self.items)

        return repo.counted_before(self.owner, admit)


#: stores the resource: given the idempotency record to store along and the quota's check,
#: which it runs before it stores anything
Persist = Callable[[Submission | None, Admission], Awaitable[Persisted]]


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
    """Submit ``items`` queued items owned by ``who``: ``persist`` (it is given the
    idempotency record to store along and the quota's check, which it runs first; a refusal
    raises), dispatch its jobs, and wait up to ``wait``
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
            expected: Expectation | None = None
            try:
                done = await persist(record, Admission(intake.quota, who.owner, items))
                # registered before the dispatch, so no notice can come first: the wait
                # needs no look at the database
                expected = intake.waiter.expect(done.job_ids) if timeout > 0 else None
                if done.claimed and intake.runner is not None:
                    await intake.runner.dispatch_claimed(done.claimed)
                else:
                    await intake.dispatcher.dispatch(done.job_ids, interactive=done.interactive)
            except Exception:
                if expected is not None:
                    expected.close()
                # a concurrent request with this key may have committed first: answer with
                # its resource (when none did, the failure is this request's own)
                resource_id = await _replayed(intake, record)
                if resource_id is None:
                    raise
            else:
                ours = await expected.wait(timeout) if expected is not None else {}
                return Submitted(done.id, replayed=False, until=until, finished=ours)
        theirs: FinishedJobs = {}
        if timeout > 0:
            theirs = await intake.waiter.wait(replayed_jobs(resource_id), timeout)
    return Submitted(resource_id, replayed=True, until=until, finished=theirs)


async def _replayed(intake: Intake, record: Submission | None) -> str | None:
    if record is None:
        return None
    return await replayed(intake.database, record, ttl_s=intake.idempotency_ttl_s)
