"""``judge beat --once`` prints the drift its canary runs measured (embedded jobs: the runs
finish before it exits), on SQLite and PostgreSQL, at 80 columns."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.domain.principal import OPERATOR
from judge.persistence.database import Database
from judge.runtime.composition import build_runtime
from judge.settings import load_settings
from judge.simulator import SimulatorProcess
from tests.fixtures.sample_texts import POSTS, RESPONSES

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

DIMS = ("emotional_reactions", "interpretations", "explorations")


def _labelled(n: int) -> dict[str, Any]:
    item = {"id": f"item-{n}", "seeker_post": POSTS[n % len(POSTS)], "response": RESPONSES[n]}
    return {"id": f"item-{n}", "item": item, "labels": {"expert": dict.fromkeys(DIMS, n % 3)}}


async def _canary(database_url: str, simulator_url: str) -> str:
    """A completed calibration run and a canary on it (due at once); the canary's id."""
    settings = load_settings(database_url=database_url, simulator={"url": simulator_url})
    database = Database(settings.database_url)
    try:
        await database.upgrade()
    finally:
        await database.dispose()
    runtime = build_runtime(settings)
    try:
        run, job_ids = await runtime.calibrations.submit(
            rubric_id="epitome", panel_name=None, items=[_labelled(n) for n in range(4)]
        )
        await runtime.jobs.run_all(job_ids)
        canary = await runtime.canaries.register(
            OPERATOR, baseline_run_id=run.id, interval_s=3600, name="nightly"
        )
        return canary.id
    finally:
        await runtime.close()


def test_beat_once_prints_the_drift_it_measured(
    database_url: str,
    service_simulator: SimulatorProcess,
    clean_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asyncio.run(_canary(database_url, service_simulator.base_url))
    monkeypatch.setenv("JUDGE_DATABASE_URL", database_url)
    monkeypatch.setenv("JUDGE_SIMULATOR__URL", service_simulator.base_url)
    monkeypatch.setenv("JUDGE_BEAT__METRICS_PORT", "0")
    monkeypatch.setenv("COLUMNS", "80")
    done = CliRunner().invoke(main, ["beat", "--once"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0].startswith("started 1 canary run(s): ")
    run_id = lines[0].rsplit(" ", 1)[-1]
    assert f"canary nightly run {run_id}: drift from its baseline" in done.output
    assert "SIMULATED JUDGES" in done.output  # the simulator's personas judged
    assert max(len(line) for line in lines) <= 80
    # a row per dimension and rater (the three personas and the panel), every figure shown
    rows = [line.split("│")[1:-1] for line in lines if line.startswith("│")]
    assert {(row[0].strip(), row[1].strip()) for row in rows} == {
        (dim, rater) for dim in DIMS for rater in ("accurate", "noisy", "lenient", "panel")
    }
    assert all(re.fullmatch(r"[+-]\d\.\d\d|\?", cell.strip()) for row in rows for cell in row[2:])
    assert "Δκ: their difference" in " ".join(done.output.split())
