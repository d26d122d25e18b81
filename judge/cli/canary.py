"""``judge canary add | list | run`` and ``judge beat`` (the canary scheduler)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import click
from rich.markup import escape

from judge.cli._output import FORMAT_OPTION, console, fail, print_json, wrapping_table
from judge.cli._runtime import service_runtime
from judge.domain.principal import OPERATOR
from judge.domain.wire import CalibrationView
from judge.errors import JudgeError
from judge.runtime.composition import ServiceRuntime
from judge.settings import Settings, load_settings

T = TypeVar("T")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_interval(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text)
    if not match:
        raise click.BadParameter(f"{text!r}: use a number with s, m, h or d, e.g. 24h")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


def _with_runtime(action: Callable[[ServiceRuntime], Awaitable[T]]) -> T:
    async def run() -> T:
        async with service_runtime(load_settings()) as runtime:
            return await action(runtime)

    try:
        return asyncio.run(run())
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", str(exc)))
        raise AssertionError from exc


async def _dispatcher(
    settings: Settings, runtime: ServiceRuntime
) -> Callable[[Sequence[str]], Awaitable[None]]:
    if settings.redis_url:
        from judge.runtime.outbox import OutboxDispatcher
        from judge.worker.dispatch import CeleryDispatcher

        return OutboxDispatcher(CeleryDispatcher(settings), runtime.jobs).dispatch

    return runtime.jobs.run_all


@click.group("canary")
def canary() -> None:
    """Register calibration sets as canaries that `judge beat` re-scores on a schedule."""


@canary.command("add")
@click.option(
    "--calibration", "run_id", required=True, help="a completed calibration run: the baseline"
)
@click.option("--every", "every", default="24h", show_default=True, help="interval, e.g. 30m, 24h")
@click.option("--name", default=None)
def add(run_id: str, every: str, name: str | None) -> None:
    """Register a canary whose baseline is the calibration run RUN."""
    interval = parse_interval(every)
    created = _with_runtime(
        lambda rt: rt.canaries.register(
            OPERATOR, baseline_run_id=run_id, interval_s=interval, name=name
        )
    )
    click.echo(
        f"canary {created.id} ({created.name}): {created.rubric_id}, "
        f"panel {created.panel_name}, every {every}"
    )


@canary.command("list")
@click.option("--rubric", default=None)
@FORMAT_OPTION
def list_canaries(rubric: str | None, fmt: str) -> None:
    """List canaries."""
    rows = _with_runtime(lambda rt: rt.canaries.all(rubric))
    data: list[dict[str, Any]] = [r.model_dump(mode="json") for r in rows]
    if fmt == "json":
        print_json(data)
        return
    table = wrapping_table("id", "name", "rubric", "panel", "every (s)", "baseline", "last run")
    for r in data:
        table.add_row(
            r["id"],
            r["name"],
            r["rubric_id"],
            r["panel_name"],
            f"{r['interval_s']:g}",
            r["baseline_run_id"],
            str(r["last_run_at"] or "-"),
        )
    console().print(table)


@click.command("beat")
@click.option("--tick", type=float, default=30.0, show_default=True, help="seconds between checks")
@click.option("--once", is_flag=True, help="start the due canaries once and exit")
def beat(tick: float, once: bool) -> None:
    """Re-score due canaries (jobs go to Celery when JUDGE_REDIS_URL is set, else run here).

    Serves /metrics on JUDGE_BEAT__METRICS_PORT (default 9809; 0 = off), except with --once:
    the calibration, reliability and drift gauges, read from the database."""
    from judge.runtime.beat import beat_forever, start_due_canaries

    settings = load_settings()
    from judge import metrics

    metrics.configure_metrics(settings.metrics_dir)

    async def run(runtime: ServiceRuntime) -> None:
        dispatch = await _dispatcher(settings, runtime)
        if once:
            started = await start_due_canaries(runtime.canaries, dispatch)
            click.echo(f"started {len(started)} canary run(s): {', '.join(started) or '-'}")
            for run_id in started:
                print_drift(await runtime.calibrations.view(OPERATOR, run_id))
            return
        _serve_metrics(settings)
        click.echo(f"judge beat: checking canaries every {tick:g}s")
        await beat_forever(runtime.canaries, dispatch, tick_s=tick)

    with contextlib.suppress(KeyboardInterrupt):
        _with_runtime(run)


def _drift_value(value: float | None) -> str:
    return "?" if value is None else f"{value:+.2f}"


def print_drift(view: CalibrationView) -> None:
    """The drift a canary run measured against its baseline, per dimension and rater (or
    where to read it once a worker has finished the run)."""
    out = console()
    report = view.report
    canary = report.canary.name if report and report.canary else "?"
    if report is None or report.drift is None:
        out.print(
            f"canary {escape(canary)} run {view.id}: {view.status}; its drift will be in "
            f"GET /v1/calibrations/{view.id} once it completes"
        )
        return
    sim = " [bold magenta]\\[SIMULATED JUDGES][/bold magenta]" if view.simulated else ""
    out.print(f"canary {escape(canary)} run {view.id}: drift from its baseline{sim}")
    # short headers (explained below the table): the dimension ids keep the room at 80 columns
    table = wrapping_table("dimension", "rater", "κ", "base κ", "Δκ", "shift", "abst. Δ")
    for dim_id, raters in report.drift.items():
        for rater, drift in raters.items():
            table.add_row(
                escape(dim_id),
                escape(rater.split("/")[-1]),
                _drift_value(drift.kappa),
                _drift_value(drift.baseline_kappa),
                _drift_value(drift.kappa_delta),
                _drift_value(drift.mean_shift),
                _drift_value(drift.abstention_delta),
            )
    out.print(table)
    out.print(
        "[dim]κ, base κ: agreement with the experts' labels in this run and in the baseline "
        "run; Δκ: their difference; shift: mean rating change on the 0..1 scale; abst. Δ: "
        "change in the share of items the rater abstained on; ? = not measurable[/dim]"
    )


def _serve_metrics(settings: Settings) -> None:
    from judge import metrics
    from judge.runtime.run_gauges import RunGaugeCollector

    port, host = settings.beat.metrics_port, settings.beat.metrics_host
    if not port:
        return
    metrics.add_collector(RunGaugeCollector(settings.database_url, settings.run_gauges_ttl_s))
    metrics.serve_metrics(port, addr=host)
    click.echo(f"judge beat: metrics on http://{host}:{port}/metrics")
