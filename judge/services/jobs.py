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
import math
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Protocol

from opentelemetry import trace

from judge import metrics
from judge.domain.result import ScoreResult
from judge.domain.rubric import Rubric
from judge.domain.wire import Rejection
from judge.errors import ItemInvalid, JudgeError, JudgeMisconfigured, PanelNotFound
from judge.llm.cache import cache_partition
from judge.panel.run import Panel
from judge.persistence import jobs as repo
from judge.persistence.database import Database
from judge.persistence.economy import ECONOMY
from judge.persistence.job_rounds import JobRounds
from judge.persistence.memo import TtlMemo
from judge.persistence.tables import Batch, ScoreJob, utcnow
from judge.rubrics import RubricRegistry
from judge.services.economy_client import EconomyClient, batch_prices
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


class ClaimedRunner(Protocol):
    """A runner in this process: it takes jobs inserted already claimed for it
    (:func:`~judge.persistence.jobs.claimed_at_insert`; no outbox row, no claim), as rows.
    A restart of the process finds them as running jobs and redoes them; so does the
    sweeper once their lease lapses."""

    async def dispatch_claimed(self, jobs: Sequence[ScoreJob]) -> None: ...


class BatchFollower(Protocol):
    """Told of every finished job of a batch (calibration and probe runs finish this way)."""

    async def after_batch_job(self, job: ScoreJob) -> None: ...

    async def sweep(self, *, grace_s: float) -> None:
        """Finish what a stopped process left undone after a batch's last job."""


#: finished jobs by id, as their notices carried them (the rows as just stored)
FinishedJobs = Mapping[str, ScoreJob]


class Expectation(Protocol):
    """A wait registered before its jobs were dispatched (:meth:`CompletionWaiter.expect`)."""

    async def wait(self, timeout: float) -> Mapping[str, ScoreJob]:
        """Until every job is finished or ``timeout`` passes; the finished jobs whose notice
        carried the row as stored (in-process runners hand it over: no read needed)."""

    def close(self) -> None:
        """Stop waiting (nothing is left behind)."""


