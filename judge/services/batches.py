"""Batches: submit one (its valid lines become jobs, the others rejections), its progress, and
its results page by page in submission order, as the caller may see them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from judge.domain.escalations import Escalation, EscalationsView, escalated_dimensions
from judge.domain.principal import Principal
from judge.domain.result import ScoreResult
from judge.domain.wire import BatchView, CompletedLine, JobStatusLine, Rejection, RubricRef
from judge.errors import BatchNotFound, BatchTooLarge, ItemInvalid
from judge.persistence import jobs as repo
from judge.persistence.tables import ScoreJob
from judge.services.access import check_readable
from judge.services.idempotency import IdempotencyKey, Submission
from judge.services.jobs import JobService
from judge.services.scores import job_view
from judge.services.submission import Intake, Persisted, submit_and_wait

#: one line of a batch's results
ResultLine = CompletedLine | JobStatusLine


@dataclass
class BatchService:
    jobs: JobService

    async def submit(
        self,
        who: Principal,
        intake: Intake,
        *,
        rubric_id: str,
        panel_name: str | None,
        lines: Sequence[tuple[int, Any | Rejection]],
        idempotency: IdempotencyKey | None = None,
    ) -> BatchView:
        """Submit numbered lines (items, or the rejections of lines that could not be read)."""
        limit = self.jobs.settings.api.max_batch_items
        if len(lines) > limit:
            raise BatchTooLarge(limit, len(lines))
        if not lines:
            raise ItemInvalid("items", "the batch has no items")

        async def persist(record: Submission | None) -> Persisted:
            batch, job_ids = await self.jobs.submit_batch(
                rubric_id=rubric_id,
                panel_name=panel_name,
                lines=lines,
                owner=who.owner,
                idempotency=record,
            )
            return Persisted(batch.id, job_ids)

        submitted = await submit_and_wait(
            intake, who, persist, items=len(lines), resource="batches", idempotency=idempotency
        )
        return await self.view(who, submitted.id)

    async def view(self, who: Principal, batch_id: str) -> BatchView:
        """The batch's progress as ``GET /v1/batches/{id}`` shows it."""
        # on the database's read loop and pool (a poll never waits behind running jobs), in
        # one statement
        found = await self.jobs.database.read(
            lambda session: repo.batch_with_progress(session, batch_id)
        )
        if found is None:
            raise BatchNotFound(batch_id)
        batch, progress = found
        check_readable(who, batch.owner_key_id, BatchNotFound(batch_id))
        return BatchView(
            id=batch.id,
            status=progress.status,
            rubric=RubricRef(
                id=batch.rubric_id, version=batch.rubric_version, hash=batch.rubric_hash
            ),
            panel_name=batch.panel_name,
            total=progress.total,
            queued=progress.queued,
            running=progress.running,
            completed=progress.completed,
            failed=progress.failed,
            rejected=batch.rejected,
            rejections=json.loads(batch.rejections_json),
            created_at=batch.created_at.isoformat(),
            results=f"/v1/batches/{batch.id}/results",
        )

    async def results(
        self, who: Principal, batch_id: str, page: int
    ) -> AsyncIterator[list[ResultLine]]:
        """The batch's results (checked readable now, before the first page is read)."""
        await self.view(who, batch_id)
        return self._result_pages(batch_id, page)

    async def escalations(self, who: Principal, batch_id: str, page: int) -> EscalationsView:
        """The batch's items a person must see (``escalate: human``), with the conversation."""
        await self.view(who, batch_id)
        items: list[Escalation] = []
        completed = 0
        async for jobs in self._job_pages(batch_id, page):
            for job in jobs:
                if job.status != repo.COMPLETED or not job.result_json:
                    continue
                completed += 1
                result = ScoreResult.model_validate_json(job.result_json)
                if result.escalate is None:
                    continue
                items.append(
                    Escalation(
                        line=job.position,
                        job_id=job.id,
                        id=job.item_id,
                        item=json.loads(job.item_json),
                        dimensions=escalated_dimensions(result),
                    )
                )
        return EscalationsView(
            batch_id=batch_id, completed=completed, escalated=len(items), items=items
        )

    async def _result_pages(self, batch_id: str, page: int) -> AsyncIterator[list[ResultLine]]:
        """Each job's view with its ``line``, ``page`` jobs at a time."""
        async for jobs in self._job_pages(batch_id, page):
            yield [
                job_view(job, CompletedLine, JobStatusLine, line=job.position, batch_id=batch_id)
                for job in jobs
            ]

    async def _job_pages(self, batch_id: str, page: int) -> AsyncIterator[list[ScoreJob]]:
        """The batch's jobs in submission order, ``page`` at a time. A session per page,
        released before the page is yielded: a slow reader holds no database connection."""
        after = -1
        while True:
            async with self.jobs.database.session() as session:
                jobs = await repo.batch_jobs_page(session, batch_id, after=after, limit=page)
            if not jobs:
                return
            yield jobs
            after = jobs[-1].position if jobs[-1].position is not None else after + page
