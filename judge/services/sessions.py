"""Sessions (issue 31): a whole multi-party session submitted as a batch of kind ``session``,
one job per checkpoint and context window (judge/domain/session.py), run by whichever runner
runs batches (the embedded one or Celery workers); its view puts the checkpoints' judgments
back together as a trajectory with the supporter's measures."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from empathy_judge_client.session_view import SessionView
from judge.domain.item_fit import check_item_fits
from judge.domain.listing import ListFilter
from judge.domain.principal import Principal
from judge.domain.session import PlannedJob, Session, parse_session, plan_session
from judge.domain.session_view import JobState, session_view
from judge.domain.wire import RubricRef, SessionListing, SessionPage
from judge.errors import BatchTooLarge, ItemInvalid, SessionNotFound
from judge.persistence import jobs as repo
from judge.persistence import listings
from judge.persistence.jobs import BatchProgress
from judge.persistence.tables import Batch, SessionRun
from judge.services.access import check_readable, readable_owners
from judge.services.batches import progress_fields
from judge.services.idempotency import IdempotencyKey, Submission
from judge.services.jobs import JobService, PreparedBatch, new_id
from judge.services.submission import Admission, Intake, Persisted, submit_and_wait

#: the batch kind of a session's jobs
SESSION = "session"


@dataclass
class SessionService:
    jobs: JobService

    def prepare(
        self, raw: Any, *, rubric_id: str, panel_name: str | None, owner: str | None
    ) -> tuple[PreparedBatch, SessionRun]:
        """Validate the session and plan its jobs (CPU-bound: run it in a thread)."""
        rubric = self.jobs.rubric(rubric_id)
        session = parse_session(raw)
        try:
            check_item_fits(session.item, rubric)
        except ItemInvalid as exc:
            raise ItemInvalid(f"session.{exc.field}", exc.detail) from None
        run_id = new_id()
        cap = self.jobs.settings.api.max_item_chars
        plan = plan_session(session, run_id, max_chars=cap)
        api = self.jobs.settings.api
        limit = min(api.max_batch_items, api.max_queued_per_key)
        if len(plan) > limit:  # as a batch: one no wait could admit is too large (413)
            raise BatchTooLarge(limit, len(plan))
        lines = [(n, job.item) for n, job in enumerate(plan, start=1)]
        prepared = self.jobs.prepare_batch(
            rubric_id=rubric_id, panel_name=panel_name, lines=lines, owner=owner
        )
        if prepared.rejections:
            first = prepared.rejections[0]
            where = plan[first.line - 1]
            raise ItemInvalid(
                f"session.turns[{where.checkpoint}]",
                f"checkpoint {where.checkpoint} cannot be judged: {first.field}: {first.message}",
            )
        prepared.batch.kind = SESSION
        run = SessionRun(
            id=run_id,
            batch_id=prepared.batch.id,
            owner_key_id=owner,
            supporter=session.supporter,
            session_json=json.dumps(raw),  # ASCII: any character the database can hold
            plan_json=json.dumps([_planned(job) for job in plan]),
        )
        return prepared, run

    async def submit(
        self,
        who: Principal,
        intake: Intake,
        raw: Any,
        *,
        rubric_id: str,
        panel_name: str | None,
        idempotency: IdempotencyKey | None = None,
    ) -> SessionView:
        """Queue every checkpoint of the session; its view (nothing judged yet)."""
        prepared, run = await anyio.to_thread.run_sync(
            functools.partial(
                self.prepare, raw, rubric_id=rubric_id, panel_name=panel_name, owner=who.owner
            )
        )

        async def persist(record: Submission | None, admission: Admission) -> Persisted:
            _, job_ids = await self.jobs.store_batch(
                prepared, idempotency=record, along=[run], before=admission.in_session
            )
            return Persisted(run.id, job_ids)

        submitted = await submit_and_wait(
            intake,
            who,
            persist,
            items=len(prepared.jobs),
            resource="sessions",
            idempotency=idempotency,
        )
        return await self.view(who, submitted.id)

    async def listed(self, who: Principal, where: ListFilter) -> SessionPage:
        """The sessions ``who`` may read (admin: all), newest first, one page."""
        async with self.jobs.database.session() as db:
            found = await listings.sessions_page(db, owners=readable_owners(who), where=where)
        found, next_offset = where.paged(found)
        return SessionPage(
            offset=where.offset,
            limit=where.limit,
            next_offset=next_offset,
            sessions=[self._listing(*row) for row in found],
        )

    def _listing(self, run: SessionRun, batch: Batch, progress: BatchProgress) -> SessionListing:
        return SessionListing(
            id=run.id,
            batch_id=batch.id,
            **progress_fields(batch, progress),
            supporter=run.supporter,
            created_at=run.created_at.isoformat(),
            simulated=self.jobs.simulated_panel(batch.panel_name),
        )

    async def view(self, who: Principal, session_id: str) -> SessionView:
        """The session as ``GET /v1/sessions/{id}`` shows it."""
        async with self.jobs.database.session() as db:
            run = await db.get(SessionRun, session_id)
            if run is None:
                raise SessionNotFound(session_id)
            check_readable(who, run.owner_key_id, SessionNotFound(session_id))
            found = await repo.batch_with_progress(db, run.batch_id)
            if found is None:
                raise SessionNotFound(session_id)
            batch, progress = found
            plan = json.loads(run.plan_json)
            states = [
                JobState(
                    **plan[(job.position or 1) - 1],
                    status=job.status,
                    result_json=job.result_json,
                    error=job.error,
                )
                async for job in repo.iter_batch_jobs(db, run.batch_id)
            ]
        session: Session = parse_session(json.loads(run.session_json))
        return await anyio.to_thread.run_sync(
            functools.partial(
                session_view,
                session,
                states,
                id=run.id,
                batch_id=run.batch_id,
                status=progress.status,
                rubric=RubricRef(
                    id=batch.rubric_id, version=batch.rubric_version, hash=batch.rubric_hash
                ),
                panel_name=batch.panel_name,
                created_at=run.created_at.isoformat(),
                total=progress.total,
                completed=progress.completed,
                failed=progress.failed,
            )
        )


def _planned(job: PlannedJob) -> dict[str, Any]:
    return {
        "checkpoint": job.checkpoint,
        "window": job.window,
        "start": job.start,
        "end": job.end,
        "truncated": job.truncated,
    }
