"""Providers' batch APIs: economy mode's calls, at the batch discount.

Which providers: litellm 1.110.2 creates batches for OpenAI-compatible endpoints (``openai``,
``hosted_vllm``, ``litellm_proxy``), Azure, Vertex AI, Bedrock, Mistral, xAI and the Gemini
Developer API (``GeminiBatchesConfig``: an uploaded file run by
``models/{model}:batchGenerateContent``, OpenAI-shaped rows); for ``anthropic`` it can only
*retrieve* a batch (``create_batch`` raises "LiteLLM doesn't support
custom_llm_provider=anthropic"); ``hosted_vllm`` batches are executed by LiteLLM itself, not
by the endpoint. Economy mode batches ``openai/...`` judges (any OpenAI-compatible
``api_base``, the simulator included) and nothing else yet (:data:`BATCH_PROVIDERS`): Gemini's
batch mode is possible through LiteLLM here but neither this module nor the simulator speaks
it yet. The service refuses an economy batch for a panel with any other judge (``mode``,
422).

Why the ``openai`` SDK here and not LiteLLM's ``acreate_file``/``acreate_batch``/
``aretrieve_batch``/``afile_content`` (which the first version used): for OpenAI-compatible
providers those build a new ``AsyncOpenAI`` client on every call, take no client to reuse on
that route, and never close it, so every poll leaked a socket (``ResourceWarning: unclosed
transport``, measured in ``tests/integration/llm/test_batch_api.py``). LiteLLM sends these
requests through this same SDK (pinned with it); here one client per operation is opened and
closed. The files and batches protocol is OpenAI's, so nothing provider-specific is lost.

A batch line is the chat-completion request the interactive path sends (same model, messages,
response format and parameters), under a ``custom_id``; a reply line becomes the same
:class:`ChatResult` an interactive call gives, priced at the batch price: LiteLLM's price map's
``*_cost_per_token_batches`` where it has them, else the list (or configured) price times
:data:`BATCH_DISCOUNT`.
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from judge.domain.provenance import is_simulator_reply
from judge.llm.calls import (
    ModelPrice,
    _litellm_price_map,
    configured_cost,
    price_map_cost,
    reply_result,
)
from judge.llm.client import ChatRequest, ChatResult

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: providers whose batch API LiteLLM can create batches on here (see the module docstring)
BATCH_PROVIDERS: frozenset[str] = frozenset({"openai"})
#: OpenAI's, Anthropic's and Gemini's batch APIs all cost half the interactive price
BATCH_DISCOUNT = 0.5
CHAT_ENDPOINT: Final = "/v1/chat/completions"
#: provider batch states after which nothing more happens
FINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled"})


def batch_provider(model: str) -> str | None:
    """The provider whose batch API serves ``model``, or None if economy mode cannot."""
    provider, slash, _ = model.partition("/")
    return provider if slash and provider in BATCH_PROVIDERS else None


def request_line(custom_id: str, request: ChatRequest) -> dict[str, Any]:
    """One line of a batch input file: the request the interactive path would send."""
    body: dict[str, Any] = {
        "model": request.model.partition("/")[2],
        "messages": request.messages,
        **request.params,
    }
    if request.response_format is not None:
        body["response_format"] = request.response_format
    return {"custom_id": custom_id, "method": "POST", "url": CHAT_ENDPOINT, "body": body}


@dataclass(frozen=True)
class ProviderBatch:
    """What the provider says of one batch."""

    id: str
    status: str
    output_file_id: str | None
    error_file_id: str | None
    total: int
    completed: int
    failed: int
    errors: tuple[str, ...] = ()

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATES


@dataclass(frozen=True)
class Endpoint:
    """Where a judge's batches go (its ``api_base`` and key; None: the provider's own)."""

    provider: str
    api_base: str | None
    api_key: str | None = None
    timeout_s: float = 60.0

    def client(self) -> AsyncOpenAI:
        """A client for one operation (``async with``: closed after it). The SDK is imported
        here: a process that only validates economy batches (the API) never loads it."""
        from openai import AsyncOpenAI

        return AsyncOpenAI(
            api_key=self.api_key or "unset",
            base_url=self.api_base or None,
            timeout=self.timeout_s,
            max_retries=2,
        )


async def submit(endpoint: Endpoint, lines: list[dict[str, Any]]) -> tuple[str, str]:
    """Upload ``lines`` as a JSONL file and create a batch on it: (file id, batch id)."""
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    async with endpoint.client() as client:
        upload = await client.files.create(
            file=("requests.jsonl", io.BytesIO(data), "application/jsonl"), purpose="batch"
        )
        batch = await client.batches.create(
            completion_window="24h",
            endpoint=CHAT_ENDPOINT,
            input_file_id=upload.id,
            metadata={"source": "empathy-judge"},
        )
    return str(upload.id), str(batch.id)


async def retrieve(endpoint: Endpoint, batch_id: str) -> ProviderBatch:
    """The batch's state and counts."""
    async with endpoint.client() as client:
        batch = await client.batches.retrieve(batch_id)
    counts = batch.request_counts
    errors = getattr(getattr(batch, "errors", None), "data", None) or []
    return ProviderBatch(
        id=str(batch.id),
        status=str(batch.status),
        output_file_id=batch.output_file_id,
        error_file_id=batch.error_file_id,
        total=int(getattr(counts, "total", 0) or 0),
        completed=int(getattr(counts, "completed", 0) or 0),
        failed=int(getattr(counts, "failed", 0) or 0),
        errors=tuple(
            f"{getattr(e, 'code', None) or 'error'} (line {getattr(e, 'line', None)})"
            for e in errors
        ),
    )


@dataclass(frozen=True)
class FileLines:
    """The lines of an output or error file; ``simulated``: the simulator's mark was on it."""

    lines: list[dict[str, Any]]
    simulated: bool


async def content(endpoint: Endpoint, file_id: str) -> FileLines:
    """The lines of an output or error file."""
    async with endpoint.client() as client:
        response = await client.files.content(file_id)
    text = response.content.decode("utf-8", "replace")
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    return FileLines(lines, is_simulator_reply(dict(response.response.headers)))


def batch_cost(model: str, usage: Any, prices: dict[str, ModelPrice]) -> float:
    """The price of a batch reply (see the module docstring)."""
    configured = configured_cost(prices, model, usage)
    if configured is not None:
        return configured * BATCH_DISCOUNT
    table = _litellm_price_map()
    entry = table.get(model) or table.get(model.split("/", 1)[-1])
    if isinstance(entry, dict) and entry.get("input_cost_per_token_batches") is not None:
        return int(getattr(usage, "prompt_tokens", 0) or 0) * float(
            entry["input_cost_per_token_batches"]
        ) + int(getattr(usage, "completion_tokens", 0) or 0) * float(
            entry.get("output_cost_per_token_batches") or 0.0
        )
    return price_map_cost(model, usage) * BATCH_DISCOUNT


def line_result(
    request: ChatRequest,
    body: dict[str, Any],
    prices: dict[str, ModelPrice],
    *,
    simulated: bool = False,
) -> ChatResult:
    """A batch reply (a chat completion's JSON) as the :class:`ChatResult` of ``request``;
    ``simulated``: its file carried the simulator's mark."""
    from openai.types.chat import ChatCompletion

    response = ChatCompletion.model_validate(body)
    return reply_result(
        request,
        response,
        attempts=1,
        started=time.perf_counter(),
        cost=lambda usage: batch_cost(request.model, usage, prices),
        simulated=simulated or is_simulator_reply(None, body.get("id")),
    )
