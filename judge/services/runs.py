"""What calibration runs and probe runs share about the batch that carries their jobs: being
finalized when its last job finishes (and by a sweep when that step was lost), their owner, and
their progress and status in a view."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any, ClassVar, Protocol

from judge.errors import JudgeError
from judge.persistence import jobs as repo
from judge.persistence import runs
from judge.persistence.database import Database
from judge.persistence.runs import RunTable
from judge.persistence.tables import ScoreJob, utcnow
from judge.services.jobs import JobService

log = logging.getLogger(__name__)
#: batch kinds remembered before the memory is cleared
_MAX_REMEMBERED = 10_000
#: a running run whose jobs have all finished: its report is being computed and stored
FINALIZING = "finalizing"


class RunKind(Protocol):
    """The runs carried by the batches of one kind (``calibration``, ``probe``)."""

    async def finalize_batch(self, batch_id: str) -> None:
        """Compute and store the report of the run whose batch this is (all jobs finished)."""

    async def finalize_unreported(self, *, grace_s: float) -> int:
        """Finalize runs whose last job finished over ``grace_s`` ago; returns how many."""


class RunFollower:
    """The job service's follower of batches (:class:`judge.services.jobs.BatchFollower`):
    after a batch's last job finishes it finalizes the run of that batch, by batch kind. The
    kind of every batch seen is remembered, so a job of an ordinary batch costs no query."""

    def __init__(self, database: Database, kinds: Mapping[str, RunKind]) -> None:
        self.database = database
        self.kinds = dict(kinds)
        self._seen: dict[str, str] = {}

    async def after_batch_job(self, job: ScoreJob) -> None:
        batch_id = job.batch_id or ""
        known = self._seen.get(batch_id)
        if known is not None and known not in self.kinds:
            return
        async with self.database.session() as session:
            batch = await repo.get_batch(session, batch_id)
            if batch is None:
                return
            if len(self._seen) > _MAX_REMEMBERED:
                self._seen.clear()
            self._seen[batch_id] = batch.kind
            if batch.kind not in self.kinds:
                return
            progress = await repo.batch_progress(session, batch)
        if progress.done:
            await self.kinds[batch.kind].finalize_batch(batch_id)

    async def sweep(self, *, grace_s: float) -> None:
        """Finalize every run left unreported (its process stopped after the last job)."""
        for kind, runs_of_kind in self.kinds.items():
            found = await runs_of_kind.finalize_unreported(grace_s=grace_s)
            if found:
                log.warning("finalized %d %s run(s) left without a report", found, kind)


class BatchRuns:
    """What the calibration and probe services share (a :class:`RunKind`): finding the run of
    a batch or the runs left unreported, for the service's own ``finalize``, and owners."""

    #: the table of the service's runs
    table: ClassVar[RunTable]
    #: raised with the run id when there is no such run
    not_found: ClassVar[type[JudgeError]]
    jobs: JobService

    async def finalize(self, run_id: str) -> bool:
        """Compute and store the run's report if every job is done and none is stored yet;
        True when this call stored it."""
        raise NotImplementedError

    async def finalize_batch(self, batch_id: str) -> None:
        run_id = await runs.run_of_batch(self.jobs.database, self.table, batch_id)
        if run_id is not None:
            await self.finalize(run_id)

    async def finalize_unreported(self, *, grace_s: float) -> int:
        before = utcnow() - timedelta(seconds=grace_s)
        found = await runs.unreported(self.jobs.database, self.table, finished_before=before)
        for run_id in found:
            await self.finalize(run_id)
        return len(found)

    async def owner_of(self, run_id: str) -> str | None:
        """The key that started the run; ``not_found`` is raised when there is none."""
        exists, owner = await runs.owner_of(self.jobs.database, self.table, run_id)
        if not exists:
            raise self.not_found(run_id)
        return owner


async def progress_view(database: Database, batch_id: str | None) -> dict[str, Any] | None:
    """``{"total", "completed", "failed"}`` of a run's batch, or None without one."""
    if not batch_id:
        return None
    async with database.session() as session:
        found = await repo.batch_with_progress(session, batch_id)
    if found is None:
        return None
    _, progress = found
    return {"total": progress.total, "completed": progress.completed, "failed": progress.failed}


def view_status(status: str, progress: dict[str, Any] | None) -> str:
    """A run's status as views show it: ``finalizing`` while a run whose jobs have all
    finished has no stored report yet (reading a run never computes it)."""
    done = progress is not None and progress["completed"] + progress["failed"] >= progress["total"]
    return FINALIZING if status == runs.RUNNING and done else status


async def view_when_reported(
    view: Callable[[], Awaitable[dict[str, Any]]], *, until: float, poll_s: float = 0.1
) -> dict[str, Any]:
    """``view()`` once it is no longer ``finalizing`` or at ``until`` (``time.monotonic()``):
    a request that waited for a run's jobs waits for its report too."""
    shown = await view()
    while shown["status"] == FINALIZING and time.monotonic() < until:
        await asyncio.sleep(poll_s)
        shown = await view()
    return shown
