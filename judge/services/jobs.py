"""Score jobs: submit (validate, persist, then dispatch), run (claim, score, store), read.

Both runtimes call these functions: the embedded runner inside the API process, and the
Celery task in worker processes. A job is claimed with a guarded update and finished in one
transaction, so a message delivered twice, or redelivered after a worker died, scores the
item once in effect.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol

from opentelemetry import trace

from judge import metrics
from judge.domain.result import ScoreResult
from judge.domain.rubric import Rubric
from judge.domain.wire import Rejection
from judge.errors import ItemInvalid, JudgeError, JudgeMisconfigured
from judge.llm.cache import cache_partition
from judge.panel.run import Panel
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.tables import Batch, ScoreJob, utcnow
from judge.rubrics import RubricRegistry
from judge.services.idempotency import Submission
from judge.services.panels import panel_spec, resolve_panel
from judge.services.scoring import Scorer, validate_for_rubric
from judge.settings import Settings
from judge.tracing import tracer

log = logging.getLogger(__name__)


class Dispatcher(Protocol):
    """Hands job ids to whatever runs them (in-process runner or Celery), after commit.
    ``interactive`` jobs (a single score a caller is waiting for) go in a lane of their own
    that runners serve before the bulk lane's backlog (batches, calibrations, probes), so a
    score is never stuck behind another key's batch."""

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None: ...


class BatchFollower(Protocol):
    """Told of every finished job of a batch (calibration and probe runs finish this way)."""

    async def after_batch_job(self, job: ScoreJob) -> None: ...

    async def sweep(self, *, grace_s: float) -> None:
        """Finish what a stopped process left undone after a batch's last job."""


class CompletionWaiter(Protocol):
    async def wait(self, job_ids: Sequence[str], timeout: float) -> None: ...

    def notify(self, job_id: str) -> None: ...


@dataclass
class PreparedBatch:
    """A validated batch not yet stored: its jobs and the rejections of its other lines."""

    batch: Batch
    rubric_id: str
    jobs: list[ScoreJob] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)


def new_id() -> str:
    return uuid.uuid4().hex


#: why the database refused a row, as callers see it (its own message goes to the log only)
DB_REFUSED = "the database could not store this item ({})"


def failure_message(exc: BaseException, attempts: int) -> str:
    """A job's ``error`` after its runs kept raising: a reason code, never the exception's
    text (it can hold SQL or provider messages). The full error is in the worker's log."""
    return (
        f"internal_error: scoring raised {type(exc).__name__} on {attempts} attempt(s); "
        "the service log has the details (search for the job id)"
    )


