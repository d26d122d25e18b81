"""Batches: submit one (its valid lines become jobs, the others rejections), its progress, and
its results page by page in submission order, as the caller may see them."""

from __future__ import annotations

import functools
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from judge.domain.batch_summary import BatchSummary, ItemRow, digest, item_row, total_usage
from judge.domain.escalations import Escalation, EscalationsView, escalated_dimensions
from judge.domain.listing import ListFilter
from judge.domain.principal import Principal
from judge.domain.result import ScoreResult
from judge.domain.wire import (
    BatchListing,
    BatchPage,
    BatchView,
    CompletedLine,
    JobStatusLine,
    Rejection,
    RejectionPage,
    RubricRef,
)
from judge.errors import BatchNotFound, BatchTooLarge, ItemInvalid
from judge.persistence import economy as economy_repo
from judge.persistence import jobs as repo
from judge.persistence import listings
from judge.persistence.jobs import BatchProgress
from judge.persistence.tables import Batch, ScoreJob
from judge.services.access import check_readable, readable_owners
from judge.services.economy import MODES, check_economy_panel, economy_progress, hold
from judge.services.idempotency import IdempotencyKey, Submission
from judge.services.jobs import JobService
from judge.services.scores import job_view
from judge.services.submission import Admission, Intake, Persisted, submit_and_wait

