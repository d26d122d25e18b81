"""The Celery application and its one task, ``judge.score_job(job_id)``.

Each worker process owns one asyncio event loop, running in a background thread, and one
service runtime bound to it. Tasks are thin: they submit ``JobService.run_job`` to that loop
and wait, so with the threads pool one process keeps ``concurrency`` items (and three times as
many LLM calls) in flight. Tasks take ids, acknowledge late and are idempotent; a sweeper on
the same loop re-sends jobs whose message was lost (a killed worker, a restarted Redis) and
stores the reports of calibration and probe runs a killed worker finished but did not report.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

from celery import Celery, Task
from celery.signals import worker_ready, worker_shutdown

from judge import metrics
from judge.loop_thread import LoopThread
from judge.redis_client import redis_client
from judge.runtime.composition import ServiceRuntime, build_runtime
from judge.runtime.economy import economy_forever
from judge.runtime.gc_pauses import freeze_startup_objects
from judge.runtime.job_retry import JobRetryPolicy
from judge.runtime.notify import publish_done
from judge.runtime.run_gauges import RunGaugeCollector
from judge.runtime.sweeper import sweep_forever
from judge.services.jobs import failure_message
from judge.settings import Settings, load_settings
from judge.tracing import configure_tracing, shutdown_tracing
from judge.worker.dispatch import QUEUE, QUEUES, TASK_NAME, broker_app, send_jobs

log = logging.getLogger(__name__)
T = TypeVar("T")


class WorkerRuntime:
    """The per-process event loop thread, the service runtime and the sweeper."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._thread = LoopThread("judge-loop")
        self.runtime: ServiceRuntime = build_runtime(settings)
        self.redis: Any = redis_client(settings.redis_url or "")
        self._sender = broker_app(settings)
        self._sweeper = self._thread.submit(self._sweep())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop thread in a copy of the caller's context (the Celery task's
        trace, when tracing), and wait for its result."""
        return self._thread.call_blocking(coro)

    async def _sweep(self) -> None:
        await self.runtime.database.check_migrated()

        async def resend(job_ids: Sequence[str]) -> None:
            await asyncio.to_thread(send_jobs, self._sender, list(job_ids))

        async def queue_is_empty() -> bool:
            lengths = [int(await self.redis.llen(queue)) for queue in QUEUES]
            return not any(lengths)

        economy = self.runtime.economy
        await asyncio.gather(
            sweep_forever(
                self.runtime.jobs, resend, queue_is_empty=queue_is_empty, sweep_at_start=True
            ),
            *([economy_forever(economy, resend)] if economy is not None else []),
        )

    def close(self) -> None:
        self._sweeper.cancel()

        async def shutdown() -> None:
            await self.redis.aclose()
            await self.runtime.close()

        try:
            self.run(shutdown())
        finally:
            self._thread.stop_blocking()


_runtime: WorkerRuntime | None = None
_runtime_lock = threading.Lock()


def worker_runtime() -> WorkerRuntime:
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = WorkerRuntime(load_settings())
        return _runtime


class ScoreJobTask(Task):  # type: ignore[misc]
    """Marks a job failed for good once Celery stops retrying it."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        job_id, attempts = args[0], self.request.retries + 1
        log.error("job %s raised %r on %d attempt(s); marking it failed", job_id, exc, attempts)
        rt = worker_runtime()
        try:
            rt.run(rt.runtime.jobs.give_up(job_id, failure_message(exc, attempts)))
            rt.run(publish_done(rt.redis, job_id))
        except Exception:  # the database is down: the sweeper re-sends the job later
            log.warning("could not mark job %s failed; it will be re-sent", job_id, exc_info=True)


def create_celery(settings: Settings) -> Celery:
    configure_tracing("empathy-judge-worker", celery=True)
    app = Celery("empathy-judge", broker=settings.redis_url)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_ignore_result=True,
        task_default_queue=QUEUE,
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        broker_transport_options={"visibility_timeout": 3600},
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        # survives Celery 5.7.0's AttributeError on a lost connection: the close of the old
        # connection and late acknowledgements on it (judge/worker/consumer.py)
        worker_consumer="judge.worker.consumer:RecoveringConsumer",
    )

    policy = JobRetryPolicy.from_settings(settings)

    # A run that raises is retried by Celery itself, with the backoff of the one policy the
    # embedded runner applies too; after the last retry ``on_failure`` marks the job failed.
    @app.task(  # type: ignore[untyped-decorator]
        base=ScoreJobTask,
        name=TASK_NAME,
        bind=True,
        acks_late=True,
        autoretry_for=(Exception,),
        max_retries=policy.max_retries,
        retry_backoff=policy.base_s,
        retry_backoff_max=policy.max_delay_s,
        retry_jitter=False,
    )
    def score_job(self: Task, job_id: str) -> None:
        rt = worker_runtime()
        rt.run(_run_and_tell(rt, job_id))

    return app


async def _run_and_tell(rt: WorkerRuntime, job_id: str) -> None:
    """Run the job, then publish its completion notice, in one hop to the runtime's loop."""
    await rt.runtime.jobs.run_job(job_id)
    await publish_done(rt.redis, job_id)


@worker_ready.connect  # type: ignore[untyped-decorator]
def _start_runtime(**_: Any) -> None:
    runtime = worker_runtime()  # build before the first task: imports, engine, simulator, sweeper
    port = runtime.settings.worker.metrics_port
    if port:
        settings = runtime.settings
        metrics.add_collector(RunGaugeCollector(settings.database_url, settings.run_gauges_ttl_s))
        metrics.serve_metrics(port, addr=settings.worker.metrics_host)
        log.info(
            "worker metrics on http://%s:%d/metrics", runtime.settings.worker.metrics_host, port
        )
    freeze_startup_objects()  # a worker process lives as long as it serves


@worker_shutdown.connect  # type: ignore[untyped-decorator]
def _stop_runtime(**_: Any) -> None:
    if _runtime is not None:
        _runtime.close()
    shutdown_tracing()


celery_app = create_celery(load_settings())
