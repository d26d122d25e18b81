"""Scores: submit one item (waiting for its result when asked) and read a score back, as the
caller may see them; the view of a scored job (also each line of a batch's results)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

from judge.domain.principal import Principal
from judge.domain.result import CallRecord, ScoreResult
from judge.domain.wire import CompletedScore, JobStatus, RubricRef
from judge.errors import ScoreNotFound
from judge.persistence import jobs as repo
from judge.persistence import listings
from judge.persistence.economy import HELD
from judge.persistence.tables import ScoreJob
from judge.services.access import check_readable
from judge.services.idempotency import IdempotencyKey, Submission
from judge.services.jobs import JobService
from judge.services.submission import Admission, Intake, Persisted, submit_and_wait

#: what ``GET /v1/scores/{id}`` shows: the result when completed, else the job's status
ScoreView = CompletedScore | JobStatus
Completed = TypeVar("Completed", bound=CompletedScore)
Pending = TypeVar("Pending", bound=JobStatus)


@dataclass
class ScoreService:
    jobs: JobService

    async def submit(
        self,
        who: Principal,
        intake: Intake,
        *,
        rubric_id: str,
        raw_item: Any,
        panel_name: str | None,
        version: str | None = None,
        wait: float | None = None,
        idempotency: IdempotencyKey | None = None,
    ) -> ScoreView:
        """Score one item for ``who``; waits up to ``wait`` seconds for the result."""

        # a runner in this process takes the job as inserted, already claimed for it
        claimed = intake.runner is not None

        async def persist(record: Submission | None, admission: Admission) -> Persisted:
            job = await self.jobs.submit_score(
                rubric_id=rubric_id,
                raw_item=raw_item,
                panel_name=panel_name,
                version=version,
                owner=who.owner,
                idempotency=record,
                claimed=claimed,
                before=admission.in_session,  # the quota, in the insert's session
            )
            return Persisted(job.id, [job.id], interactive=True, claimed=[job] if claimed else [])

        submitted = await submit_and_wait(
            intake,
            who,
            persist,
            items=1,
            wait=wait,
            resource="scores",
            idempotency=idempotency,
            replayed_jobs=lambda job_id: [job_id],  # a score's id is its job's
        )
        # the row as just stored when the job finished in this process, else read it
        job = submitted.finished.get(submitted.id) or await self.jobs.read_job(submitted.id)
        if job is None:  # only if the database lost it
            raise ScoreNotFound(submitted.id)
        return score_view(job)

    async def get(self, who: Principal, job_id: str) -> ScoreView:
        return score_view(await self._readable(who, job_id))

    async def _readable(self, who: Principal, job_id: str) -> ScoreJob:
        job = await self.jobs.read_job(job_id)
        if job is None:
            raise ScoreNotFound(job_id)
        check_readable(who, job.owner_key_id, ScoreNotFound(job_id))
        return job

    async def stored(self, who: Principal, job_id: str) -> StoredScore:
        """The item as submitted beside its full result (with every call's record), for
        the viewer's item page; a job of another key is not found."""
        job = await self._readable(who, job_id)
        result = (
            ScoreResult.model_validate_json(job.result_json)
            if job.status == repo.COMPLETED and job.result_json
            else None
        )
        async with self.jobs.database.session() as session:
            calls = await repo.job_calls(session, job.id)
            in_session = (
                await listings.session_of_batch(session, job.batch_id) if job.batch_id else None
            )
        return StoredScore(
            job_id=job.id,
            batch_id=job.batch_id,
            line=job.position,
            item=json.loads(job.item_json),
            status=job.status,
            error=job.error,
            result=result,
            calls=result.calls if result and result.calls else calls,
            session_id=in_session,
        )


@dataclass(frozen=True)
class StoredScore:
    """A scored item as stored: the item as the judges saw it and its result."""

    job_id: str
    batch_id: str | None
    line: int | None
    item: dict[str, Any]
    status: str
    error: str | None
    result: ScoreResult | None
    #: every LLM call made for it: tokens, cost, latency, cache hits
    calls: list[CallRecord]
    #: the session whose checkpoint it judges (None: not a session's)
    session_id: str | None = None


def is_final(view: ScoreView) -> bool:
    """Completed or failed for good: nothing more will happen to the score."""
    return view.status in (repo.COMPLETED, repo.FAILED)


def score_view(job: ScoreJob) -> ScoreView:
    """The public view of a job: the full result when completed, else its status."""
    return job_view(job, CompletedScore, JobStatus)


def job_view(
    job: ScoreJob, completed: type[Completed], pending: type[Pending], **more: Any
) -> Completed | Pending:
    """A job as ``completed`` (the stored result) or ``pending`` (its status), with ``more``
    fields (a batch's results add each job's ``line``)."""
    if job.status == repo.COMPLETED and job.result_json:
        data: dict[str, Any] = json.loads(job.result_json)
        data["status"] = "completed"
        return completed.model_validate(data | more)
    fields: dict[str, Any] = {
        "id": job.id,
        "item_id": job.item_id,
        # held for an economy batch's provider batches: queued, as callers see it
        "status": repo.QUEUED if job.status == HELD else job.status,
        "rubric": RubricRef(id=job.rubric_id, version=job.rubric_version, hash=job.rubric_hash),
        "panel_name": job.panel_name,
        "created_at": job.created_at.isoformat(),
    }
    if job.batch_id:
        fields["batch_id"] = job.batch_id
    if job.status == repo.FAILED:
        fields["error"] = job.error
    return pending.model_validate(fields | more)