#: one line of a batch's results
ResultLine = CompletedLine | JobStatusLine
#: rejections shown in the batch view itself (the rest: ``GET .../rejections``)
REJECTIONS_SHOWN = 100
#: why the queued items of a cancelled batch failed
CANCELLED = "cancelled"


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
        mode: str = "interactive",
    ) -> BatchView:
        """Submit numbered lines (items, or the rejections of lines that could not be read).

        At most ``max_batch_items`` lines, and never more than the per-key queue quota (a
        batch that no wait could admit is too large, not a 429 to retry). The lines are
        validated in a thread, off the event loop; only the valid ones count against the
        quota. ``mode="economy"``: the jobs are held for the providers' batch APIs
        (:mod:`judge.services.economy`) instead of being dispatched."""
        if mode not in MODES:
            raise ItemInvalid("mode", f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        economy = mode == economy_repo.ECONOMY
        if economy:
            check_economy_panel(self.jobs.panel(panel_name))
        api = self.jobs.settings.api
        limit = min(api.max_batch_items, api.max_queued_per_key)
        if len(lines) > limit:
            raise BatchTooLarge(limit, len(lines))
        if not lines:
            raise ItemInvalid("items", "the batch has no items")
        prepared = await anyio.to_thread.run_sync(
            functools.partial(
                self.jobs.prepare_batch,
                rubric_id=rubric_id,
                panel_name=panel_name,
                lines=lines,
                owner=who.owner,
            )
        )

        if economy:
            hold(prepared)

        async def persist(record: Submission | None, admission: Admission) -> Persisted:
            batch, job_ids = await self.jobs.store_batch(
                prepared, idempotency=record, before=admission.in_session
            )
            if economy:  # held: the economy poller releases them, nothing is dispatched now
                await self.jobs.mark_sent(job_ids)
                return Persisted(batch.id, ())
            return Persisted(batch.id, job_ids)

        submitted = await submit_and_wait(
            intake,
            who,
            persist,
            items=len(prepared.jobs),
            resource="batches",
            idempotency=idempotency,
        )
        return await self.view(who, submitted.id)

    async def _readable(self, who: Principal, batch_id: str) -> tuple[Batch, BatchProgress]:
        # apart from the jobs' pool (a poll never waits behind running jobs), in one statement
        found = repo.batch_and_progress(
            await self.jobs.database.read_row(repo.batch_with_progress_query(batch_id))
        )
        if found is None:
            raise BatchNotFound(batch_id)
        check_readable(who, found[0].owner_key_id, BatchNotFound(batch_id))
        return found

    async def rejections(
        self, who: Principal, batch_id: str, *, offset: int, limit: int
    ) -> RejectionPage:
        """``limit`` of the batch's rejected lines from ``offset``, by line number."""
        batch, _ = await self._readable(who, batch_id)
        every = json.loads(batch.rejections_json)
        more = offset + limit < len(every)
        return RejectionPage(
            batch_id=batch.id,
            offset=offset,
            limit=limit,
            total=len(every),
            next_offset=offset + limit if more else None,
            rejections=every[offset : offset + limit],
        )

    async def view(self, who: Principal, batch_id: str) -> BatchView:
        """The batch's progress as ``GET /v1/batches/{id}`` shows it, with its first
        rejections (a link to the rest)."""
        batch, progress = await self._readable(who, batch_id)
        rejections = json.loads(batch.rejections_json)
        more = len(rejections) > REJECTIONS_SHOWN
        counts = _counts(batch, progress)
        economy = None
        if batch.mode == economy_repo.ECONOMY:
            economy = await economy_progress(self.jobs, batch.id)
            counts["queued"] += economy.held  # waiting for their provider batches
        return BatchView(
            **counts,
            economy=economy,
            rejections=rejections[:REJECTIONS_SHOWN],
            rejections_next=(
                f"/v1/batches/{batch.id}/rejections?offset={REJECTIONS_SHOWN}" if more else None
            ),
            results=f"/v1/batches/{batch.id}/results",
            cost_usd=progress.cost_usd,
        )

    async def listed(self, who: Principal, where: ListFilter) -> BatchPage:
        """The plain batches ``who`` may read (admin: all), newest first, one page."""
        async with self.jobs.database.session() as session:
            found = await listings.batches_page(session, owners=readable_owners(who), where=where)
        found, next_offset = where.paged(found)
        return BatchPage(
            offset=where.offset,
            limit=where.limit,
            next_offset=next_offset,
            batches=[self._listing(batch, progress) for batch, progress in found],
        )

    def _listing(self, batch: Batch, progress: BatchProgress) -> BatchListing:
        simulated = self.jobs.simulated_panel(batch.panel_name)
        return BatchListing(**_counts(batch, progress), simulated=simulated)

    async def cancel(self, who: Principal, batch_id: str) -> BatchView:
        """Cancel what of the batch has not started: its queued items fail with the error
        ``cancelled``; running items finish, completed ones are kept. Idempotent."""
        batch, _ = await self._readable(who, batch_id)
        if batch.kind != "batch":  # a calibration's or probe's items: stopped with the run
            raise BatchNotFound(batch_id)
        async with self.jobs.database.session() as session:
            await repo.fail_queued(session, batch_id, CANCELLED)
            if batch.mode == economy_repo.ECONOMY:
                await economy_repo.fail_held(session, batch_id, CANCELLED)
        return await self.view(who, batch_id)

    async def rows(self, who: Principal, batch_id: str, page: int) -> list[ItemRow]:
        """One row per item of the batch, in submission order."""
        await self.view(who, batch_id)
        return [
            item_row(
                line=job.position,
                job_id=job.id,
                item_id=job.item_id,
                status=job.status,
                result_json=job.result_json,
            )
            async for jobs in self._job_pages(batch_id, page)
            for job in jobs
        ]

    async def summary(self, who: Principal, batch_id: str, page: int) -> BatchSummary:
        """Per dimension: the score distribution, flag shares and top reasons."""
        summary, _ = await self.overview(who, batch_id, page)
        return summary

    async def overview(
        self, who: Principal, batch_id: str, page: int
    ) -> tuple[BatchSummary, list[ItemRow]]:
        """The batch's summary and the item rows it was computed from."""
        view = await self.view(who, batch_id)
        rows = await self.rows(who, batch_id, page)
        summary = BatchSummary(
            batch_id=batch_id,
            status=view.status,
            rubric=view.rubric.model_dump(),
            panel_name=view.panel_name,
            total=view.total,
            completed=view.completed,
            failed=view.failed,
            simulated=any(r.simulated for r in rows),
            dimensions=digest(rows),
            usage=total_usage(rows),
        )
        return summary, rows

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


def progress_fields(batch: Batch, progress: BatchProgress) -> dict[str, Any]:
    """A batch's status, rubric, panel and job counts: what a batch's view and listing and a
    session's listing show alike."""
    return {
        "status": progress.status,
        "rubric": RubricRef(
            id=batch.rubric_id, version=batch.rubric_version, hash=batch.rubric_hash
        ),
        "panel_name": batch.panel_name,
        "total": progress.total,
        "queued": progress.queued,
        "running": progress.running,
        "completed": progress.completed,
        "failed": progress.failed,
    }


def _counts(batch: Batch, progress: BatchProgress) -> dict[str, Any]:
    """What the view and the listing of a batch show alike."""
    return {
        "id": batch.id,
        **progress_fields(batch, progress),
        "rejected": batch.rejected,
        "created_at": batch.created_at.isoformat(),
        "mode": batch.mode,
    }
