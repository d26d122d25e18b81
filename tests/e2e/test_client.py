"""``judge.client`` against the real service (API, Celery worker, simulator on loopback):
scores, batches with progress and streamed results, problem details as typed exceptions, the
client's models against ``/schema/openapi.json``, and retries that honour ``Retry-After``
(on a tiny loopback server that answers 503 or 429 first)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from judge.client import AsyncJudgeClient, InvalidInput, JudgeClient, NotFound, WaitTimeout, _core
from judge.client.errors import RateLimited, ServiceUnavailable
from judge.domain import escalations, wire
from judge.domain.wire import BatchView, CompletedLine, CompletedScore
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import DEFAULT_PANEL, ServiceStack

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def item(tag: str, n: int) -> dict[str, Any]:
    return {
        "id": f"{tag}-{n}",
        "seeker_post": f"{POSTS[n % len(POSTS)]} ({tag} {n})",
        "response": RESPONSES[n % len(RESPONSES)],
    }


@pytest.fixture
def client(sqlite_stack: ServiceStack) -> Iterator[JudgeClient]:
    with JudgeClient(sqlite_stack.base_url, poll_interval=0.1) as judge:
        yield judge


# -- scores and batches ------------------------------------------------------------------------
def test_score_waits_for_a_typed_completed_result(client: JudgeClient) -> None:
    result = client.score("epitome", item("score", 0), wait=60)
    assert isinstance(result, CompletedScore), result
    assert result.item_id == "score-0"
    assert [j.model for j in result.panel] == list(DEFAULT_PANEL)
    assert set(result.dimensions) == {"emotional_reactions", "interpretations", "explorations"}
    for dim in result.dimensions.values():
        assert dim.reliability.level in ("trusted", "caution", "untrusted")
    assert client.get_score(result.id) == result


def test_score_polls_when_the_server_answers_202_first(
    client: JudgeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_core, "MAX_SERVER_WAIT_S", 0.0)  # the POST returns 202 at once
    result = client.score("epitome", item("poll", 0), wait=60)
    assert isinstance(result, CompletedScore), result
    queued = client.score("epitome", item("poll", 1), wait=None)
    assert queued.status in ("queued", "running"), queued


def test_batch_wait_reports_progress_and_results_stream_in_order(client: JudgeClient) -> None:
    n = 12
    handle = client.submit_batch([item("batch", i) for i in range(n)], "epitome")
    assert handle.view.total == n
    submitted = handle.view
    seen: list[BatchView] = []
    final = handle.wait(progress=seen.append, timeout=120)
    assert (final.status, final.completed) == ("completed", n)
    # every fetched state, from the submission's own view to the final one (a worker may
    # finish all 12 items before the submission's response is written: then it is the only one)
    assert seen[0] == submitted
    assert seen[-1] == final
    if not _core.batch_done(submitted):
        assert len(seen) >= 2
    done = [v.completed + v.failed for v in seen]
    assert done == sorted(done)  # progress never goes back
    stream = handle.results()
    assert isinstance(stream, Iterator)
    lines = list(stream)
    assert [line.line for line in lines] == list(range(1, n + 1))
    assert all(isinstance(line, CompletedLine) for line in lines)
    assert {line.batch_id for line in lines} == {handle.id}
    assert [line.item_id for line in lines] == [f"batch-{i}" for i in range(n)]
    assert handle.status() == final


def test_submit_jsonl_numbers_rejections_by_line(client: JudgeClient, tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    rows = [json.dumps(item("jsonl", 0)), "{not json", json.dumps(item("jsonl", 2))]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    handle = client.submit_jsonl(path, "epitome")
    assert (handle.view.total, handle.view.rejected) == (2, 1)
    (rejection,) = handle.view.rejections
    assert (rejection.line, rejection.field) == (2, "line")
    handle.wait(timeout=120)
    assert [line.line for line in handle.results()] == [1, 3]


def test_wait_timeout_is_raised_not_hidden(client: JudgeClient) -> None:
    handle = client.submit_batch([item("slow", i) for i in range(30)], "epitome")
    with pytest.raises(WaitTimeout):
        handle.wait(timeout=0.05)
    handle.wait(timeout=120)


def test_problem_details_become_typed_exceptions_with_the_field(client: JudgeClient) -> None:
    with pytest.raises(InvalidInput) as invalid:
        client.score("epitome", {"seeker_post": 7, "response": "I hear you."}, wait=5)
    assert invalid.value.status == 422
    assert invalid.value.field == "item.seeker_post"
    assert invalid.value.request_id
    with pytest.raises(NotFound) as missing:
        client.score("no-such-rubric", item("x", 0))
    assert (missing.value.status, missing.value.field) == (404, "rubric")
    with pytest.raises(NotFound) as no_batch:
        client.batch("0" * 32)
    assert no_batch.value.field == "id"
    assert str(no_batch.value).startswith("HTTP 404: ")
    assert str(no_batch.value).endswith("(field: id)")


def test_async_client_scores_and_streams(sqlite_stack: ServiceStack) -> None:
    async def run() -> tuple[Any, list[Any]]:
        async with AsyncJudgeClient(sqlite_stack.base_url, poll_interval=0.1) as judge:
            scored = await judge.score("epitome", item("async", 0), wait=60)
            handle = await judge.submit_batch([item("async", i) for i in range(1, 4)], "epitome")
            seen: list[BatchView] = []
            await handle.wait(progress=seen.append, timeout=120)
            return scored, [line async for line in handle.results()]

    scored, lines = asyncio.run(run())
    assert isinstance(scored, CompletedScore)
    assert [line.line for line in lines] == [1, 2, 3]


# -- the client's models and the OpenAPI document ----------------------------------------------
#: what the client parses each documented response into
CLIENT_PARSES = {
    ("post", "/v1/scores", "200"): {"CompletedScore", "JobStatus"},
    ("post", "/v1/scores", "202"): {"JobStatus"},
    ("get", "/v1/scores/{job_id}", "200"): {"CompletedScore", "JobStatus"},
    ("post", "/v1/batches", "202"): {"BatchView"},
    ("get", "/v1/batches/{batch_id}", "200"): {"BatchView"},
    ("get", "/v1/batches/{batch_id}/results", "200"): {"CompletedLine", "JobStatusLine"},
    ("get", "/v1/batches/{batch_id}/escalations", "200"): {"EscalationsView"},
    ("post", "/v1/calibrations", "202"): {"CalibrationView"},
    ("get", "/v1/calibrations/{run_id}", "200"): {"CalibrationView"},
    ("get", "/v1/reliability/{rubric_id}", "200"): {"ReliabilityHistory"},
    ("post", "/v1/scores", "422"): {"Problem"},
}


def _models(root: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """``root`` and every model its fields hold, by class name."""
    found: dict[str, type[BaseModel]] = {}
    todo = [root]
    while todo:
        model = todo.pop()
        if model.__name__ in found:
            continue
        found[model.__name__] = model
        for info in model.model_fields.values():
            stack = [info.annotation]
            while stack:
                hint = stack.pop()
                if isinstance(hint, type) and issubclass(hint, BaseModel):
                    todo.append(hint)
                stack.extend(get_args(hint))
    return found


def _refs(schema: dict[str, Any]) -> set[str]:
    options = schema.get("oneOf") or [schema]
    return {o["$ref"].rsplit("/", 1)[1] for o in options}


def test_client_models_match_the_openapi_document(sqlite_stack: ServiceStack) -> None:
    doc = sqlite_stack.client.get("/schema/openapi.json").json()
    components = doc["components"]["schemas"]
    for (method, path, status), names in CLIENT_PARSES.items():
        content = doc["paths"][path][method]["responses"][status]["content"]
        (media,) = content.values()
        assert _refs(media["schema"]) == names, (method, path, status)
    roots = [
        getattr(wire, name, None) or getattr(escalations, name)
        for names in CLIENT_PARSES.values()
        for name in names
    ]
    models = {k: v for root in roots for k, v in _models(root).items()}
    assert len(models) >= 15
    for name, model in models.items():
        schema = components[name]
        fields = {info.alias or key: info for key, info in model.model_fields.items()}
        assert set(schema["properties"]) == set(fields), name
        required = {key for key, info in fields.items() if info.is_required()}
        assert set(schema.get("required", [])) == required, name


# -- retries on 429 and 503, as Retry-After says -----------------------------------------------
class Flaky(ThreadingHTTPServer):
    """Answers ``failures`` with ``status`` (and ``Retry-After``), then 200 with ``body``;
    records each request's time and headers."""

    def __init__(self, status: int, retry_after: str, failures: int, body: Any) -> None:
        self.status, self.retry_after, self.failures, self.body = (
            status,
            retry_after,
            failures,
            body,
        )
        self.seen: list[tuple[float, str, dict[str, str]]] = []
        super().__init__(("127.0.0.1", 0), _FlakyHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _FlakyHandler(BaseHTTPRequestHandler):
    server: Flaky

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        server = self.server
        server.seen.append((time.monotonic(), self.command, dict(self.headers)))
        if len(server.seen) <= server.failures:
            status, headers = server.status, {"Retry-After": server.retry_after}
            body: Any = {
                "type": "about:blank",
                "title": "Service unavailable",
                "status": status,
                "detail": "unavailable: the database does not answer; retry",
                "instance": self.path,
                "request_id": "flaky-0001",
            }
        else:
            status, headers, body = 200, {}, server.body
        data = json.dumps(body).encode()
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _answer

    def log_message(self, *args: Any) -> None:
        pass


HISTORY = {"rubric_id": "epitome", "calibrations": [], "canaries": []}
QUEUED = {
    "id": "f" * 32,
    "item_id": None,
    "status": "queued",
    "rubric": {"id": "epitome", "version": "1", "hash": "h"},
    "panel_name": "default",
    "created_at": "2026-01-01T00:00:00+00:00",
}


def test_a_503_is_retried_after_its_retry_after() -> None:
    server = Flaky(503, "1", failures=1, body=HISTORY)
    try:
        with JudgeClient(server.url) as judge:
            history = judge.reliability("epitome")
        assert history.rubric_id == "epitome"
        (first, *_), (second, *_) = server.seen
        assert len(server.seen) == 2
        assert second - first >= 1.0  # waited as Retry-After said
    finally:
        server.stop()


def test_a_429_on_a_post_is_retried_with_the_same_idempotency_key() -> None:
    server = Flaky(429, "1", failures=1, body=QUEUED)
    try:
        with JudgeClient(server.url) as judge:
            result = judge.score("epitome", item("retry", 0), wait=None)
        assert result.status == "queued"
        (t1, m1, h1), (t2, m2, h2) = server.seen
        assert (m1, m2) == ("POST", "POST")
        assert t2 - t1 >= 1.0
        keys = {h1.get("Idempotency-Key"), h2.get("Idempotency-Key")}
        assert len(keys) == 1
        assert None not in keys
    finally:
        server.stop()


@pytest.mark.parametrize(("status", "error"), [(503, ServiceUnavailable), (429, RateLimited)])
def test_retries_run_out_into_a_typed_exception(status: int, error: type[Exception]) -> None:
    server = Flaky(status, "0", failures=100, body=HISTORY)
    try:
        with JudgeClient(server.url, retries=2) as judge, pytest.raises(error) as raised:
            judge.reliability("epitome")
        assert len(server.seen) == 3  # the first try and two retries
        assert raised.value.reason == "unavailable"  # type: ignore[attr-defined]
    finally:
        server.stop()


# -- the README's example ----------------------------------------------------------------------
def test_the_readme_example_runs_against_the_server(
    sqlite_stack: ServiceStack, tmp_path: Path
) -> None:
    example = Path(__file__).parents[2] / "examples" / "trusted_scores.py"
    assert example.read_text(encoding="utf-8") in (example.parents[1] / "README.md").read_text(
        encoding="utf-8"
    )
    source = tmp_path / "items.jsonl"
    source.write_text("".join(json.dumps(item("readme", i)) + "\n" for i in range(3)))
    done = subprocess.run(
        [sys.executable, str(example), str(source)],
        env=sqlite_stack.env | {"JUDGE_URL": sqlite_stack.base_url},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["readme-0", "readme-1", "readme-2"]
    for line in lines:
        rest = line.split(" ", 1)[1]
        assert rest == "no trusted dimension" or rest.startswith("{"), line
    assert done.stderr.splitlines()[-1] == "3/3"
