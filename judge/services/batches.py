"""What the API shows of a batch: its progress view and its results, page by page, in
submission order. Reads only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.services.jobs import job_view


@dataclass(frozen=True)
class FoundBatch:
    """A batch's public view, with its owner for the caller's access check."""

    owner_key_id: str | None  # whose it is (for the caller's access check), not shown
    view: dict[str, Any]


@dataclass
class BatchReader:
    database: Database

    async def view(self, batch_id: str) -> FoundBatch | None:
        """The batch's progress as ``GET /v1/batches/{id}`` shows it; None if unknown."""
        # on the database's read loop and pool (a poll never waits behind running jobs), in
        # one statement
        found = await self.database.read(
            lambda session: repo.batch_with_progress(session, batch_id)
        )
        if found is None:
            return None
        batch, progress = found
        return FoundBatch(
            owner_key_id=batch.owner_key_id,
            view={
                "id": batch.id,
                "status": progress.status,
                "rubric": {
                    "id": batch.rubric_id,
                    "version": batch.rubric_version,
                    "hash": batch.rubric_hash,
                },
                "panel_name": batch.panel_name,
                "total": progress.total,
                "queued": progress.queued,
                "running": progress.running,
                "completed": progress.completed,
                "failed": progress.failed,
                "rejected": batch.rejected,
                "rejections": json.loads(batch.rejections_json),
                "created_at": batch.created_at.isoformat(),
                "results": f"/v1/batches/{batch.id}/results",
            },
        )

    async def result_pages(self, batch_id: str, page: int) -> AsyncIterator[list[dict[str, Any]]]:
        """Each job's view (with its ``line`` and ``batch_id``), ``page`` jobs at a time.
        A session per page, released before the page is yielded: a slow reader holds no
        database connection."""
        after = -1
        while True:
            async with self.database.session() as session:
                jobs = await repo.batch_jobs_page(session, batch_id, after=after, limit=page)
            if not jobs:
                return
            views = []
            for job in jobs:
                view = job_view(job)
                view["line"] = job.position
                view["batch_id"] = batch_id
                views.append(view)
            yield views
            after = jobs[-1].position if jobs[-1].position is not None else after + page
