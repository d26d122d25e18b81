"""What calibration runs and probe runs share about the batch that carries their jobs: being
submitted (and waited for), finalized when its last job finishes (and by a sweep when that step
was lost), their owner (who may read them), and their progress and status in a view."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from judge.domain.listing import ListFilter
from judge.domain.principal import Principal
from judge.domain.wire import CalibrationProgress, RubricRef
from judge.errors import NotFound
from judge.persistence import jobs as repo
from judge.persistence import listings, runs
from judge.persistence.database import Database
from judge.persistence.memo import TtlMemo
from judge.persistence.runs import RunTable
from judge.persistence.tables import CalibrationRun, ProbeRun, ScoreJob, utcnow
from judge.services.access import check_readable, readable_owners
from judge.services.jobs import JobService
from judge.services.submission import Admission, Intake, Persisted, submit_and_wait

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
        # the jobs of a round finish together: they share one read of their batch's kind
        self._kinds: TtlMemo[str, str | None] = TtlMemo(math.inf, limit=_MAX_REMEMBERED)

    async def _read_kind(self, batch_id: str) -> str | None:
        async with self.database.session() as session:
            batch = await repo.get_batch(session, batch_id)
        return None if batch is None else batch.kind

    async def after_batch_job(self, job: ScoreJob) -> None:
        batch_id = job.batch_id or ""
        if await self._kinds.get(batch_id, lambda: self._read_kind(batch_id)) not in self.kinds:
            return
        async with self.database.session() as session:
            batch = await repo.get_batch(session, batch_id)
            if batch is None:
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


class RunView(Protocol):
    @property
    def status(self) -> str: ...


View = TypeVar("View", bound=RunView)


class SubmitRun(Protocol):
    """A service's ``submit`` with its request bound: stores a run owned by ``owner``."""

    def __call__(
        self, *, owner: str | None
    ) -> Awaitable[tuple[CalibrationRun | ProbeRun, list[str]]]: ...


class BatchRuns(Generic[View]):
    """What the calibration and probe services share (a :class:`RunKind`): finding the run of
    a batch or the runs left unreported, for the service's own ``finalize``; owners; starting
    a run for a caller and showing it."""

    #: the table of the service's runs
    table: ClassVar[RunTable]
    #: raised with the run id when there is no such run
    not_found: ClassVar[type[NotFound]]
    jobs: JobService

    async def view(self, who: Principal, run_id: str) -> View:
        """The run as stored, if ``who`` may read it (a read: it never computes the report)."""
        raise NotImplementedError

    async def started(
        self, who: Principal, intake: Intake, submit: SubmitRun, *, items: int, wait: float | None
    ) -> View:
        """Start a run of ``items`` items owned by ``who`` (``submit`` validates and stores it)
        and show it; with ``wait``, once its jobs are done and its report stored (or the wait
        is over)."""

        async def persist(_record: object, admission: Admission) -> Persisted:
            await admission.check()
            run, job_ids = await submit(owner=who.owner)
            return Persisted(run.id, job_ids)

        submitted = await submit_and_wait(intake, who, persist, items=items, wait=wait)
        shown = functools.partial(self.view, who, submitted.id)
        return await view_when_reported(shown, until=submitted.until)

    async def finalize(self, run_id: str) -> bool:
        """Compute and store the run's report if every job is done and none is stored yet;
        True when this call stored it."""
        raise NotImplementedError

    @functools.cached_property
    def _finalizing(self) -> set[str]:
        """The runs whose report this process is computing now."""
        return set()

    async def finalize_once(self, run_id: str) -> None:
        """``finalize``, unless this process is already at it for the run. The last jobs of a
        batch finish together, each telling the follower, and the sweep comes by while a
        large report takes seconds to compute: only one computation can store the report,
        the others would repeat it for nothing (another process may still compute it too;
        storing stays once, by :func:`judge.persistence.runs.complete`)."""
        if run_id in self._finalizing:
            return
        self._finalizing.add(run_id)
        try:
            await self.finalize(run_id)
        finally:
            self._finalizing.discard(run_id)

    async def finalize_batch(self, batch_id: str) -> None:
        run_id = await runs.run_of_batch(self.jobs.database, self.table, batch_id)
        if run_id is not None:
            await self.finalize_once(run_id)

    async def finalize_unreported(self, *, grace_s: float) -> int:
        before = utcnow() - timedelta(seconds=grace_s)
        found = await runs.unreported(self.jobs.database, self.table, finished_before=before)
        for run_id in found:
            await self.finalize_once(run_id)
        return len(found)

    async def shown(self, who: Principal, run: Any) -> View:
        """The view of a stored run ``who`` may read."""
        raise NotImplementedError

    async def listed(self, who: Principal, where: ListFilter) -> tuple[list[View], int | None]:
        """The runs ``who`` may read (admin: all), newest first, without their reports; and
        the offset of the next page (None on the last)."""
        async with self.jobs.database.session() as session:
            found = await listings.runs_page(
                session, self.table, owners=readable_owners(who), where=where
            )
        page, next_offset = where.paged(found)
        views = []
        for run in page:
            run.report_json = None  # a listing carries no reports
            views.append(await self.shown(who, run))
        return views, next_offset

    async def check_readable(self, who: Principal, run_id: str) -> None:
        """``not_found`` unless the run exists and ``who`` may read it."""
        exists, owner = await runs.owner_of(self.jobs.database, self.table, run_id)
        if not exists:
            raise self.not_found(run_id)
        check_readable(who, owner, self.not_found(run_id))


async def progress_view(database: Database, batch_id: str | None) -> CalibrationProgress | None:
    """How many of a run's items there are and have finished; None without a batch."""
    if not batch_id:
        return None
    async with database.session() as session:
        found = await repo.batch_with_progress(session, batch_id)
    if found is None:
        return None
    _, progress = found
    return CalibrationProgress(
        total=progress.total, completed=progress.completed, failed=progress.failed
    )


async def run_fields(database: Database, run: CalibrationRun | ProbeRun) -> dict[str, Any]:
    """What the views of calibration and probe runs show alike: the run as stored, its
    progress (when it has a batch) and its report (once stored)."""
    progress = await progress_view(database, run.batch_id)
    shown: dict[str, Any] = {
        "id": run.id,
        "status": view_status(run.status, progress),
        "rubric": RubricRef(id=run.rubric_id, version=run.rubric_version, hash=run.rubric_hash),
        "panel_name": run.panel_name,
        "simulated": run.simulated,
        "n_items": run.n_items,
        "created_at": run.created_at.isoformat(),
    }
    if progress is not None:
        shown["progress"] = progress
    if run.report_json:
        shown["report"] = json.loads(run.report_json)
    return shown


def view_status(status: str, progress: CalibrationProgress | None) -> str:
    """A run's status as views show it: ``finalizing`` while a run whose jobs have all
    finished has no stored report yet (reading a run never computes it)."""
    done = progress is not None and progress.completed + progress.failed >= progress.total
    return FINALIZING if status == runs.RUNNING and done else status


async def view_when_reported(
    view: Callable[[], Awaitable[View]], *, until: float, poll_s: float = 0.1
) -> View:
    """``view()`` once it is no longer ``finalizing`` or at ``until`` (``time.monotonic()``):
    a request that waited for a run's jobs waits for its report too."""
    shown = await view()
    while shown.status == FINALIZING and time.monotonic() < until:
        await asyncio.sleep(poll_s)
        shown = await view()
    return shown
