"""``judge score --session FILE``: score a whole session checkpoint by checkpoint with the same
windows as ``POST /v1/sessions`` (judge/domain/session.py), in this process, and print its
timeline (or the session view as JSON). FILE holds a session object or a RESCUE-BENCH session
line (it has ``rows``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from empathy_judge_client.session_view import SessionView
from empathy_judge_client.timeline import timeline
from judge.cli._output import print_json
from judge.cli._runtime import service_runtime
from judge.domain.item_fit import check_item_fits
from judge.domain.rubric import Rubric
from judge.domain.session import parse_session, plan_session
from judge.domain.session_view import JobState, session_view
from judge.errors import ItemInvalid, JudgeError
from judge.labels.rescue import rescue_session
from judge.services import schema
from judge.services.panels import resolve_panel
from judge.services.scoring import validate_for_rubric
from judge.settings import PanelSpec, Settings

LOCAL_ID = "local"


def read_session(text: str, source: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JudgeError(f"{source}: not a JSON object: {exc}") from None
    if not isinstance(data, dict):
        raise JudgeError(f"{source}: a session is one JSON object")
    return rescue_session(data) if isinstance(data.get("rows"), list) else data


async def _score(
    settings: Settings, rubric: Rubric, raw: dict[str, Any], name: str, spec: PanelSpec
) -> SessionView:
    session = parse_session(raw)
    try:
        check_item_fits(session.item, rubric)
    except ItemInvalid as exc:
        raise ItemInvalid(f"session.{exc.field}", exc.detail) from None
    plan = plan_session(session, LOCAL_ID, max_chars=settings.api.max_item_chars)
    stored = await schema.schema_ready(settings.database_url)
    async with service_runtime(settings, stored=stored, panels=[spec]) as runtime:
        panel = resolve_panel(
            runtime.settings, spec, name=name, simulator_url=runtime.settings.simulator.url
        )
        limit = asyncio.Semaphore(settings.worker.concurrency)

        async def one(body: dict[str, Any]) -> str:
            item = validate_for_rubric(body, rubric)
            async with limit:
                result = await runtime.jobs.scorer.score(rubric, item, panel, owner=None)
            return result.model_dump_json(exclude={"calls"})

        results = await asyncio.gather(*(one(job.item) for job in plan))
    states = [
        JobState(
            checkpoint=job.checkpoint,
            window=job.window,
            start=job.start,
            end=job.end,
            truncated=job.truncated,
            status="completed",
            result_json=result,
        )
        for job, result in zip(plan, results, strict=True)
    ]
    return session_view(
        session,
        states,
        id=str(raw.get("id") or LOCAL_ID),
        batch_id=LOCAL_ID,
        status="completed",
        rubric={"id": rubric.id, "version": rubric.version, "hash": rubric.content_hash},
        panel_name=name,
        created_at="",
        total=len(plan),
        completed=len(plan),
        failed=0,
    )


def score_session(
    settings: Settings, rubric: Rubric, text: str, source: str, name: str, spec: PanelSpec, fmt: str
) -> None:
    """Score the session in ``text`` and print it."""
    view = asyncio.run(_score(settings, rubric, read_session(text, source), name, spec))
    if fmt == "json":
        print_json(view.model_dump(mode="json"))
        return
    for line in timeline(view):
        click.echo(line)
