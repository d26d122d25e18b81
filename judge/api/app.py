"""``create_app(settings)``: the Litestar application and its lifespan.

Without ``JUDGE_REDIS_URL`` jobs run in this process (embedded mode); with it they go to
Celery workers through Redis and this process only waits for their completion notices.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.openapi.config import OpenAPIConfig
from litestar.router import Router
from pydantic import BaseModel

from judge import __version__, metrics
from judge.api import log_escape
from judge.api.auth import require_key
from judge.api.content import refuse_encoded_bodies
from judge.api.docs import render_plugins, swagger_assets
from judge.api.observability import HttpMetricsMiddleware, metrics_endpoint
from judge.api.problems import handle_exception
from judge.api.quotas import Quotas
from judge.api.routes import HANDLERS, REQUEST_MODELS
from judge.api.security_headers import SecurityHeadersMiddleware
from judge.api.state import ApiState
from judge.api.ui import TEMPLATES, ui_router
from judge.domain.wire import wire_json
from judge.errors import ConfigError
from judge.runtime.composition import build_runtime
from judge.runtime.gc_pauses import freeze_startup_objects
from judge.runtime.in_process import JobWaiter
from judge.runtime.job_thread import JobThread
from judge.runtime.outbox import OutboxDispatcher, OutboxDrainer
from judge.runtime.run_gauges import RunGaugeCollector
from judge.services.keys import KeyCache
from judge.settings import Settings, is_loopback
from judge.tracing import configure_tracing, shutdown_tracing

log = logging.getLogger(__name__)


def bind_refusal(settings: Settings, active_keys: int | None = None) -> str | None:
    """Why this app must not serve on ``settings.api.host`` (None when it may): without keys
    anyone who can reach a non-loopback address could use it, and with keys required but none
    created every request would be refused. ``active_keys`` None: not known yet."""
    host = settings.api.host
    if is_loopback(host):
        return None
    if not settings.api.keys_required():
        return (
            f"refusing to bind {host} with api.require_keys off: anyone who can reach this "
            "address could use the service. Unset JUDGE_API__REQUIRE_KEYS or bind 127.0.0.1."
        )
    if active_keys == 0:
        return (
            f"refusing to bind {host}: API keys are required there and none exist, so every "
            "request would be refused. Create one with `judge keys create NAME`."
        )
    return None


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def create_app(settings: Settings, *, freeze_at_start: bool = False) -> Litestar:
    """The app for ``settings`` (``settings.api.host`` is the address it will be bound to);
    raises :class:`ConfigError` when :func:`bind_refusal` forbids serving there.
    ``freeze_at_start``: once started, keep what exists out of the garbage collector's full
    passes (:mod:`judge.runtime.gc_pauses`; for the ``judge serve`` process only)."""
    refusal = bind_refusal(settings)
    if refusal:
        raise ConfigError(refusal)
    log_escape.install()  # a caller's path or header never forges a log line
    plugins: list[Any] = []
    if configure_tracing("empathy-judge-api", celery=bool(settings.redis_url)):
        from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin

        plugins.append(OpenTelemetryPlugin(OpenTelemetryConfig()))

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        # the jobs of embedded mode run on a thread with a runtime of their own (JobThread)
        runtime = build_runtime(settings, runs_jobs=False)
        closers: list[Any] = []
        try:
            await runtime.database.check_migrated()
            refusal = bind_refusal(settings, await runtime.keys.count_active())
            if refusal:
                raise ConfigError(refusal)
            await runtime.database.open_reads()
            metrics.add_collector(
                RunGaugeCollector(settings.database_url, ttl_s=settings.run_gauges_ttl_s)
            )
            waiter = JobWaiter(runtime.jobs)
            await waiter.start()
            closers.append(waiter.stop)
            sending: set[str] = set()  # embedded: a job is the runner's once it is queued
            runner: JobThread | None = None
            if settings.redis_url:
                from judge.runtime.notify import RedisNotifier
                from judge.worker.dispatch import CeleryDispatcher

                dispatcher: Any = OutboxDispatcher(CeleryDispatcher(settings), runtime.jobs)
                closers.append(dispatcher.close)
                sending = dispatcher.sending
                notifier = RedisNotifier(settings.redis_url, waiter)
                await notifier.start()
                closers.append(notifier.stop)
                extras = {"redis_ping": notifier.ping}
                mode = "celery"
            else:
                jobs = JobThread(settings, waiter)
                closers.append(jobs.stop)
                await jobs.start()
                dispatcher, extras, mode, runner = jobs, {}, "embedded", jobs
            drainer = OutboxDrainer(runtime.jobs, dispatcher, open_=sending)
            await drainer.start()
            closers.append(drainer.stop)
            api = settings.api
            keys = KeyCache(runtime.keys, fresh_s=api.key_cache_s, stale_s=api.key_stale_s)
            key_sync = asyncio.create_task(keys.keep_synced())
            closers.append(lambda: _cancelled(key_sync))
            app.state.api = ApiState(
                runtime=runtime,
                dispatcher=dispatcher,
                waiter=waiter,
                mode=mode,
                keys=keys,
                quotas=Quotas(api, runtime),
                extras=extras,
                runner=runner,
            )
            if freeze_at_start:
                freeze_startup_objects()
            yield
        finally:
            for close in reversed(closers):
                await close()
            await runtime.close()
            shutdown_tracing()

    return Litestar(
        route_handlers=[
            *HANDLERS,
            *([] if settings.api.metrics_port else [metrics_endpoint]),
            swagger_assets(),
            ui_router(),
        ],
        middleware=[HttpMetricsMiddleware(), SecurityHeadersMiddleware()],
        # deny by default: a route without opt={"public": True} needs a key (see auth.py)
        guards=[require_key, refuse_encoded_bodies],
        exception_handlers={Exception: handle_exception},
        # the services' response models, as their builders set them (judge.domain.wire)
        type_encoders={BaseModel: wire_json},
        lifespan=[lifespan],
        template_config=TEMPLATES,
        plugins=plugins,
        request_max_body_size=settings.api.max_body_bytes,
        openapi_config=OpenAPIConfig(
            title="empathy-judge",
            version=__version__,
            description=(
                "Score empathic and relational communication with a panel of LLM judges; "
                "every dimension carries a reliability flag."
            ),
            path="/schema",
            # the API docs are public, like /health: they describe, they serve no data
            openapi_router=Router(
                "/schema", route_handlers=[], opt={"public": True}, include_in_schema=False
            ),
            render_plugins=render_plugins(REQUEST_MODELS, settings),
        ),
        debug=False,
    )
