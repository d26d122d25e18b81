"""OpenTelemetry: the API and a Celery worker (or the API alone, in embedded mode) export over
OTLP/HTTP to a receiver on loopback, and one trace links the HTTP request, the Celery message
and task, the job and each judge's LLM call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.simulator import SimulatorProcess
from tests.fixtures.otlp_receiver import OtlpReceiver, ReceivedSpan
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import RedisServer, make_stack, sqlite_url

pytestmark = pytest.mark.integration
SERVER, CLIENT, PRODUCER, CONSUMER = 2, 3, 4, 5  # OTLP span kinds
ITEM = {"seeker_post": POSTS[0], "response": RESPONSES[0]}
PANEL = {"openai/accurate", "openai/noisy", "openai/lenient"}


@pytest.fixture
def otlp() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        yield receiver


def score_with_tracing(
    tmp_path: Path,
    simulator: SimulatorProcess,
    config: Path,
    redis_url: str | None,
    otlp: OtlpReceiver,
) -> list[ReceivedSpan]:
    """One score through a traced stack; every span exported until the LLM calls arrived."""
    stack = make_stack(
        tmp_path,
        database_url=sqlite_url(tmp_path),
        simulator=simulator,
        config=config,
        redis_url=redis_url,
    )
    stack.env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}
    try:
        if redis_url:
            stack.start_worker()
        stack.start_api()
        reply = stack.client.post("/v1/scores?wait=60", json={"rubric": "epitome", "item": ITEM})
        assert reply.status_code == 200, reply.text
        assert reply.json()["status"] == "completed"

        def complete(spans: list[ReceivedSpan]) -> bool:
            """The request's trace holds every LLM call and no span whose parent is missing
            (spans are exported as they end: the Celery task's after the job's)."""
            roots = [s for s in spans if s.kind == SERVER and s.name == "POST /v1/scores"]
            if not roots:
                return False
            trace = [s for s in spans if s.trace_id == roots[0].trace_id]
            ids = {s.span_id for s in trace}
            calls = sum(1 for s in trace if s.name.startswith("chat "))
            return calls >= len(PANEL) and all(s.parent_id in ids for s in trace if s.parent_id)

        return otlp.wait_for(complete)
    finally:
        stack.stop()


def request_trace(spans: list[ReceivedSpan]) -> tuple[ReceivedSpan, list[ReceivedSpan]]:
    request = next(
        s for s in spans if s.kind == SERVER and s.attributes.get("http.target") == "/v1/scores"
    )
    trace = [s for s in spans if s.trace_id == request.trace_id]
    print(f"trace {request.trace_id}:")
    for s in trace:
        print(f"  {s.service} {s.name!r} span {s.span_id} parent {s.parent_id or '-'}")
    return request, trace


def ancestors(span: ReceivedSpan, trace: list[ReceivedSpan]) -> list[str]:
    by_id = {s.span_id: s for s in trace}
    chain, node = [], span
    while node.parent_id in by_id:
        node = by_id[node.parent_id]
        chain.append(node.span_id)
    return chain


def check_job_and_calls(request: ReceivedSpan, trace: list[ReceivedSpan]) -> ReceivedSpan:
    job = next(s for s in trace if s.name == "judge.job")
    assert job.attributes["judge.rubric"] == "epitome"
    assert job.attributes["judge.panel"] == "default"
    calls = [s for s in trace if s.name.startswith("chat ")]
    assert {s.attributes["gen_ai.request.model"] for s in calls} == PANEL
    for call in calls:
        assert call.kind == CLIENT
        assert call.attributes["judge.outcome"] == "ok"
        assert call.attributes["judge.rubric"] == "epitome"
        assert call.attributes["gen_ai.usage.input_tokens"] > 0
        assert call.attributes["gen_ai.usage.output_tokens"] > 0
        assert "judge.cost_usd" in call.attributes
        chain = ancestors(call, trace)
        assert job.span_id in chain
        assert request.span_id in chain
    return job


def test_one_trace_from_request_through_celery_to_llm_calls(
    tmp_path: Path,
    service_simulator: SimulatorProcess,
    service_config: Path,
    private_redis: RedisServer,
    otlp: OtlpReceiver,
) -> None:
    spans = score_with_tracing(
        tmp_path, service_simulator, service_config, private_redis.url(1), otlp
    )
    request, trace = request_trace(spans)
    assert {s.service for s in trace} == {"empathy-judge-api", "empathy-judge-worker"}
    publish = next(s for s in trace if s.kind == PRODUCER)
    task = next(s for s in trace if s.kind == CONSUMER)
    assert publish.service == "empathy-judge-api"
    assert task.service == "empathy-judge-worker"
    assert task.parent_id == publish.span_id  # the context travelled in the task headers
    job = check_job_and_calls(request, trace)
    assert job.parent_id == task.span_id  # the job runs inside the Celery task's span


def test_one_trace_from_request_to_llm_calls_in_embedded_mode(
    tmp_path: Path,
    service_simulator: SimulatorProcess,
    service_config: Path,
    otlp: OtlpReceiver,
) -> None:
    spans = score_with_tracing(tmp_path, service_simulator, service_config, None, otlp)
    request, trace = request_trace(spans)
    assert {s.service for s in trace} == {"empathy-judge-api"}
    job = check_job_and_calls(request, trace)
    assert request.span_id in ancestors(job, trace)
