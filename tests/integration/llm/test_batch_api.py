"""Economy mode's provider calls: LiteLLM's files and batches API against the simulator's
OpenAI Files and Batch endpoints over real HTTP (no mocks)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from judge.domain.judgment_schema import judgment_schema, response_format
from judge.llm import batch_api
from judge.llm.calls import ModelPrice
from judge.llm.client import ChatRequest
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, SimulatorProcess

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

EPITOME = RubricRegistry.from_directory().get("epitome")
SCHEMA = response_format(judgment_schema(EPITOME, list(EPITOME.dimensions), ()))


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorProcess]:
    options = SimulatorOptions(latency_ms=5, jitter_ms=0, batch_delay_ms=300)
    with SimulatorProcess(options) as process:
        yield process


def _request(model: str, text: str) -> ChatRequest:
    messages = [
        {"role": "system", "content": "Rate the reply."},
        {"role": "user", "content": f"Seeker: I feel alone.\nSupporter: {text}"},
    ]
    return ChatRequest(model=model, messages=messages, response_format=SCHEMA)


async def _until_final(endpoint: batch_api.Endpoint, batch_id: str) -> batch_api.ProviderBatch:
    for _ in range(200):
        found = await batch_api.retrieve(endpoint, batch_id)
        if found.final:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the batch never finished")


def test_a_batch_is_uploaded_created_polled_and_read_back(sim: SimulatorProcess) -> None:
    endpoint = batch_api.Endpoint("openai", sim.base_url, "sk-sim")
    requests = {
        "a": _request("openai/accurate", "That sounds lonely. What do evenings look like?"),
        "b": _request("openai/accurate", "Hang in there."),
        "c": _request("openai/fail500-9", "Go out more."),
    }
    lines = [batch_api.request_line(key, r) for key, r in requests.items()]

    async def run() -> tuple[batch_api.ProviderBatch, batch_api.FileLines, batch_api.FileLines]:
        _file_id, batch_id = await batch_api.submit(endpoint, lines)
        done = await _until_final(endpoint, batch_id)
        assert done.output_file_id
        assert done.error_file_id
        out = await batch_api.content(endpoint, done.output_file_id)
        errors = await batch_api.content(endpoint, done.error_file_id)
        return done, out, errors

    done, out, errors = asyncio.run(run())
    assert (done.status, done.total, done.completed, done.failed) == ("completed", 3, 2, 1)
    assert out.simulated
    assert errors.simulated
    assert sorted(row["custom_id"] for row in out.lines) == ["a", "b"]
    failed = [(e["custom_id"], e["response"]["status_code"]) for e in errors.lines]
    assert failed == [("c", 500)]
    prices = {"openai/accurate": ModelPrice(2.0, 8.0)}
    row = next(r for r in out.lines if r["custom_id"] == "a")
    body = row["response"]["body"]
    result = batch_api.line_result(requests["a"], body, prices, simulated=out.simulated)
    assert result.ok
    assert result.simulated
    assert result.content
    full = (result.prompt_tokens * 2.0 + result.completion_tokens * 8.0) / 1e6
    assert result.cost_usd == pytest.approx(full * batch_api.BATCH_DISCOUNT)


def test_a_bad_input_file_fails_the_batch_with_the_line(sim: SimulatorProcess) -> None:
    endpoint = batch_api.Endpoint("openai", sim.base_url, "sk-sim")
    line = batch_api.request_line("x", _request("openai/accurate", "Hm."))

    async def run() -> batch_api.ProviderBatch:
        _file, batch_id = await batch_api.submit(endpoint, [line, line])  # duplicate custom_id
        return await _until_final(endpoint, batch_id)

    failed = asyncio.run(run())
    assert failed.status == "failed"
    assert failed.errors == ("duplicate_custom_id (line 2)",)


def test_unknown_batches_and_files_answer_in_openais_error_shape(sim: SimulatorProcess) -> None:
    with httpx.Client(base_url=sim.base_url) as http:
        missing = http.get("/batches/batch_nope")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "not_found"
        bad = http.post("/batches", json={"input_file_id": "file-x", "endpoint": "/v1/x"})
        assert bad.status_code == 400
        assert "endpoint" in bad.json()["error"]["message"]
        assert http.get("/files/file-nope/content").status_code == 404


def test_only_openai_compatible_judges_can_be_batched() -> None:
    assert batch_api.batch_provider("openai/gpt-4o-mini") == "openai"
    assert batch_api.batch_provider("anthropic/claude-sonnet-4-5") is None
    assert batch_api.batch_provider("gemini/gemini-2.5-flash") is None
    assert batch_api.batch_provider("gpt-4o") is None
