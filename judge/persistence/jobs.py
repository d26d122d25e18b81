"""Queries for score jobs, batches and judgments. Jobs move queued -> running -> completed |
failed through guarded updates, so a redelivered task can never score an item twice."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Row,
    Select,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import SQLModel, col

from judge.domain.result import CallRecord
from judge.persistence.database import Database, DatabaseUnavailable, is_unavailable
from judge.persistence.tables import Batch, JobOutbox, Judgment, ScoreJob, utcnow

log = logging.getLogger(__name__)

QUEUED, RUNNING, COMPLETED, FAILED = "queued", "running", "completed", "failed"
#: a job of an economy batch waiting for its provider batch (judge.persistence.economy): not
#: claimable, not swept, but unfinished for the owner's queue quota
HELD = "provider"


@dataclass(frozen=True)
class BatchProgress:
    total: int
    queued: int
    running: int
    completed: int
    failed: int
    #: what the LLM calls of the finished items cost (their judgments are written at the end)
    cost_usd: float = 0.0

    @property
    def done(self) -> bool:
        return self.completed + self.failed >= self.total

    @property
    def status(self) -> str:
        if self.done:
            return COMPLETED
        return RUNNING if self.running or self.completed or self.failed else QUEUED


#: rows added and flushed at a time by one insert (all in its one transaction)
FLUSH_CHUNK = 1_000


#: a look at the database in the insert's own session before its rows are added (the queue
#: quota's counts); what it raises is raised as it is (it is not a row's fault)
BeforeInsert = Callable[[AsyncSession], Awaitable[None]]


async def _try_insert(
    database: Database,
    parents: Sequence[SQLModel],
    rows: Sequence[SQLModel],
    *,
    commit: bool,
    outbox: bool = True,
    before: BeforeInsert | None = None,
) -> BaseException | None:
    """Insert ``parents`` then ``rows`` in one transaction; the row error, if any (the
    transaction is then rolled back). Without ``commit`` it is a probe: always rolled back.
    Without ``outbox`` the jobs get no outbox row (see :func:`insert_skipping_refused`)."""
    async with database.session() as session:
        if before is not None:
            await before(session)
        try:
            session.add_all(list(parents))
            await session.flush()
            # the outbox, in the same transaction: a crash before the jobs are sent leaves
            # them there for the drainer (services/outbox.py)
            boxed = [JobOutbox(job_id=r.id) for r in rows if isinstance(r, ScoreJob)]
            for part in (rows, boxed if commit and outbox else []):
                # a flush per chunk: preparing a chunk's rows holds the event loop only briefly
                for start in range(0, len(part), FLUSH_CHUNK):
                    session.add_all(list(part[start : start + FLUSH_CHUNK]))
                    await session.flush()
            if commit:
                await session.commit()
            else:
                await session.rollback()
        except Exception as exc:
            await session.rollback()
            if is_unavailable(exc):
                raise DatabaseUnavailable(f"the database failed during an insert: {exc}") from exc
            return exc
    return None


def refusal_reason(exc: BaseException) -> str:
    """A reason code for a value the database refused (its message is for the log only)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < 8:
        chain.append(current)
        current = current.__cause__ or current.__context__ or getattr(current, "orig", None)
    text = " ".join(f"{type(e).__name__} {e}" for e in chain).lower()
    if any(isinstance(e, UnicodeError) for e in chain) or "surrogates not allowed" in text:
        return "unencodable_text"
    if "0x00" in text or "characternotinrepertoire" in text or "nul character" in text:
        return "nul_character"
    if "too long" in text or "stringdatarighttruncation" in text:
        return "value_too_long"
    return "value_refused"


async def _refused(
    database: Database, parents: Sequence[SQLModel], rows: Sequence[SQLModel], offset: int = 0
) -> dict[int, str]:
    """Indexes of the rows the database refuses, with the error class, by bisection."""
    error = await _try_insert(database, parents, rows, commit=False)
    if error is None:
        return {}
    if len(rows) == 1:
        return {offset: refusal_reason(error)}
    half = len(rows) // 2
    found = await _refused(database, parents, rows[:half], offset)
    return found | await _refused(database, parents, rows[half:], offset + half)


