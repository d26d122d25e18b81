"""``judge demo``: the embedded defaults end to end.

Migrates the configured database (a SQLite file in the working directory by default),
starts the simulator when no provider is configured, submits the bundled sample
conversations as score jobs, runs them in this process exactly as ``judge serve`` would,
and prints each result with its reliability flags.
"""

from __future__ import annotations

import asyncio
import json

import click

from judge.cli._output import console, fail
from judge.cli._render import print_legend, print_result
from judge.cli._runtime import service_runtime
from judge.domain.result import ScoreResult
from judge.errors import JudgeError
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.sample_conversations import SAMPLES, load_sample
from judge.services import schema
from judge.settings import load_settings


async def _run_demo(panel_name: str | None) -> tuple[list[tuple[str, ScoreResult]], str, bool]:
    settings = load_settings()
    await schema.upgrade(settings.database_url)
    async with service_runtime(settings) as runtime:
        waiter = JobWaiter(runtime.jobs)
        runner = InProcessRunner(runtime.jobs, waiter, concurrency=settings.worker.concurrency)
        await runner.start()
        try:
            submitted = []
            for file_name, rubric_id, label in SAMPLES:
                job = await runtime.jobs.submit_score(
                    rubric_id=rubric_id, raw_item=load_sample(file_name), panel_name=panel_name
                )
                submitted.append((f"{label} ({file_name})", job.id))
            await runner.dispatch([job_id for _, job_id in submitted])
            await waiter.wait([job_id for _, job_id in submitted], timeout=300)
        finally:
            await runner.stop()
        results = []
        for label, job_id in submitted:
            done = await runtime.jobs.get_job(job_id)
            if done is None or not done.result_json:
                why = done.error if done else "lost"
                raise JudgeError(f"sample {label} did not complete: {why}")
            results.append((label, ScoreResult.model_validate(json.loads(done.result_json))))
        simulated = runtime.jobs.panel(panel_name).simulated
        return results, schema.shown_url(settings.database_url), simulated


@click.command("demo")
@click.option(
    "--panel", "panel_name", default=None, help="configured panel (default panel if unset)"
)
def demo(panel_name: str | None) -> None:
    """Score the bundled sample conversations and print scores with reliability flags."""
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
    print_legend(out)
    out.print(
        "Flags: trusted = experts agree on the dimension and this panel was calibrated against "
        "them; caution = usable with care (reasons listed); untrusted = do not rely on it.\n"
        f"Results are stored in {database}.\n"
        "Next: `uv run judge serve --migrate`, then open http://127.0.0.1:8000/schema/swagger "
        "for the API docs; `uv run judge score --rubric epitome FILE --format json`."
    )
