"""``judge serve``, ``judge worker`` and ``judge db upgrade``."""

from __future__ import annotations

import asyncio

import click

from judge.cli._output import fail
from judge.cli._simulator import simulator_for
from judge.errors import JudgeError
from judge.services import schema
from judge.services.panels import check_credentials
from judge.settings import Settings, load_settings


def _configure_metrics(settings: Settings) -> None:
    """Before anything imports prometheus_client: multiprocess mode when a directory is set."""
    from judge import metrics

    metrics.configure_metrics(settings.metrics_dir)
    if settings.metrics_dir is not None:
        metrics.clean_multiproc_dir(settings.metrics_dir)


@click.command("serve")
@click.option("--host", default=None, help="bind address (default 127.0.0.1)")
@click.option("--port", type=int, default=None, help="port (default 8000)")
@click.option("--migrate", is_flag=True, help="apply database migrations first")
def serve(host: str | None, port: int | None, migrate: bool) -> None:
    """Run the HTTP API (jobs in-process, or on Celery workers when JUDGE_REDIS_URL is set)."""
    import uvicorn

    from judge.api.app import bind_refusal, create_app
    from judge.api.edge import uvicorn_options

    try:
        settings = load_settings()
        _configure_metrics(settings)
        host = host or settings.api.host
        port = settings.api.port if port is None else port
        active_keys = asyncio.run(schema.prepare(settings.database_url, migrate=migrate))
        # with Redis the workers call the judges (and check their keys); no LiteLLM here
        check_credentials(settings, provider_rules=not settings.redis_url)
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", str(exc)))
        return
    settings.api.host = host  # the app enforces keys from the address it is bound to
    refusal = bind_refusal(settings, active_keys)
    if refusal:
        fail(refusal)
    # unset require_keys on loopback: keyless use ends once a key exists (see api/auth.py)
    required = settings.api.keys_required() or (
        settings.api.require_keys is None and active_keys > 0
    )
    mode = (
        f"Celery workers via {schema.shown_url(settings.redis_url)}"
        if settings.redis_url
        else "in-process jobs"
    )
    auth = (
        f"API keys required ({active_keys} active)"
        if required
        else "no API key needed on loopback until one is created"
    )
    click.echo(
        f"empathy-judge on http://{host}:{port} ({mode}; {auth}; "
        f"database {schema.shown_url(settings.database_url)})"
    )
    if settings.api.metrics_port:
        from judge import metrics

        metrics.serve_metrics(settings.api.metrics_port, addr=host)
        click.echo(f"metrics on http://{host}:{settings.api.metrics_port}/metrics")
    click.echo(
        f"API docs: http://{host}:{port}/schema/swagger  (OpenAPI JSON: /schema/openapi.json)"
    )
    try:
        # embedded jobs with simulated judges need the bundled simulator; Celery workers
        # start their own
        with simulator_for(settings, None if not settings.redis_url else ()) as settings:
            app = create_app(settings, freeze_at_start=True)
            uvicorn.run(
                app,
                host=host,
                port=port,
                log_level="warning",
                lifespan="on",
                **uvicorn_options(settings.api),
            )
    except JudgeError as exc:
        fail(exc.message)


@click.command("worker")
@click.option(
    "--concurrency", type=int, default=None, help="items in flight (default from settings)"
)
@click.option("--loglevel", default="INFO", show_default=True)
def worker(concurrency: int | None, loglevel: str) -> None:
    """Run a Celery worker (needs JUDGE_REDIS_URL)."""
    settings = load_settings()
    _configure_metrics(settings)
    if not settings.redis_url:
        fail(
            "JUDGE_REDIS_URL is not set: workers need a Redis broker "
            "(without one, `judge serve` runs jobs itself)"
        )
    try:
        asyncio.run(schema.prepare(settings.database_url))
        check_credentials(settings)
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", str(exc)))
    from judge.worker.app import celery_app
    from judge.worker.dispatch import QUEUES

    args = [
        "worker",
        "--pool=threads",
        f"--concurrency={concurrency or settings.worker.concurrency}",
        f"--loglevel={loglevel}",
        f"--queues={','.join(QUEUES)}",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    try:
        # the worker builds its runtime from the environment: it finds the URL there
        with simulator_for(settings, export=True):
            celery_app.worker_main(args)
    except JudgeError as exc:
        fail(exc.message)


@click.group("db")
def db() -> None:
    """Database schema management."""


@db.command("upgrade")
def upgrade() -> None:
    """Create or upgrade the schema to this version (idempotent)."""
    settings = load_settings()

    try:
        before, after = asyncio.run(schema.upgrade(settings.database_url))
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", str(exc)))
        return
    where = schema.shown_url(settings.database_url)
    if before == after:
        click.echo(f"{where}: already at revision {after}")
    else:
        click.echo(f"{where}: upgraded from {before or 'empty'} to {after}")