async def insert_skipping_refused(
    database: Database,
    parents: Sequence[SQLModel],
    rows: Sequence[SQLModel],
    *,
    before_commit: Callable[[dict[int, str]], None] | None = None,
    outbox: bool = True,
    before: BeforeInsert | None = None,
) -> dict[int, str]:
    """Insert ``parents`` and ``rows``; a row the database refuses (a value it cannot hold)
    is left out instead of failing the others. Returns {row index: error class} of the left
    out rows; ``before_commit`` sees them first (e.g. to count them on a parent row).
    ``outbox=False``: no outbox rows (jobs inserted already claimed by the process that runs
    them: :func:`claimed_at_insert`). ``before`` runs first, in the same session.

    One transaction in the normal case. When it fails, the culprits are found by bisection in
    rolled-back probes, then the rest is inserted in one transaction. The database's message is
    logged, never returned. A lost database raises :class:`DatabaseUnavailable`.
    """
    error = await _try_insert(database, parents, rows, commit=True, outbox=outbox, before=before)
    if error is None:
        return {}
    refused = await _refused(database, parents, rows)
    if not refused:
        raise error  # the parents themselves are refused: not a row's fault
    log.warning(
        "the database refused %d of %d rows (%s), left out; the first error: %s",
        len(refused),
        len(rows),
        ", ".join(f"row {i}: {kind}" for i, kind in sorted(refused.items())),
        error,
    )
    if before_commit is not None:
        before_commit(refused)
    kept = [row for i, row in enumerate(rows) if i not in refused]
    error = await _try_insert(database, parents, kept, commit=True, outbox=outbox)
    if error is not None:
        raise error
    return refused


async def get_job(session: AsyncSession, job_id: str) -> ScoreJob | None:
    return await session.get(ScoreJob, job_id)


def job_query(job_id: str) -> Select[Any]:
    """The job ``job_id`` (for :meth:`Database.read_row`)."""
    return select(ScoreJob).where(col(ScoreJob.id) == job_id)


async def get_batch(session: AsyncSession, batch_id: str) -> Batch | None:
    return await session.get(Batch, batch_id)


CLAIMED, BUSY, EXHAUSTED = "claimed", "busy", "exhausted"
#: a job's error once its claims ran out (each one a run that crashed or was lost)
TOO_MANY_ATTEMPTS = (
    "too_many_attempts: {n} runs of this item were lost or crashed (e.g. a worker died on it); "
    "it is not retried again"
)


@dataclass(frozen=True)
class Claim:
    """What claiming a job found: :data:`CLAIMED`, :data:`BUSY` or :data:`EXHAUSTED`, and the
    job as the claim left it (None when BUSY)."""

    outcome: str
    job: ScoreJob | None


def _column(name: str) -> Any:
    return ScoreJob.__table__.c[name]  # type: ignore[attr-defined]


def _param(name: str, typed_as: str) -> Any:
    """A bound parameter typed as column ``typed_as`` (a bare datetime parameter would bind
    without its time zone, which asyncpg refuses)."""
    return bindparam(name, type_=_column(typed_as).type)


@functools.cache
def _claim_statement(max_attempts: int) -> Any:
    """The claim, built once per cap and run with ``job_ids`` (any number), ``now`` and
    ``until``: building and cache-keying its six CASEs on every claim was about 5 % of a
    worker's CPU (py-spy)."""
    now, until = _param("now", "started_at"), _param("until", "lease_until")
    status, attempts = _column("status"), _column("attempts")
    fresh = attempts < max_attempts

    def either(claimed: Any, exhausted: Any) -> Any:
        return case((fresh, claimed), else_=exhausted)

    claimable = and_(
        _column("id").in_(bindparam("job_ids", expanding=True)),
        or_(status == QUEUED, and_(status == RUNNING, _column("lease_until") < now)),
    )
    too_many = literal(TOO_MANY_ATTEMPTS.format(n=max_attempts), _column("error").type)
    return (
        update(ScoreJob)
        .where(claimable)
        .values(
            status=either(literal(RUNNING), literal(FAILED)),
            attempts=either(attempts + 1, attempts),
            started_at=either(now, _column("started_at")),
            lease_until=either(until, null()),
            error=either(_column("error"), too_many),
            finished_at=either(_column("finished_at"), now),
        )
        .returning(ScoreJob)
        .execution_options(synchronize_session=False)
    )