class CompletionWaiter(Protocol):
    async def wait(self, job_ids: Sequence[str], timeout: float) -> Mapping[str, ScoreJob]:
        """For jobs that may have finished already (it looks at the database first)."""

    def expect(self, job_ids: Sequence[str]) -> Expectation:
        """Register a wait now, before the jobs are dispatched: no notice can be missed, so
        no look at the database is needed."""

    def notify(self, job_id: str, job: ScoreJob | None = None) -> None:
        """``job_id`` finished; ``job``, when given, is its row as just stored."""


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
#: the kind of batch a calibration run scores its items in
CALIBRATION = "calibration"


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
    #: batch id -> its mode, read once per batch (a batch's mode never changes)
    _batch_modes: TtlMemo[str, str] = field(init=False)
    _rounds: JobRounds | None = None

    def __post_init__(self) -> None:
        self._batch_modes = TtlMemo(math.inf, limit=10_000)

    @property
    def rounds(self) -> JobRounds:
        """Claims and results of this process's jobs, gathered into rounds (one statement
        claims the jobs runners take together; one transaction stores the results that
        finish together)."""
        if self._rounds is None:
            worker = self.settings.worker
            self._rounds = JobRounds(
                self.database, lease_s=worker.lease_s, max_attempts=worker.max_attempts
            )
        return self._rounds

    # -- panels and rubrics -----------------------------------------------------------------
    def panel(self, name: str | None) -> Panel:
        chosen, spec = panel_spec(self.settings, name)
        if chosen not in self._panels:
            self._panels[chosen] = resolve_panel(
                self.settings, spec, name=chosen, simulator_url=self.simulator_url
            )
        return self._panels[chosen]

    def simulated_panel(self, name: str) -> bool:
        """Whether the named panel includes a simulator persona (False: no longer configured)."""
        try:
            return self.panel(name).includes_simulator
        except PanelNotFound:
            return False

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
        claimed: bool = False,
        before: repo.BeforeInsert | None = None,
    ) -> ScoreJob:
        """Validate and persist one item; the caller dispatches after this returns.
        ``idempotency`` is recorded in the same transaction; ``before`` (the quota's counts)
        runs in its session first. ``claimed``: for a runner of this process
        (:class:`ClaimedRunner`), the job is inserted claimed by it, with no outbox row."""
        rubric = self.rubric(rubric_id, version)
        panel = self.panel(panel_name)
        item = self.validate(raw_item, rubric)
        job = self._job(rubric, panel, raw_item, item.id, owner_key_id=owner)
        if claimed:
            repo.claimed_at_insert(job, lease_s=self.settings.worker.lease_s)
        parents: list[Any] = []
        if idempotency is not None:
            parents.append(idempotency.row(job.id))
        refused = await repo.insert_skipping_refused(
            self.database, parents, [job], outbox=not claimed, before=before
        )
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
        self,
        prepared: PreparedBatch,
        *,
        idempotency: Submission | None = None,
        along: Sequence[Any] = (),
        before: repo.BeforeInsert | None = None,
    ) -> tuple[Batch, list[str]]:
        """Persist a prepared batch (and ``along``, rows that refer to it, e.g. a session);
        a job the database refuses becomes a rejection. ``before`` (the quota's counts) runs
        in the insert's session first."""
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
        parents: list[Any] = [batch, *along]
        if idempotency is not None:
            parents.append(idempotency.row(batch.id))
        refused = await repo.insert_skipping_refused(
            self.database, parents, jobs, before_commit=count, before=before
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
        return await self.run(job_id) is not None

    async def run(self, job_id: str, *, claimed: ScoreJob | None = None) -> ScoreJob | None:
        """Score one job if it can be claimed: the job as this call finished it (completed,
        its result as stored; or failed), else None. ``claimed``: the job as inserted already
        claimed for this process (:func:`~judge.persistence.jobs.claimed_at_insert`); it is
        run without a claim while most of its lease is left, else claimed as usual."""
        with tracer().start_as_current_span("judge.job", attributes={"judge.job_id": job_id}):
            return await self._run_job(job_id, claimed)

    async def _run_job(self, job_id: str, claimed: ScoreJob | None = None) -> ScoreJob | None:
        lease = self.settings.worker.lease_s
        if claimed is not None:
            # waited long in the runner's queue: the lease is renewed first (if still ours)
            if _lease_left(claimed) < lease / 2 and not await self._keep_claim(claimed, lease):
                return None  # it lapsed and another run claimed it
            return await self._run_claimed(repo.Claim(repo.CLAIMED, claimed), lease)
        if job_id in self.orphans:
            await self._release(job_id)
        try:
            claim = await self.rounds.claim(job_id)
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
            return None
        self.orphans.discard(job_id)
        return await self._run_claimed(claim, lease)

    async def _run_claimed(self, claim: repo.Claim, lease: float) -> ScoreJob | None:
        job = claim.job
        assert job is not None
        job_id = job.id
        if claim.outcome == repo.EXHAUSTED:
            log.error("job %s: %s", job_id, job.error)
            metrics.job_finished(job.rubric_id, "failed")
            if job.batch_id:
                await self._tell_follower(job)
            return job
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
            every_stage = await self._in_calibration(job, panel)
        except JudgeError as exc:
            error = f"invalid_job: {exc.message}"
            async with self.database.session() as session:
                await repo.fail_job(session, job_id, error)
            metrics.job_finished(job.rubric_id, "failed")
            return _as_failed(job, error)
        started = time.perf_counter()
        renew = asyncio.create_task(self._keep_lease(job_id, lease))
        try:
            scorer = await self._scorer_for(job)
            with metrics.job_running(rubric.id), cache_partition(job.owner_key_id):
                result = await scorer.score(
                    rubric,
                    item,
                    panel,
                    owner=job.owner_key_id,
                    use_cache=job.use_cache,
                    every_stage=every_stage,
                )
            finished = await self._store(job, result)
        except JudgeMisconfigured as exc:
            return _as_failed(job, await self._stop_misconfigured(job, exc))
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
        return job if finished else None

    async def _keep_claim(self, job: ScoreJob, lease: float) -> bool:
        async with self.database.session() as session:
            kept = await repo.keep_claim(session, job, lease_s=lease)
        if not kept:
            log.warning("job %s: its claim lapsed while queued; another run has it", job.id)
        return kept

    async def _scorer_for(self, job: ScoreJob) -> Scorer:
        """The scorer, or for an economy batch's job one whose calls are answered from its
        provider batches first (:mod:`judge.services.economy_client`)."""
        if job.batch_id is None:
            return self.scorer
        batch_id = job.batch_id
        mode = await self._batch_modes.get(batch_id, lambda: self._read_batch_mode(batch_id))
        if mode != ECONOMY:
            return self.scorer
        client = EconomyClient(
            self.scorer.client, self.database, job.batch_id, batch_prices(self.settings)
        )
        return replace(self.scorer, client=client)

    async def _read_batch_mode(self, batch_id: str) -> str:
        async with self.database.session() as session:
            batch = await repo.get_batch(session, batch_id)
        return batch.mode if batch is not None else "interactive"

    async def _in_calibration(self, job: ScoreJob, panel: Panel) -> bool:
        """A cascade panel's calibration item, which every stage must score."""
        if panel.cascade is None or job.batch_id is None:
            return False
        async with self.database.session() as session:
            batch = await repo.get_batch(session, job.batch_id)
        return batch is not None and batch.kind == CALIBRATION

    async def _store(self, job: ScoreJob, result: ScoreResult) -> bool:
        """Store the result (in a round: :class:`JobRounds`); once stored, ``job`` is left as
        its row now is, for a waiter in this process to answer from without reading it."""
        for call in result.calls:
            metrics.observe_call_record(call)
        metrics.observe_result(job.rubric_id, result)
        payload = result.model_dump(mode="json", exclude={"calls"})
        payload["id"] = job.id
        payload["item_id"] = job.item_id
        result_json = json.dumps(payload, ensure_ascii=False)
        stored = await self.rounds.finish(
            repo.Finished(
                job.id,
                result_json=result_json,
                calls=result.calls,
                ratings_by_model=_ratings_by_model(result),
            )
        )
        if stored:
            job.status, job.result_json, job.lease_until = repo.COMPLETED, result_json, None
        return stored

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

    async def _stop_misconfigured(self, job: ScoreJob, exc: JudgeMisconfigured) -> str:
        """Fail this job and the rest of its batch: every item would fail the same way.
        Returns the job's error."""
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
        return message

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
            return await repo.queue_counts(session, owner)

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

    async def read_job(self, job_id: str) -> ScoreJob | None:
        """The job as an API read: one short statement apart from the jobs' pool (on SQLite
        in line, without a thread hop: :mod:`judge.persistence.reads`)."""
        row = await self.database.read_row(repo.job_query(job_id))
        return None if row is None else row[0]


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


def _lease_left(job: ScoreJob) -> float:
    """Seconds until ``job``'s lease (as this process holds it) lapses."""
    if job.lease_until is None:
        return 0.0
    return (job.lease_until - utcnow()).total_seconds()


def _as_failed(job: ScoreJob, error: str) -> ScoreJob:
    """``job`` as its row is once failed with ``error``."""
    job.status, job.error, job.lease_until = repo.FAILED, error, None
    return job


def is_finished(job: ScoreJob) -> bool:
    """Completed or failed for good: nothing more will happen to it."""
    return job.status in (repo.COMPLETED, repo.FAILED)
