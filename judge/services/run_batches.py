"""What calibration runs and probe runs share about the batch that carries their jobs: knowing,
after each job, whether the batch of their kind is done, and its progress for a view."""

from __future__ import annotations

from typing import Any

from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import ScoreJob

#: batch kinds remembered before the memory is cleared
_MAX_REMEMBERED = 10_000


class BatchesOfKind:
    """Follows the batches of one kind (``calibration``, ``probe``). The kind of every batch a
    job was seen for is remembered, so a job of an ordinary batch costs no query."""

    def __init__(self, database: Database, kind: str) -> None:
        self.database = database
        self.kind = kind
        self._kinds: dict[str, str] = {}

    async def done_after(self, job: ScoreJob) -> str | None:
        """The job's batch id when the batch is of this kind and has no job left to run."""
        batch_id = job.batch_id or ""
        if self._kinds.get(batch_id, self.kind) != self.kind:
            return None
        async with self.database.session() as session:
            batch = await repo.get_batch(session, batch_id)
            if batch is None:
                return None
            if len(self._kinds) > _MAX_REMEMBERED:
                self._kinds.clear()
            self._kinds[batch_id] = batch.kind
            if batch.kind != self.kind:
                return None
            progress = await repo.batch_progress(session, batch)
        return batch.id if progress.done else None


async def progress_view(database: Database, batch_id: str | None) -> dict[str, Any] | None:
    """``{"total", "completed", "failed"}`` of a run's batch, or None without one."""
    if not batch_id:
        return None
    async with database.session() as session:
        batch = await repo.get_batch(session, batch_id)
        if batch is None:
            return None
        progress = await repo.batch_progress(session, batch)
    return {"total": progress.total, "completed": progress.completed, "failed": progress.failed}