def claimed_at_insert(job: ScoreJob, *, lease_s: float) -> ScoreJob:
    """``job``, not yet stored, as :func:`claim_jobs` would leave it claimed (running, first
    attempt, under a lease): inserted so, it needs no claim by the process that runs it. If
    that process dies, the job is a running one whose lease lapses, found and redone like any
    crashed run (the embedded runner's start, the sweeper)."""
    now = utcnow()
    job.status, job.attempts = RUNNING, 1
    job.started_at, job.lease_until = now, now + timedelta(seconds=lease_s)
    return job


async def claim_jobs(
    session: AsyncSession, job_ids: Sequence[str], *, lease_s: float, max_attempts: int
) -> dict[str, Claim]:
    """Take jobs for running, and load them, in one statement (UPDATE ... RETURNING), each
    only if it is queued, or running under an expired lease; then commit.

    Per job id: :data:`CLAIMED`; :data:`BUSY` (finished, or someone else's lease holds); or
    :data:`EXHAUSTED`: it was claimed ``max_attempts`` times already, so the same statement
    fails it (a poison item that kills its worker is not redelivered forever)."""
    now = utcnow()
    params = {"job_ids": list(job_ids), "now": now, "until": now + timedelta(seconds=lease_s)}
    found = (await session.scalars(_claim_statement(max_attempts), params)).all()
    await session.commit()
    claims = {job_id: Claim(BUSY, None) for job_id in job_ids}
    for job in found:
        claims[job.id] = Claim(CLAIMED if job.status == RUNNING else EXHAUSTED, job)
    return claims


async def claim_job(
    session: AsyncSession, job_id: str, *, lease_s: float, max_attempts: int
) -> Claim:
    """:func:`claim_jobs` for one job."""
    claims = await claim_jobs(session, [job_id], lease_s=lease_s, max_attempts=max_attempts)
    return claims[job_id]


async def renew_lease(session: AsyncSession, job_id: str, *, lease_s: float) -> None:
    await session.execute(
        update(ScoreJob)
        .where(col(ScoreJob.id) == job_id, col(ScoreJob.status) == RUNNING)
        .values(lease_until=utcnow() + timedelta(seconds=lease_s))
    )
    await session.commit()


async def keep_claim(session: AsyncSession, job: ScoreJob, *, lease_s: float) -> bool:
    """Renew the lease of ``job``'s claim as this process holds it: only if that claim still
    holds (running, and no claim since: each claim adds an attempt). Updates ``job``."""
    until = utcnow() + timedelta(seconds=lease_s)
    result = await session.execute(
        update(ScoreJob)
        .where(
            col(ScoreJob.id) == job.id,
            col(ScoreJob.status) == RUNNING,
            col(ScoreJob.attempts) == job.attempts,
        )
        .values(lease_until=until)
        .execution_options(synchronize_session=False)
    )
    await session.commit()
    kept = bool(getattr(result, "rowcount", 0))
    if kept:
        job.lease_until = until
    return kept


def _judgment_rows(
    job_id: str, calls: Sequence[CallRecord], ratings: dict[str, Any]
) -> list[dict[str, Any]]:
    now = utcnow()
    return [
        {
            "job_id": job_id,
            "model": call.requested_model,
            "resolved_model": call.resolved_model,
            "params_json": json.dumps(call.params, sort_keys=True),
            "prompt_hash": call.prompt_hash,
            "purpose": call.purpose,
            "outcome": call.outcome,
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "cost_usd": call.cost_usd,
            "latency_ms": call.latency_ms,
            "attempts": call.attempts,
            "cached": call.cached,
            "cached_prompt_tokens": call.cached_prompt_tokens,
            "cache_write_tokens": call.cache_write_tokens,
            "raw_reply": call.raw_reply,
            "ratings_json": json.dumps(ratings.get(call.requested_model, {}), default=str),
            "created_at": now,
        }
        for call in calls
    ]


