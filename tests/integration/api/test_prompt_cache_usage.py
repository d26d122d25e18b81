"""Provider prompt caching through the API, on SQLite and PostgreSQL (the composition root's
app in process, the simulator over real HTTP modelling OpenAI's prefix cache for the
simulated panel): an item's usage carries the prompt tokens the provider read from its cache,
and the batch summary adds up its items'."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_service import NDJSON, item, jsonl, wait_batch
from tests.fixtures.in_process import InProcessApi

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def test_cached_prompt_tokens_per_item_and_batch(in_process_api: InProcessApi) -> None:
    client = in_process_api.client
    body = jsonl([item("prompt-cache", n) for n in range(3)])
    submitted = client.post("/v1/batches?rubric=epitome", content=body, headers=NDJSON)
    assert submitted.status_code == 202, submitted.text
    batch_id = submitted.json()["id"]
    wait_batch(in_process_api, batch_id)  # type: ignore[arg-type]

    lines = client.get(f"/v1/batches/{batch_id}/results").text.splitlines()
    results = [json.loads(line) for line in lines]  # completed lines are results
    assert len(results) == 3
    for result in results:  # (stored results keep no calls: the judgments table has them)
        usage = result["usage"]
        assert 0 <= usage["cached_prompt_tokens"] < usage["prompt_tokens"]
        assert usage["cache_write_tokens"] == 0  # OpenAI-style caching writes for free
    # at most the first call of each judge missed: the rubric is served from the cache
    assert sum(r["usage"]["cached_prompt_tokens"] for r in results) > 0

    summary = client.get(f"/v1/batches/{batch_id}/summary").json()
    total = summary["usage"]
    for field in ("llm_calls", "prompt_tokens", "completion_tokens", "cached_prompt_tokens"):
        assert total[field] == sum(r["usage"][field] for r in results), field
