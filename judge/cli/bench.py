"""``judge bench``: measure overhead, throughput, calls, tokens, cache and memory against the
simulator and a plain LiteLLM baseline (docs/DESIGN.md section 7)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from judge.cli._output import console, fail


def _load(path: Path) -> dict[str, Any]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        fail(f"cannot read {path}: {exc}")
    if not isinstance(data, dict):
        fail(f"{path} is not a judge bench result")
    result: dict[str, Any] = data
    return result


@click.command("bench")
@click.option(
    "--profile",
    "profile_name",
    type=click.Choice(["quick", "full"]),
    default="quick",
    show_default=True,
    help="quick: 200 items, 30 single samples; full: 2,000 items, 100 samples (200 ms)",
)
@click.option("--items", type=click.IntRange(1), default=None, help="batch size override")
@click.option("--latency-ms", type=click.FloatRange(0), default=None, help="simulator latency")
@click.option("--samples", type=click.IntRange(1), default=None, help="single-item samples")
@click.option(
    "--concurrency", type=click.IntRange(1), default=None, help="items in flight (default 64)"
)
@click.option(
    "--workers",
    type=click.IntRange(1, 16),
    default=None,
    help="judge worker processes in celery mode (default 1; concurrency is split)",
)
@click.option(
    "--mode",
    "modes",
    type=click.Choice(["embedded", "celery"]),
    multiple=True,
    help="run only these modes (default: both)",
)
@click.option(
    "--redis-url", default=None, help="Redis to use (flushed!); default 127.0.0.1:6379 or private"
)
@click.option(
    "--redis-db",
    type=click.IntRange(0, 15),
    default=None,
    help="database index on 127.0.0.1:6379 (default: the first empty one of 7..1)",
)
@click.option(
    "--database",
    default=None,
    metavar="postgresql://USER@HOST:PORT",
    help="run on fresh databases of this PostgreSQL server (created and dropped); default SQLite",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON results (default bench/results/<timestamp>.json)",
)
@click.option(
    "--keep-logs",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="copy the service processes' logs to this directory",
)
@click.option(
    "--compare",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="a saved result to print deltas against",
)
@click.option(
    "--show",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="print a saved result instead of running",
)
def bench(
    profile_name: str,
    items: int | None,
    latency_ms: float | None,
    samples: int | None,
    concurrency: int | None,
    workers: int | None,
    modes: tuple[str, ...],
    redis_url: str | None,
    redis_db: int | None,
    database: str | None,
    output: Path | None,
    keep_logs: Path | None,
    compare: Path | None,
    show: Path | None,
) -> None:
    """Benchmark the service against the LLM simulator and a plain LiteLLM baseline.

    Starts the simulator (fixed latency, no jitter), migrates fresh SQLite databases, runs the
    baseline, then `judge serve` alone and `judge serve` + `judge worker` via Redis/Celery:
    single-item overhead with ?wait=, batch throughput, a repeated batch (cache), every
    rubric's calls and tokens per item, and peak RSS. Prints a table and writes JSON.
    """
    from judge.bench.procs import BenchError
    from judge.bench.profiles import MODES, PROFILES
    from judge.bench.report import (
        default_output,
        evaluate_targets,
        print_comparison,
        print_results,
        write_results,
    )
    from judge.bench.run import checkout_root, run_benchmark

    out = console()
    if not out.is_terminal:
        out.width = 120
    started = time.perf_counter()
    if show is not None:
        results = _load(show)
    else:
        profile = PROFILES[profile_name].with_overrides(
            items=items,
            latency_ms=latency_ms,
            single_samples=samples,
            concurrency=concurrency,
            workers=workers,
        )
        chosen = [m for m in MODES if m in modes] if modes else list(MODES)
        try:
            results = run_benchmark(
                profile,
                modes=chosen,
                redis_url=redis_url,
                redis_db=redis_db,
                logs_dir=keep_logs,
                database=database,
                progress=lambda msg: out.print(
                    f"[dim]{time.perf_counter() - started:6.1f} s  {msg}[/dim]"
                ),
            )
        except BenchError as exc:
            fail(str(exc))
            return
        results["targets"] = evaluate_targets(results)
        path = output or default_output(checkout_root() or Path.cwd())
        write_results(results, path)
    print_results(out, results)
    if show is None:
        out.print(f"results written to {path}")
    if compare is not None:
        print_comparison(out, _load(compare), results)