async def job_calls(session: AsyncSession, job_id: str) -> list[CallRecord]:
    """The LLM calls made for a job, in the order they were stored (the audit trail)."""
    rows = await session.execute(
        select(Judgment).where(col(Judgment.job_id) == job_id).order_by(col(Judgment.id))
    )
    return [
        CallRecord(
            requested_model=row.model,
            resolved_model=row.resolved_model,
            params=json.loads(row.params_json),
            prompt_hash=row.prompt_hash,
            purpose=row.purpose,
            prompt_tokens=row.prompt_tokens,
            completion_tokens=row.completion_tokens,
            cost_usd=row.cost_usd,
            latency_ms=row.latency_ms,
            attempts=row.attempts,
            cached=row.cached,
            outcome=row.outcome,
            cached_prompt_tokens=row.cached_prompt_tokens,
            cache_write_tokens=row.cache_write_tokens,
        )
        for row in rows.scalars().all()
    ]


@dataclass(frozen=True)
class Finished:
    """A scored job to store: its result and every LLM call made for it."""

    job_id: str
    result_json: str
    calls: Sequence[CallRecord]
    ratings_by_model: dict[str, Any]


#: statements built once, like the claim (run with many jobs' parameters at a time)
_COMPLETE = (
    update(ScoreJob.__table__)  # type: ignore[attr-defined]
    .where(_column("id").in_(bindparam("job_ids", expanding=True)), _column("status") == RUNNING)
    .values(status=COMPLETED, finished_at=_param("finished", "finished_at"), lease_until=None)
    .returning(_column("id"))
)
_RESULT = (
    update(ScoreJob.__table__)  # type: ignore[attr-defined]
    .where(_column("id") == bindparam("job"))
    .values(result_json=_param("result", "result_json"))
)
#: a round of one job (a single score waited for): its result in the guarded update itself
_COMPLETE_ONE = (
    update(ScoreJob.__table__)  # type: ignore[attr-defined]
    .where(_column("id") == bindparam("job"), _column("status") == RUNNING)
    .values(
        status=COMPLETED,
        finished_at=_param("finished", "finished_at"),
        lease_until=None,
        result_json=_param("result", "result_json"),
    )
    .returning(_column("id"))
)
_JUDGMENTS = insert(Judgment.__table__)  # type: ignore[attr-defined]


async def finish_jobs(session: AsyncSession, finished: Sequence[Finished]) -> set[str]:
    """Store the results and every call of many jobs in one transaction: a guarded update
    (running -> completed) of them all, then each result and the calls, as two executemany
    statements compiled once (a lone job: its result in the guarded update). Returns the
    jobs this finished (not one already finished)."""
    if not finished:
        return set()
    if len(finished) == 1:  # one statement fewer
        one = finished[0]
        params = {"job": one.job_id, "result": one.result_json, "finished": utcnow()}
        mine = set((await session.execute(_COMPLETE_ONE, params)).scalars().all())
    else:
        ids = [f.job_id for f in finished]
        completed = await session.execute(_COMPLETE, {"job_ids": ids, "finished": utcnow()})
        mine = set(completed.scalars().all())
    if not mine:
        await session.rollback()
        return mine
    ours = [f for f in finished if f.job_id in mine]
    if len(finished) > 1:
        results = [{"job": f.job_id, "result": f.result_json} for f in ours]
        await session.execute(_RESULT, results)
    # No earlier judgments can exist: they are only ever written here, in the transaction
    # that moves the job from running to completed, and a completed job never runs again.
    rows = [r for f in ours for r in _judgment_rows(f.job_id, f.calls, f.ratings_by_model)]
    if rows:
        await session.execute(_JUDGMENTS, rows)
    await session.commit()
    return mine


async def finish_job(
    session: AsyncSession,
    job_id: str,
    *,
    result_json: str,
    calls: Sequence[CallRecord],
    ratings_by_model: dict[str, Any],
) -> bool:
    """:func:`finish_jobs` for one job; False if it was already finished."""
    done = await finish_jobs(session, [Finished(job_id, result_json, calls, ratings_by_model)])
    return job_id in done


async def release_jobs(session: AsyncSession, job_ids: Sequence[str]) -> None:
    """Return running jobs to the queue (their runs raised); a retry can claim them at once."""
    await session.execute(
        update(ScoreJob)
        .where(col(ScoreJob.id).in_(list(job_ids)), col(ScoreJob.status) == RUNNING)
        .values(status=QUEUED, lease_until=None)
    )
    await session.commit()


