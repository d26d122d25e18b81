"""``judge demo``: the embedded defaults end to end.

Migrates the configured database (a SQLite file in the working directory by default),
starts the simulator when no provider is configured, submits the bundled sample
conversations as score jobs, runs them in this process exactly as ``judge serve`` would,
and prints each result with its reliability flags.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from judge.cli._output import console, fail
from judge.cli._render import print_result
from judge.cli._runtime import service_runtime
from judge.domain.result import ScoreResult
from judge.errors import JudgeError
from judge.runtime.composition import ServiceRuntime
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.sample_conversations import SAMPLES, load_sample
from judge.services import schema
from judge.settings import Settings, load_settings


async def score_in_process(
    runtime: ServiceRuntime,
    settings: Settings,
    submissions: Sequence[tuple[str, str, dict[str, Any]]],
    panel_name: str | None,
) -> list[tuple[str, ScoreResult]]:
    """Score (label, rubric id, item) triples through the job service, in this process
    exactly as ``judge serve`` would, and return each label with its result."""
    waiter = JobWaiter(runtime.jobs)
    runner = InProcessRunner(runtime.jobs, waiter, concurrency=settings.worker.concurrency)
    await runner.start()
    try:
        submitted = []
        for label, rubric_id, raw_item in submissions:
            job = await runtime.jobs.submit_score(
                rubric_id=rubric_id, raw_item=raw_item, panel_name=panel_name
            )
            submitted.append((label, job.id))
        await runner.dispatch([job_id for _, job_id in submitted])
        await waiter.wait([job_id for _, job_id in submitted], timeout=300)
    finally:
        await runner.stop()
    results = []
    for label, job_id in submitted:
        done = await runtime.jobs.get_job(job_id)
        if done is None or not done.result_json:
            why = done.error if done else "lost"
            raise JudgeError(f"{label} did not complete: {why}")
        results.append((label, ScoreResult.model_validate(json.loads(done.result_json))))
    return results


async def _run_demo(panel_name: str | None) -> tuple[list[tuple[str, ScoreResult]], str, bool]:
    settings = load_settings()
    await schema.upgrade(settings.database_url)
    async with service_runtime(settings) as runtime:
        samples = [
            (f"{label} ({file_name})", rubric_id, load_sample(file_name))
            for file_name, rubric_id, label in SAMPLES
        ]
        results = await score_in_process(runtime, settings, samples, panel_name)
        simulated = runtime.jobs.panel(panel_name).simulated
        return results, schema.shown_url(settings.database_url), simulated


@click.command("demo")
@click.option(
    "--panel", "panel_name", default=None, help="configured panel (default panel if unset)"
)
@click.option(
    "--loop",
    is_flag=True,
    help="walk the expert loop instead: blind tasks, SIMULATED experts' labels, calibration, "
    "scores with their flags",
)
@click.option(
    "--dir",
    "loop_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("expert-loop"),
    show_default=True,
    help="with --loop: where the round, the labels and the loop's own database go",
)
def demo(panel_name: str | None, loop: bool, loop_dir: Path) -> None:
    """Score the bundled sample conversations and print scores with reliability flags."""
    if loop:
        from judge.cli.demo_loop import run_loop

        run_loop(loop_dir, panel_name)
        return
    out = console()
    try:
        results, database, simulated = asyncio.run(_run_demo(panel_name))
    except JudgeError as exc:
        fail(exc.message)
        return
    if simulated:
        out.print(
            "[bold magenta]No LLM provider is configured: the judges below are the bundled "
            "simulator (personas accurate, noisy, lenient), not real models.[/bold magenta]\n"
            "Set OPENAI_API_KEY (or another provider key) or define panels in the file named "
            "by JUDGE_CONFIG to use real judges.\n"
        )
    for label, result in results:
        print_result(out, result, label)
    out.print(
        "Flags: trusted = experts agree on the dimension and this panel was calibrated against "
        "them; caution = usable with care (reasons listed); untrusted = do not rely on it.\n"
        f"Results are stored in {database}.\n"
        "Next: `uv run judge serve --migrate`, then open http://127.0.0.1:8000/schema/swagger "
        "for the API docs; `uv run judge score --rubric epitome FILE --format json`."
    )
