"""Economy batches (``mode: economy``, issue 30): a batch whose calls go through the
providers' batch APIs at about half the price, for work that can wait.

The lifecycle, each step a guarded statement (:mod:`judge.persistence.economy`), so it
survives restarts and two pollers at once:

1. submitted: the batch's jobs are stored *held* (status ``provider``: no runner claims them,
   no sweep re-sends them);
2. :meth:`EconomyService.tick` renders every held job's calls exactly as scoring would (the
   panel run with a client that only records the requests), one provider batch per judge
   model, each request under its :func:`request_key`; the rows are claimed first, then the
   JSONL is uploaded and the batch created;
3. later ticks poll the provider batches (status and counts for the batch view) and, once a
   batch is final, store its replies and its failed lines' reasons;
4. when every provider batch of a batch is stored, its jobs are released to the queue and
   scored by the ordinary job path through :class:`EconomyClient` (same results, flags and
   persistence; failed lines are made interactively).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from judge.domain.wire import EconomyProgress, ProviderBatchProgress
from judge.errors import ItemInvalid, JudgeError
from judge.llm import batch_api
from judge.llm.client import ChatRequest, ChatResult
from judge.panel.judge_call import JudgeTarget
from judge.panel.run import Panel, score_item
from judge.persistence import economy as repo
from judge.persistence import jobs as jobs_repo
from judge.persistence.tables import ProviderBatchRow, ScoreJob, utcnow
from judge.services.economy_client import request_key
from judge.services.jobs import JobService, PreparedBatch, new_id
from judge.services.scoring import validate_for_rubric

log = logging.getLogger(__name__)
MODES = ("interactive", "economy")


def check_economy_panel(panel: Panel) -> None:
    """An economy batch's panel: every judge on a provider whose batch API is supported (see
    :mod:`judge.llm.batch_api`); else a 422 naming ``mode``."""
    unsupported = [j.model for j in panel.judges if batch_api.batch_provider(j.model) is None]
    if unsupported:
        raise ItemInvalid(
            "mode",
            "economy mode sends the calls through the provider's batch API, supported here "
            f"for OpenAI-compatible judges (openai/...) only; panel {panel.name!r} has "
            f"{', '.join(sorted(set(unsupported)))}: submit it in interactive mode",
        )


def hold(prepared: PreparedBatch) -> None:
    """Make a prepared batch an economy batch: its jobs held for the provider batches."""
    prepared.batch.mode = repo.ECONOMY
    for job in prepared.jobs:
        job.status = repo.HELD


class _Recorder:
    """A client that answers nothing and records the requests (step 2 of the lifecycle)."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        return ChatResult(
            model=request.model,
            resolved_model=None,
            content=None,
            failure="provider_error",
            error="recorded for a provider batch",
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=0.0,
            latency_ms=0.0,
            attempts=0,
        )


def _endpoint(target: JudgeTarget) -> batch_api.Endpoint:
    key = target.api_key.get_secret_value() if target.api_key else None
    provider = batch_api.batch_provider(target.model) or "openai"
    return batch_api.Endpoint(provider, target.api_base, key, timeout_s=target.timeout_s)


def _replies(found: batch_api.FileLines | None, *, ok: bool) -> list[dict[str, Any]]:
    """Rows for the replies table from an output (``ok``) or error file."""
    rows: list[dict[str, Any]] = []
    for line in found.lines if found else []:
        response = line.get("response") or {}
        status = response.get("status_code")
        body = response.get("body")
        if ok and status == 200 and isinstance(body, dict):
            rows.append(
                {"key": line["custom_id"], "body_json": json.dumps(body), "error": None}
                | {"simulated": found.simulated if found else False}
            )
            continue
        error = (body or {}).get("error") if isinstance(body, dict) else None
        code = (error or {}).get("code") or (error or {}).get("type") or "error"
        detail = f"provider batch line failed: HTTP {status} {code}"
        rows.append({"key": line["custom_id"], "body_json": None, "error": detail})
        rows[-1]["simulated"] = found.simulated if found else False
    return rows