async def fail_job(session: AsyncSession, job_id: str, error: str) -> None:
    await session.execute(
        update(ScoreJob)
        .where(col(ScoreJob.id) == job_id, col(ScoreJob.status).in_([QUEUED, RUNNING]))
        .values(status=FAILED, error=error, finished_at=utcnow(), lease_until=None)
    )
    await session.commit()


async def fail_queued(session: AsyncSession, batch_id: str, error: str) -> int:
    """Fail every still-queued job of a batch (a run stopped); returns how many."""
    result = await session.execute(
        update(ScoreJob)
        .where(col(ScoreJob.batch_id) == batch_id, col(ScoreJob.status) == QUEUED)
        .values(status=FAILED, error=error, finished_at=utcnow(), lease_until=None)
    )
    await session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


async def batch_progress(session: AsyncSession, batch: Batch) -> BatchProgress:
    rows = await session.execute(
        select(col(ScoreJob.status), func.count())
        .where(col(ScoreJob.batch_id) == batch.id)
        .group_by(col(ScoreJob.status))
    )
    counts: dict[str, int] = dict(rows.all())
    return BatchProgress(
        total=batch.total,
        queued=counts.get(QUEUED, 0),
        running=counts.get(RUNNING, 0),
        completed=counts.get(COMPLETED, 0),
        failed=counts.get(FAILED, 0),
    )


def _count_of(status: str) -> Any:
    return (
        select(func.count())
        .where(col(ScoreJob.batch_id) == col(Batch.id), col(ScoreJob.status) == status)
        .correlate(Batch)
        .scalar_subquery()
    )


def _cost_so_far() -> Any:
    return (
        select(func.coalesce(func.sum(col(Judgment.cost_usd)), 0.0))
        .join(ScoreJob, col(Judgment.job_id) == col(ScoreJob.id))
        .where(col(ScoreJob.batch_id) == col(Batch.id))
        .correlate(Batch)
        .scalar_subquery()
    )


def batch_with_progress_query(batch_id: str) -> Select[Any]:
    """A batch, its progress and its cost so far in one statement (one round trip for a
    status poll); :func:`batch_and_progress` reads its row."""
    statuses = (QUEUED, RUNNING, COMPLETED, FAILED)
    return select(Batch, *(_count_of(s) for s in statuses), _cost_so_far()).where(
        col(Batch.id) == batch_id
    )


def batch_and_progress(row: Row[Any] | None) -> tuple[Batch, BatchProgress] | None:
    """The batch and its progress from a row of :func:`batch_with_progress_query`."""
    if row is None:
        return None
    batch, queued, running, completed, failed, cost = tuple(row)
    return batch, BatchProgress(batch.total, queued, running, completed, failed, float(cost))


async def batch_with_progress(
    session: AsyncSession, batch_id: str
) -> tuple[Batch, BatchProgress] | None:
    """A batch, its progress and its cost so far, read in ``session``."""
    result = await session.execute(batch_with_progress_query(batch_id))
    return batch_and_progress(result.one_or_none())


async def batch_jobs_page(
    session: AsyncSession, batch_id: str, *, after: int, limit: int
) -> list[ScoreJob]:
    """Up to ``limit`` jobs of a batch after position ``after``, in submission order."""
    result = await session.execute(
        select(ScoreJob)
        .where(col(ScoreJob.batch_id) == batch_id, col(ScoreJob.position) > after)
        .order_by(col(ScoreJob.position))
        .limit(limit)
    )
    return list(result.scalars().all())


async def iter_batch_jobs(
    session: AsyncSession, batch_id: str, *, page: int = 500
) -> AsyncIterator[ScoreJob]:
    """Jobs of a batch in submission order, fetched page by page."""
    last = -1
    while True:
        jobs = await batch_jobs_page(session, batch_id, after=last, limit=page)
        if not jobs:
            return
        for job in jobs:
            yield job
        last = jobs[-1].position if jobs[-1].position is not None else last + page


