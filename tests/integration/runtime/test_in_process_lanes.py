"""The embedded runner serves the interactive lane (single scores) before the bulk lane's
backlog: a score dispatched after a batch is run first. On a real SQLite database, with a
scripted chat client (its replies do not matter here, only which item it is asked about)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from judge.llm.client import ChatRequest
from judge.llm.scripted import ScriptedChatClient
from judge.runtime.composition import build_runtime
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.services import schema
from judge.settings import load_settings


def post(tag: str) -> dict[str, str]:
    return {"seeker_post": f"I feel lost ({tag}).", "response": "I am here for you."}


def test_a_score_dispatched_after_a_batch_runs_first(tmp_path: Path) -> None:
    settings = load_settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'lanes.db'}",
        simulator={"url": "http://127.0.0.1:9/v1"},
        worker={"cache_enabled": False},
    )

    def tag_of(request: ChatRequest) -> str:
        text = " ".join(m["content"] for m in request.messages)
        return next(tag for tag in ("bulk-0", "bulk-1", "bulk-2", "score") if f"({tag})" in text)

    async def run() -> list[str]:
        await schema.upgrade(settings.database_url)
        runtime = build_runtime(settings)
        script = ScriptedChatClient(lambda request: "no rating here")
        runtime.jobs.scorer.client = script
        runner = InProcessRunner(runtime.jobs, JobWaiter(runtime.jobs), concurrency=1)
        try:
            lines = [(n + 1, post(f"bulk-{n}")) for n in range(3)]
            _, bulk = await runtime.jobs.submit_batch(
                rubric_id="epitome", panel_name=None, lines=lines
            )
            score = await runtime.jobs.submit_score(
                rubric_id="epitome", raw_item=post("score"), panel_name=None
            )
            await runner.dispatch(bulk)
            await runner.dispatch([score.id], interactive=True)
            await runner.start()
            while await runtime.jobs.unfinished_among([*bulk, score.id]):
                await asyncio.sleep(0.05)
            seen: list[str] = []
            for request in script.requests:
                if tag_of(request) not in seen:
                    seen.append(tag_of(request))
            return seen
        finally:
            await runner.stop()
            await runtime.close()

    assert asyncio.run(run()) == ["score", "bulk-0", "bulk-1", "bulk-2"]