@dataclass
class JobService:
    settings: Settings
    registry: RubricRegistry
    database: Database
    scorer: Scorer
    simulator_url: str | None = None
    _panels: dict[str, Panel] = field(default_factory=dict)
    #: told of every finished batch job (it completes a calibration run when its last item
    #: is done); set by the composition root. Its failure is logged and never fails the job
    follower: BatchFollower | None = None
    #: set when a judge turned out unusable (see :class:`JudgeMisconfigured`); stops run_all
    misconfigured: JudgeMisconfigured | None = None
    #: jobs this process claimed whose run failed while the database was down, so their
    #: claim could not be handed back: released (and re-sent) as soon as it answers again
    orphans: set[str] = field(default_factory=set)

    # -- panels and rubrics -----------------------------------------------------------------
    def panel(self, name: str | None) -> Panel:
        chosen, spec = panel_spec(self.settings, name)
        if chosen not in self._panels:
            self._panels[chosen] = resolve_panel(
                self.settings, spec, name=chosen, simulator_url=self.simulator_url
            )
        return self._panels[chosen]

    def rubric(self, rubric_id: str, version: str | None = None) -> Rubric:
        return self.registry.get(rubric_id, version)

    def validate(self, raw: Any, rubric: Rubric, prefix: str = "item") -> Any:
        """A submitted item, checked against the rubric and the size cap."""
        cap = self.settings.api.max_item_chars
        return validate_for_rubric(raw, rubric, field_prefix=prefix, max_chars=cap)

    # -- submit ------------------------------------------------------------------------------
    def _job(
        self, rubric: Rubric, panel: Panel, raw_item: Any, item_id: str | None, **extra: Any
    ) -> ScoreJob:
        return ScoreJob(
            id=new_id(),
            item_id=item_id,
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            panel_name=panel.name,
            panel_signature=panel.signature(),
            item_json=json.dumps(raw_item, ensure_ascii=False),
            **extra,
        )

    async def submit_score(
        self,
        *,
        rubric_id: str,
        raw_item: Any,
        panel_name: str | None,
        version: str | None = None,
        owner: str | None = None,
        idempotency: Submission | None = None,
    ) -> ScoreJob:
        """Validate and persist one item; the caller dispatches after this returns.
        ``idempotency`` is recorded in the same transaction."""
        rubric = self.rubric(rubric_id, version)
        panel = self.panel(panel_name)
        item = self.validate(raw_item, rubric)
        job = self._job(rubric, panel, raw_item, item.id, owner_key_id=owner)
        parents: list[Any] = []
        if idempotency is not None:
            parents.append(idempotency.row(job.id))
        refused = await repo.insert_skipping_refused(self.database, parents, [job])
        if refused:
            raise ItemInvalid("item", DB_REFUSED.format(refused[0]))
        metrics.job_submitted(rubric.id)
        return job

    def prepare_batch(
        self,
        *,
        rubric_id: str,
        panel_name: str | None,
        lines: Sequence[tuple[int, Any | Rejection]],
        owner: str | None = None,
    ) -> PreparedBatch:
        """Validate every line (CPU-bound: callers on an event loop run it in a thread): valid
        lines become jobs, the others rejections. Nothing is stored."""
        rubric = self.rubric(rubric_id)
        panel = self.panel(panel_name)
        batch = Batch(
            id=new_id(),
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            rubric_hash=rubric.content_hash,
            panel_name=panel.name,
            owner_key_id=owner,
        )
        prepared = PreparedBatch(batch, rubric.id)
        ids: dict[str, int] = {}  # item id -> the line that has it
        for line_no, raw in lines:
            if isinstance(raw, Rejection):
                prepared.rejections.append(raw)
                continue
            try:
                item = self.validate(raw, rubric)
            except ItemInvalid as exc:
                prepared.rejections.append(
                    Rejection(line=line_no, field=exc.field, message=exc.detail)
                )
                continue
            if item.id is not None and ids.setdefault(item.id, line_no) != line_no:
                duplicate = f"duplicate of line {ids[item.id]}: item ids must be unique"
                prepared.rejections.append(
                    Rejection(line=line_no, field="item.id", message=duplicate)
                )
                continue
            prepared.jobs.append(
                self._job(
                    rubric,
                    panel,
                    raw,
                    item.id,
                    batch_id=batch.id,
                    position=line_no,
                    owner_key_id=owner,
                )
            )
        return prepared

    async def store_batch(
        self, prepared: PreparedBatch, *, idempotency: Submission | None = None
    ) -> tuple[Batch, list[str]]:
        """Persist a prepared batch; a job the database refuses becomes a rejection."""
        batch, jobs, rejections = prepared.batch, prepared.jobs, list(prepared.rejections)

        def count(refused: dict[int, str]) -> None:
            found = list(rejections)
            for index, kind in refused.items():
                line = jobs[index].position or 0
                found.append(Rejection(line=line, field="item", message=DB_REFUSED.format(kind)))
            found.sort(key=lambda r: r.line)
            batch.total = len(jobs) - len(refused)
            batch.rejected = len(found)
            batch.rejections_json = json.dumps([r.model_dump() for r in found])

        count({})
        parents: list[Any] = [batch]
        if idempotency is not None:
            parents.append(idempotency.row(batch.id))
        refused = await repo.insert_skipping_refused(
            self.database, parents, jobs, before_commit=count
        )
        accepted = [j.id for i, j in enumerate(jobs) if i not in refused]
        metrics.job_submitted(prepared.rubric_id, len(accepted))
        return batch, accepted

    async def submit_batch(
        self,
        *,
        rubric_id: str,
        panel_name: str | None,
        lines: Sequence[tuple[int, Any | Rejection]],
        owner: str | None = None,
        idempotency: Submission | None = None,
    ) -> tuple[Batch, list[str]]:
        """Persist a batch: valid lines become jobs; invalid ones are recorded as rejections."""
        prepared = self.prepare_batch(
            rubric_id=rubric_id, panel_name=panel_name, lines=lines, owner=owner
        )
        return await self.store_batch(prepared, idempotency=idempotency)

    # -- run ---------------------------------------------------------------------------------
    async def run_job(self, job_id: str) -> bool:
        """Score one job if it can be claimed. Returns True when this call finished it."""
        with tracer().start_as_current_span("judge.job", attributes={"judge.job_id": job_id}):
            return await self._run_job(job_id)

    async def _run_job(self, job_id: str) -> bool:
        lease = self.settings.worker.lease_s
        if job_id in self.orphans:
            await self._release(job_id)
        try:
            async with self.database.session() as session:
                claim = await repo.claim_job(
                    session, job_id, lease_s=lease, max_attempts=self.settings.worker.max_attempts
                )
        except Exception:
            # the claim may have committed before the connection died: if so, nobody runs
            # the job until its lease lapses. Release it once the database is back (a claim
            # that did not commit makes this a no-op, or at worst a duplicate run, which
            # finishing guards against).
            self.orphans.add(job_id)
            raise
        job = claim.job
        if job is None:
            # busy: someone's claim holds it. If that claim is our own lost one (an orphan
            # whose release just failed), it must stay an orphan, or nobody hands it back
            # before its lease lapses (measured: a minute, in test_faults)
            return False
        self.orphans.discard(job_id)
        if claim.outcome == repo.EXHAUSTED:
            log.error("job %s: %s", job_id, job.error)
            metrics.job_finished(job.rubric_id, "failed")
            if job.batch_id:
                await self._tell_follower(job)
            return True
        trace.get_current_span().set_attributes(
            {"judge.rubric": job.rubric_id, "judge.panel": job.panel_name}
        )
        try:
            rubric = self.rubric(job.rubric_id, job.rubric_version)
            if rubric.content_hash != job.rubric_hash:
                raise JudgeError(
                    f"rubric {rubric.id} v{rubric.version} changed since the job was submitted"
                )
            item = validate_for_rubric(json.loads(job.item_json), rubric)
            panel = self.panel(job.panel_name)
        except JudgeError as exc:
            async with self.database.session() as session:
                await repo.fail_job(session, job_id, f"invalid_job: {exc.message}")
            metrics.job_finished(job.rubric_id, "failed")
            return True
        started = time.perf_counter()
        renew = asyncio.create_task(self._keep_lease(job_id, lease))
        try:
            with metrics.job_running(rubric.id), cache_partition(job.owner_key_id):
                result = await self.scorer.score(
                    rubric, item, panel, owner=job.owner_key_id, use_cache=job.use_cache
                )
            finished = await self._store(job, result)
        except JudgeMisconfigured as exc:
            await self._stop_misconfigured(job, exc)
            return True
        except Exception:
            # hand the job back at once, so a retry need not wait for the lease to lapse
            await self._release(job_id)
            raise
        finally:
            renew.cancel()
        if finished:
            metrics.job_finished(rubric.id, "completed", time.perf_counter() - started)
        if finished and job.batch_id:
            await self._tell_follower(job)
        return finished

    async def _store(self, job: ScoreJob, result: ScoreResult) -> bool:
        for call in result.calls:
            metrics.observe_call_record(call)
        metrics.observe_result(job.rubric_id, result)
        payload = result.model_dump(mode="json", exclude={"calls"})
        payload["id"] = job.id
        payload["item_id"] = job.item_id
        async with self.database.session() as session:
            return await repo.finish_job(
                session,
                job.id,
                result_json=json.dumps(payload, ensure_ascii=False),
                calls=result.calls,
                ratings_by_model=_ratings_by_model(result),
            )

    async def _release(self, *job_ids: str) -> bool:
        """Hand claims back; when the database cannot be reached, remember the jobs as
        orphans (see :meth:`release_orphans`)."""
        try:
            async with self.database.session() as session:
                await repo.release_jobs(session, job_ids)
        except Exception:
            log.warning("could not hand back the claim of %d job(s); will retry", len(job_ids))
            self.orphans.update(job_ids)
            return False
        self.orphans.difference_update(job_ids)
        return True

    async def release_orphans(self) -> list[str]:
        """Hand back the claims of runs that failed during an outage, in one statement; the
        released job ids, for the caller to dispatch again (seconds after recovery, not at
        the lease sweep)."""
        orphans = sorted(self.orphans)
        if not orphans or not await self._release(*orphans):
            return []
        log.info("re-sending %d job(s) orphaned by an outage", len(orphans))
        return orphans

    async def _stop_misconfigured(self, job: ScoreJob, exc: JudgeMisconfigured) -> None:
        """Fail this job and the rest of its batch: every item would fail the same way."""
        log.error("job %s: %s", job.id, exc.message)
        self.misconfigured = exc
        message = f"judge_misconfigured: {exc.message}"
        async with self.database.session() as session:
            await repo.fail_job(session, job.id, message)
            stopped = await repo.fail_queued(session, job.batch_id, message) if job.batch_id else 0
        for _ in range(1 + stopped):
            metrics.job_finished(job.rubric_id, "failed")
        if stopped:
            log.error("batch %s stopped: %d queued job(s) failed", job.batch_id, stopped)
        if job.batch_id:
            await self._tell_follower(job)

    async def _tell_follower(self, job: ScoreJob) -> None:
        if self.follower is None:
            return
        try:
            await self.follower.after_batch_job(job)
        except Exception:
            log.exception("the batch follower failed after job %s", job.id)

    async def sweep_runs(self) -> None:
        """Complete runs whose last job finished in a process that stopped before the
        follower completed them (called by the periodic sweeps next to stale jobs)."""
        if self.follower is not None:
            await self.follower.sweep(grace_s=self.settings.worker.sweep_interval_s)

    async def run_all(self, job_ids: Sequence[str], *, concurrency: int | None = None) -> None:
        """Run jobs in this process, ``concurrency`` at a time (default: the worker setting),
        for commands that need no server (``judge calibrate``, ``judge beat`` without Redis)."""
        limit = asyncio.Semaphore(concurrency or self.settings.worker.concurrency)
        self.misconfigured = None
        await self.mark_sent(job_ids)

        async def one(job_id: str) -> None:
            async with limit:
                if self.misconfigured is None:
                    await self.run_job(job_id)

        await asyncio.gather(*(one(j) for j in job_ids))
        if self.misconfigured is not None:
            raise self.misconfigured

    async def _keep_lease(self, job_id: str, lease: float) -> None:
        while True:
            await asyncio.sleep(lease / 3)
            try:
                async with self.database.session() as session:
                    await repo.renew_lease(session, job_id, lease_s=lease)
            except Exception:  # a missed renewal only risks a harmless duplicate claim
                log.warning("could not renew the lease of job %s", job_id, exc_info=True)

    async def stale_job_ids(self, *, include_queued: bool) -> list[str]:
        """Jobs whose run may be lost: running past their lease and, with ``include_queued``,
        queued for longer than ``requeue_after_s``. They are marked enqueued again; the caller
        dispatches them (a duplicate message is harmless: claiming is guarded)."""
        cutoff = utcnow() - timedelta(seconds=self.settings.worker.requeue_after_s)
        async with self.database.session() as session:
            ids = await repo.stale_jobs(
                session, queued_before=cutoff if include_queued else None, resent_before=cutoff
            )
            await repo.mark_enqueued(session, ids)
        return ids

    async def give_up(self, job_id: str, error: str) -> None:
        """Mark a job failed for good (its runs kept raising); it will not be retried."""
        async with self.database.session() as session:
            await repo.fail_job(session, job_id, error)
        job = await self.get_job(job_id)
        if job is not None:
            metrics.job_finished(job.rubric_id, "failed")
            if job.batch_id:
                await self._tell_follower(job)

    async def mark_sent(self, job_ids: Sequence[str]) -> None:
        """The jobs are in the hands of their runner: off the outbox (services/outbox.py)."""
        if job_ids:
            async with self.database.session() as session:
                await repo.outbox_sent(session, job_ids)

    async def queue_counts(self, owner: str | None) -> tuple[int, int]:
        """(items queued in all, unfinished items of ``owner``), for the API's quotas."""
        async with self.database.session() as session:
            return await repo.count_queued(session), await repo.count_unfinished(session, owner)

    async def queue_depth(self) -> int:
        async with self.database.session() as session:
            depth = await repo.count_queued(session)
        metrics.set_queue_depth(depth)
        return depth

    async def recoverable_job_ids(self) -> list[str]:
        """At start-up of the embedded runner: every unfinished job (their runner is gone)."""
        async with self.database.session() as session:
            return await repo.unfinished_jobs(session, expire_leases=True)

    # -- read --------------------------------------------------------------------------------
    async def unfinished_among(self, job_ids: Sequence[str], *, chunk: int = 500) -> set[str]:
        """Those of ``job_ids`` still queued or running (one query per ``chunk`` ids)."""
        found: set[str] = set()
        async with self.database.session() as session:
            for start in range(0, len(job_ids), chunk):
                found |= await repo.unfinished_among(session, job_ids[start : start + chunk])
        return found

    async def get_job(self, job_id: str) -> ScoreJob | None:
        async with self.database.session() as session:
            return await repo.get_job(session, job_id)


def _ratings_by_model(result: ScoreResult) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for dim_id, dim in result.dimensions.items():
        for judge in dim.judges:
            out.setdefault(judge.model, {})[dim_id] = (
                {"rating": judge.rating, "rationale": judge.rationale}
                if judge.status == "ok"
                else {"abstained": judge.reason, "detail": judge.detail}
            )
    return out


def is_finished(job: ScoreJob) -> bool:
    """Completed or failed for good: nothing more will happen to it."""
    return job.status in (repo.COMPLETED, repo.FAILED)