@dataclass
class EconomyService:
    jobs: JobService

    # -- one round ---------------------------------------------------------------------------
    async def tick(self) -> list[str]:
        """Create, poll and fetch provider batches; the job ids released to the queue."""
        database = self.jobs.database
        async with database.session() as session:
            fresh = await repo.batches_to_submit(session)
            cutoff = utcnow() - timedelta(seconds=self.jobs.settings.economy.stale_submit_s)
            stale = await repo.reclaim_stale(session, before=cutoff)
        for batch_id in fresh:
            await self._submit(batch_id, None)
        by_batch: dict[str, list[ProviderBatchRow]] = defaultdict(list)
        for row in stale:
            by_batch[row.batch_id].append(row)
        for batch_id, rows in by_batch.items():
            await self._submit(batch_id, rows)
        async with database.session() as session:
            open_rows = await repo.pollable(session)
        for row in open_rows:
            await self._poll(row)
        async with database.session() as session:
            ready = await repo.batches_to_release(session)
        released: list[str] = []
        for batch_id in ready:
            async with database.session() as session:
                released += await repo.release(session, batch_id)
        if released:
            log.info("economy: %d job(s) released to the queue", len(released))
        return released

    # -- create ------------------------------------------------------------------------------
    async def _requests(self, batch_id: str) -> tuple[Panel, dict[str, dict[str, ChatRequest]]]:
        """The calls the held jobs of ``batch_id`` will make, per model, by key."""
        async with self.jobs.database.session() as session:
            jobs = await repo.held_jobs(session, batch_id)
        if not jobs:
            raise JudgeError(f"economy batch {batch_id} has no held jobs")
        first: ScoreJob = jobs[0]
        panel = self.jobs.panel(first.panel_name)
        rubric = self.jobs.rubric(first.rubric_id, first.rubric_version)
        policy = self.jobs.scorer.policy(rubric)
        per_model: dict[str, dict[str, ChatRequest]] = defaultdict(dict)
        for job in jobs:
            recorder = _Recorder()
            try:
                item = validate_for_rubric(json.loads(job.item_json), rubric)
                await score_item(
                    rubric=rubric,
                    item=item,
                    panel=panel,
                    client=recorder,
                    use_cache=False,
                    policy=policy,
                )
            except JudgeError:
                continue  # the job fails on its own when it runs
            for request in recorder.requests:
                per_model[request.model][request_key(request)] = request
        return panel, per_model

    async def _submit(self, batch_id: str, claimed: list[ProviderBatchRow] | None) -> None:
        """Create the provider batches of ``batch_id`` (``claimed``: rows to create again)."""
        try:
            panel, per_model = await self._requests(batch_id)
        except JudgeError as exc:
            log.warning("economy batch %s: %s", batch_id, exc.message)
            return
        if claimed is None:
            claimed = [
                ProviderBatchRow(id=new_id(), batch_id=batch_id, model=model, requests=len(reqs))
                for model, reqs in sorted(per_model.items())
            ]
            async with self.jobs.database.session() as session:
                if not claimed or not await repo.claim_submission(session, batch_id, claimed):
                    return
        targets = {target.model: target for target in panel.judges}
        for row in claimed:
            requests = per_model.get(row.model, {})
            lines = [batch_api.request_line(key, r) for key, r in requests.items()]
            try:
                file_id, provider_id = await batch_api.submit(_endpoint(targets[row.model]), lines)
            except Exception as exc:
                # the provider would not take it: its calls are made interactively
                log.warning(
                    "economy batch %s: creating %s's batch failed: %r", batch_id, row.model, exc
                )
                async with self.jobs.database.session() as session:
                    await repo.store_replies(
                        session,
                        row,
                        [],
                        error=f"the provider refused the batch ({type(exc).__name__})",
                    )
                continue
            async with self.jobs.database.session() as session:
                await repo.update_row(
                    session,
                    row.id,
                    status="validating",
                    provider_batch_id=provider_id,
                    input_file_id=file_id,
                    requests=len(lines),
                )

    # -- poll and fetch ----------------------------------------------------------------------
    async def _poll(self, row: ProviderBatchRow) -> bool:
        """Update ``row`` from the provider; True when its replies were just stored."""
        panel = self.jobs.panel(await self._panel_name(row.batch_id))
        target = next((t for t in panel.judges if t.model == row.model), None)
        if target is None or row.provider_batch_id is None:
            return False
        endpoint = _endpoint(target)
        try:
            found = await batch_api.retrieve(endpoint, row.provider_batch_id)
            if not found.final:
                async with self.jobs.database.session() as session:
                    await repo.update_row(
                        session,
                        row.id,
                        status=found.status,
                        completed=found.completed,
                        failed=found.failed,
                    )
                return False
            output = (
                await batch_api.content(endpoint, found.output_file_id)
                if found.output_file_id
                else None
            )
            errors = (
                await batch_api.content(endpoint, found.error_file_id)
                if found.error_file_id
                else None
            )
        except Exception as exc:  # the provider is away: the next tick asks again
            log.warning("economy: polling %s failed: %r", row.provider_batch_id, exc)
            return False
        replies = _replies(output, ok=True) + _replies(errors, ok=False)
        error = None if found.status == "completed" else f"provider batch {found.status}"
        if found.errors:
            error = f"{error}: {', '.join(found.errors)}"
        async with self.jobs.database.session() as session:
            return await repo.store_replies(
                session,
                row,
                replies,
                completed=found.completed,
                failed=found.failed,
                output_file_id=found.output_file_id,
                error_file_id=found.error_file_id,
                error=error,
            )

    async def _panel_name(self, batch_id: str) -> str | None:
        async with self.jobs.database.session() as session:
            batch = await jobs_repo.get_batch(session, batch_id)
        return batch.panel_name if batch is not None else None


async def economy_progress(jobs: JobService, batch_id: str) -> EconomyProgress:
    """An economy batch's provider side, for its view: held items and each provider batch."""
    async with jobs.database.session() as session:
        held = await repo.count_held(session, batch_id)
        rows = await repo.provider_batches(session, batch_id)
    providers = [
        ProviderBatchProgress(
            model=row.model,
            status=row.status,
            requests=row.requests,
            completed=row.completed,
            failed=row.failed,
            error=row.error,
        )
        for row in rows
    ]
    if held == 0:
        stage = "released"
    elif not rows or any(r.provider_batch_id is None and r.status != repo.FETCHED for r in rows):
        stage = "waiting"
    elif any(r.status in ("in_progress", "finalizing", repo.FETCHED) for r in rows):
        stage = "in progress"
    else:
        stage = "submitted to provider"
    return EconomyProgress(stage=stage, held=held, provider_batches=providers)
