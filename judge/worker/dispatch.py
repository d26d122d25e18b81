"""Enqueue jobs for Celery workers by task name (the API never imports the task module)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence

from celery import Celery

from judge.settings import Settings

log = logging.getLogger(__name__)
TASK_NAME = "judge.score_job"
#: the bulk lane (batches, calibrations, probes, re-sent jobs)
QUEUE = "judge"
#: the interactive lane (single scores): workers consume both queues in turn (kombu rotates
#: the queue it reads first after each message), so a score waits for one free slot, not for
#: the bulk backlog
INTERACTIVE_QUEUE = "judge.interactive"
QUEUES = (INTERACTIVE_QUEUE, QUEUE)


def broker_app(settings: Settings) -> Celery:
    app = Celery("empathy-judge-client", broker=settings.redis_url)
    app.conf.update(
        broker_connection_retry_on_startup=True,
        broker_connection_timeout=3,
        task_default_queue=QUEUE,
        broker_transport_options={"visibility_timeout": 3600},
    )
    return app


def send_jobs(app: Celery, job_ids: Sequence[str], *, interactive: bool = False) -> None:
    queue = INTERACTIVE_QUEUE if interactive else QUEUE
    with app.producer_or_acquire() as producer:
        for job_id in job_ids:
            app.send_task(TASK_NAME, args=[job_id], queue=queue, producer=producer)


class CeleryDispatcher:
    """Sends one task per job; raises when the broker cannot be reached (wrap it in
    ``services.outbox.OutboxDispatcher``: the jobs stay in the outbox and are re-sent)."""

    def __init__(self, settings: Settings) -> None:
        self._app = broker_app(settings)

    async def dispatch(self, job_ids: Sequence[str], *, interactive: bool = False) -> None:
        if job_ids:
            await asyncio.to_thread(
                functools.partial(send_jobs, self._app, list(job_ids), interactive=interactive)
            )
