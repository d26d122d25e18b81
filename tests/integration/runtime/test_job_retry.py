"""The one retry policy (judge/runtime/job_retry.py): the embedded runner retries a run
that raises with its backoff and marks the job failed after ``worker.max_attempts`` runs;
the Celery task is given the same numbers for Celery's own autoretry."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from judge.llm.client import ChatRequest
from judge.llm.scripted import ScriptedChatClient
from judge.runtime.composition import build_runtime
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.runtime.job_retry import JobRetryPolicy
from judge.sample_conversations import load_sample
from judge.services import schema
from judge.settings import load_settings


def test_backoff_doubles_from_one_second_up_to_a_minute() -> None:
    policy = JobRetryPolicy(max_attempts=5)
    assert [policy.delay_s(n) for n in range(8)] == [1, 2, 4, 8, 16, 32, 60, 60]
    # retries outlast an outage of minutes (a run that fails before its claim counts none)
    assert sum(policy.delay_s(n) for n in range(policy.max_retries)) >= 180
    assert not policy.exhausted(4)
    assert policy.exhausted(5)


def test_a_run_that_keeps_raising_is_retried_then_failed_with_a_reason(tmp_path: Path) -> None:
    def broken(request: ChatRequest) -> str:
        raise RuntimeError("a bug in a judge adapter")

    settings = load_settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'retry.db'}",
        # the scripted client answers: the simulator's address is never called
        simulator={"url": "http://127.0.0.1:9/v1"},
        worker={"max_attempts": 3, "cache_enabled": False},
    )

    async def run() -> tuple[str, str | None, int, float]:
        await schema.upgrade(settings.database_url)
        runtime = build_runtime(settings)
        script = ScriptedChatClient(broken)
        runtime.jobs.scorer.client = script
        waiter = JobWaiter(runtime.jobs, check_s=0.05)
        runner = InProcessRunner(runtime.jobs, waiter, concurrency=2)
        await runner.start()
        try:
            job = await runtime.jobs.submit_score(
                rubric_id="epitome", raw_item=load_sample("reddit_style_post.json"), panel_name=None
            )
            started = time.monotonic()
            await runner.dispatch([job.id])
            while True:
                done = await runtime.jobs.get_job(job.id)
                assert done is not None
                if done.status == "failed" or time.monotonic() - started > 240:
                    break
                await asyncio.sleep(0.05)
            judges = len(runtime.jobs.panel(None).judges)
            return (
                done.status,
                done.error,
                len(script.requests) // judges,
                time.monotonic() - started,
            )
        finally:
            await runner.stop()
            await runtime.close()

    status, error, runs, elapsed = asyncio.run(run())
    assert status == "failed"
    assert error is not None
    assert error.startswith("internal_error: scoring raised RuntimeError")
    assert "on 3 attempt(s)" in error
    assert runs == 3
    assert elapsed >= 1 + 2 - 0.2  # waited the policy's backoff between the runs


def test_the_celery_task_retries_with_the_same_policy() -> None:
    from judge.worker.app import celery_app
    from judge.worker.dispatch import TASK_NAME

    task = celery_app.tasks[TASK_NAME]
    policy = JobRetryPolicy.from_settings(load_settings())
    assert task.autoretry_for == (Exception,)
    assert task.max_retries == policy.max_retries
    assert (task.retry_backoff, task.retry_backoff_max) == (policy.base_s, policy.max_delay_s)
    assert task.retry_jitter is False