async def stale_jobs(
    session: AsyncSession,
    *,
    queued_before: datetime | None,
    resent_before: datetime | None = None,
    limit: int = 1000,
) -> list[str]:
    """Running jobs past their lease (when ``resent_before`` is given, only those not sent
    again since then: a re-sent job may wait behind a long queue, and re-sending it on every
    sweep would flood the queue) and, when ``queued_before`` is given, jobs queued since
    before it (their message may be lost)."""
    now = utcnow()
    expired = and_(col(ScoreJob.status) == RUNNING, col(ScoreJob.lease_until) < now)
    if resent_before is not None:
        expired = and_(expired, col(ScoreJob.enqueued_at) < resent_before)
    condition = expired
    if queued_before is not None:
        waiting = and_(col(ScoreJob.status) == QUEUED, col(ScoreJob.enqueued_at) < queued_before)
        condition = or_(expired, waiting)
    result = await session.execute(select(col(ScoreJob.id)).where(condition).limit(limit))
    return list(result.scalars().all())


async def unfinished_jobs(session: AsyncSession, *, expire_leases: bool) -> list[str]:
    if expire_leases:
        await session.execute(
            update(ScoreJob).where(col(ScoreJob.status) == RUNNING).values(lease_until=utcnow())
        )
        await session.commit()
    result = await session.execute(
        select(col(ScoreJob.id))
        .where(col(ScoreJob.status).in_([QUEUED, RUNNING]))
        .order_by(col(ScoreJob.created_at), col(ScoreJob.position))
    )
    return list(result.scalars().all())


async def unfinished_among(session: AsyncSession, job_ids: Sequence[str]) -> set[str]:
    """Those of ``job_ids`` that are queued or running (a missing job is not: nothing more
    will happen to it)."""
    result = await session.execute(
        select(col(ScoreJob.id)).where(
            col(ScoreJob.id).in_(list(job_ids)), col(ScoreJob.status).in_([QUEUED, RUNNING])
        )
    )
    return set(result.scalars().all())


async def queue_counts(session: AsyncSession, owner: str | None) -> tuple[int, int]:
    """(queued jobs in all, queued, running and held jobs of one owner; None: those created
    without a key), in one statement over the unfinished jobs alone (the status index): the
    API asks for both before every submission."""
    owned = (
        col(ScoreJob.owner_key_id).is_(None)
        if owner is None
        else col(ScoreJob.owner_key_id) == owner
    )
    result = await session.execute(
        select(
            func.count().filter(col(ScoreJob.status) == QUEUED),
            func.count().filter(owned),
        )
        .select_from(ScoreJob)
        .where(col(ScoreJob.status).in_([QUEUED, RUNNING, HELD]))
    )
    queued, mine = result.one()
    return int(queued), int(mine)


def counted_before(owner: str | None, check: Callable[[int, int], None]) -> BeforeInsert:
    """A :data:`BeforeInsert` that reads :func:`queue_counts` and gives them to ``check``
    (which raises to refuse the insert)."""

    async def before(session: AsyncSession) -> None:
        check(*await queue_counts(session, owner))

    return before


async def count_queued(session: AsyncSession) -> int:
    result = await session.execute(
        select(func.count()).select_from(ScoreJob).where(col(ScoreJob.status) == QUEUED)
    )
    return int(result.scalar_one())


async def outbox_pending(session: AsyncSession, *, before: datetime, limit: int) -> list[str]:
    """Job ids of outbox rows written before ``before`` (their request did not send them)."""
    result = await session.execute(
        select(col(JobOutbox.job_id))
        .where(col(JobOutbox.created_at) < before)
        .order_by(col(JobOutbox.created_at))
        .limit(limit)
    )
    return list(result.scalars().all())


async def outbox_sent(session: AsyncSession, job_ids: Sequence[str]) -> None:
    for start in range(0, len(job_ids), 500):
        chunk = list(job_ids[start : start + 500])
        await session.execute(delete(JobOutbox).where(col(JobOutbox.job_id).in_(chunk)))
    await session.commit()


async def mark_enqueued(session: AsyncSession, job_ids: Sequence[str]) -> None:
    if not job_ids:
        return
    await session.execute(
        update(ScoreJob).where(col(ScoreJob.id).in_(list(job_ids))).values(enqueued_at=utcnow())
    )
    await session.commit()
