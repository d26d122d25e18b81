"""Calibration, reliability and drift gauges survive restarts: they are read from the database
at scrape time (judge/runtime/run_gauges.py). A calibration and a canary run go through the live
stack (API, Celery worker, simulator); the API is restarted; its first scrape has the gauges,
equal to the stored runs. ``judge beat`` serves the same gauges on its own /metrics.
On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from judge.bench.procs import free_port
from judge.client import JudgeClient
from tests.fixtures import loopback
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import DEFAULT_PANEL, ServiceStack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RUBRIC = "epitome"
DIMENSIONS = ("emotional_reactions", "interpretations", "explorations")


def labelled(n: int) -> dict[str, Any]:
    first = {
        "emotional_reactions": n % 3,
        "interpretations": (n // 3) % 3,
        "explorations": (2 * n + 1) % 3,
    }
    second = first | {"emotional_reactions": (n + n // 4) % 3}
    return {
        "id": f"gauge-{n}",
        "item": {"seeker_post": f"{POSTS[n % 5]} (gauges {n})", "response": RESPONSES[n % 5]},
        "labels": {"expert1": first, "expert2": second},
    }


def scrape(url: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """name -> sorted label items -> value, for the run gauges of the rubric."""
    text = loopback.get(url, timeout=30).text
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.labels.get("rubric") == RUBRIC:
                key = tuple(sorted(sample.labels.items()))
                out.setdefault(sample.name, {})[key] = sample.value
    return out


def kappa_key(dim: str, model: str) -> tuple[tuple[str, str], ...]:
    return (("dimension", dim), ("model", model), ("rubric", RUBRIC))


@pytest.fixture(scope="module")
def runs(service_stack: ServiceStack) -> Iterator[dict[str, Any]]:
    """A calibration through the client, then a canary run started by ``judge beat --once``."""
    stack = service_stack
    with JudgeClient(stack.base_url, poll_interval=0.2) as client:
        baseline = client.calibrate(RUBRIC, [labelled(n) for n in range(12)], wait=180)
        assert baseline.status == "completed", baseline
        response = stack.client.post(
            "/v1/canaries",
            json={"calibration_id": baseline.id, "interval_s": 86400, "name": "restart"},
        )
        assert response.status_code == 201, response.text
        done = stack.judge("beat", "--once")
        assert done.stdout.startswith("started 1 canary run(s): "), done.stdout + done.stderr
        deadline = time.monotonic() + 120
        while True:
            (canary,) = client.reliability(RUBRIC).canaries
            finished = [r.model_dump() for r in canary.runs if r.status == "completed"]
            if finished:
                break
            assert time.monotonic() < deadline, canary
            time.sleep(0.3)
        yield {"baseline": baseline, "canary_run": finished[0]}


def test_gauges_are_exported_at_once_after_an_api_restart(
    service_stack: ServiceStack, runs: dict[str, Any]
) -> None:
    stack = service_stack
    assert stack.api is not None
    stack.api.stop()
    stack.start_api()
    gauges = scrape(f"{stack.base_url}/metrics")  # the new process's first scrape
    print("\nrun gauges after the restart:\n" + json.dumps({k: len(v) for k, v in gauges.items()}))
    canary_run = runs["canary_run"]
    kappa = gauges["judge_calibration_kappa"]
    for dim in DIMENSIONS:
        for model in (*DEFAULT_PANEL, "panel"):
            stored = canary_run["dimensions"][dim]["kappa"][model]
            assert kappa[kappa_key(dim, model)] == pytest.approx(stored, abs=1e-9), (dim, model)
        for key, name in (
            ("kappa_delta", "judge_drift_kappa_delta"),
            ("mean_shift", "judge_drift_mean_score_shift"),
            ("abstention_delta", "judge_drift_abstention_rate_delta"),
        ):
            for model, values in canary_run["drift"][dim].items():
                assert gauges[name][kappa_key(dim, model)] == pytest.approx(values[key], abs=1e-9)
    levels = gauges["judge_reliability_level"]
    baseline = runs["baseline"].report
    assert baseline is not None
    for dim in DIMENSIONS:
        flag = baseline.dimensions[dim].flag
        assert flag is not None
        current = flag.level
        one_hot = {
            level: levels[(("dimension", dim), ("level", level), ("rubric", RUBRIC))]
            for level in ("trusted", "caution", "untrusted")
        }
        assert one_hot == {level: float(level == current) for level in one_hot}, dim
    ((_, stamp),) = gauges["judge_canary_last_run_timestamp_seconds"].items()
    finished = canary_run["finished_at"]
    moment = datetime.fromisoformat(finished)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    assert stamp == pytest.approx(moment.timestamp(), abs=1e-3)


def test_judge_beat_serves_the_same_gauges(
    service_stack: ServiceStack, runs: dict[str, Any]
) -> None:
    stack = service_stack
    port = free_port()
    env = stack.env
    stack.env = env | {"JUDGE_BEAT__METRICS_PORT": str(port)}
    try:
        beat = stack._spawn("beat", ["beat", "--tick", "3600"])
    finally:
        stack.env = env
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        deadline = time.monotonic() + 60
        while True:
            try:
                from_beat = scrape(url)
                break
            except httpx.HTTPError:
                assert beat.alive, beat.log_text()
                assert time.monotonic() < deadline, beat.log_text()
                time.sleep(0.2)
        from_api = scrape(f"{stack.base_url}/metrics")
        for name in (
            "judge_calibration_kappa",
            "judge_reliability_level",
            "judge_drift_kappa_delta",
            "judge_canary_last_run_timestamp_seconds",
        ):
            assert from_beat[name], name
            assert from_beat[name] == from_api[name], name
    finally:
        beat.stop()
