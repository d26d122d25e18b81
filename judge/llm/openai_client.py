"""The direct path for OpenAI-compatible endpoints (OpenAI, vLLM, TGI, llama.cpp servers):
the official ``openai`` SDK, one shared ``AsyncOpenAI`` per base URL and key, none of
LiteLLM's per-call translation. Retries, reply classification and public errors are the
shared ones (:mod:`judge.llm.calls`); the SDK's own retries are off.

Model strings keep their LiteLLM spelling in panels and records (``openai/gpt-4o``,
``hosted_vllm/qwen``): the provider prefix is dropped only on the wire.
"""

from __future__ import annotations

import asyncio
import inspect
import random
from typing import Any

import openai
from openai import AsyncOpenAI
from openai.resources.chat.completions import AsyncCompletions

from judge.llm.calls import (
    ModelPrice,
    PathClient,
    RetryPolicy,
    configured_cost,
    price_map_cost,
)
from judge.llm.client import ChatRequest, ChatResult, FailureReason
from judge.llm.routing import wire_model

OPENAI_BASE_URL = "https://api.openai.com/v1"
#: parameters the SDK takes by name; any other panel parameter goes in the body as is
_CREATE_PARAMS = frozenset(inspect.signature(AsyncCompletions.create).parameters) - {"self"}

_RETRYABLE: tuple[tuple[type[BaseException], FailureReason], ...] = (
    (openai.APITimeoutError, "timed_out"),  # before APIConnectionError, its base class
    (openai.APIConnectionError, "provider_error"),
    (openai.RateLimitError, "rate_limit"),
    (openai.InternalServerError, "provider_error"),
    (openai.ConflictError, "provider_error"),
)
_FINAL: tuple[tuple[type[BaseException], FailureReason], ...] = (
    (openai.AuthenticationError, "auth_error"),
    (openai.PermissionDeniedError, "auth_error"),
    (openai.NotFoundError, "unknown_model"),
    (openai.UnprocessableEntityError, "bad_request"),
)
#: error codes of a 400 that mean a safety block, not a malformed request
_BLOCKED_CODES = frozenset({"content_filter", "content_policy_violation", "invalid_prompt"})


def classify(exc: BaseException) -> tuple[FailureReason, bool]:
    """(reason, retryable) for an exception raised by an OpenAI SDK call."""
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timed_out", True
    for kind, reason in _RETRYABLE:
        if isinstance(exc, kind):
            return reason, True
    for kind, reason in _FINAL:
        if isinstance(exc, kind):
            return reason, False
    if isinstance(exc, openai.BadRequestError):
        return ("refused" if exc.code in _BLOCKED_CODES else "bad_request"), False
    if isinstance(exc, openai.APIStatusError):
        return "provider_error", exc.status_code >= 500
    if isinstance(exc, openai.OpenAIError) and "api_key" in str(exc):
        return "auth_error", False  # no key given and none in OPENAI_API_KEY
    return "provider_error", False


class OpenAIClient(PathClient):
    """Calls OpenAI-compatible chat completions through one shared SDK client per endpoint."""

    name = "openai"

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        prices: dict[str, ModelPrice] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(retry=retry, prices=prices, rng=rng)
        # one SDK client (one connection pool) per event loop, endpoint and key: connections
        # belong to the loop that opened them
        self._clients: dict[tuple[asyncio.AbstractEventLoop, str, str | None], AsyncOpenAI] = {}

    def _client(self, request: ChatRequest) -> AsyncOpenAI:
        base_url = request.api_base or OPENAI_BASE_URL
        key = request.api_key.get_secret_value() if request.api_key else None
        slot = (asyncio.get_running_loop(), base_url, key)
        client = self._clients.get(slot)
        if client is None:
            # api_key=None lets the SDK read OPENAI_API_KEY, as LiteLLM would
            client = AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0)
            self._clients[slot] = client
        return client

    def _call_args(self, request: ChatRequest) -> dict[str, Any]:
        known = {k: v for k, v in request.params.items() if k in _CREATE_PARAMS}
        extra = {k: v for k, v in request.params.items() if k not in _CREATE_PARAMS}
        args: dict[str, Any] = {
            "model": wire_model(request.model),
            "messages": request.messages,
            "timeout": request.timeout_s,
            **known,
        }
        if extra:
            args["extra_body"] = extra  # server-specific sampling options (vLLM's top_k, ...)
        if request.response_format is not None:
            args["response_format"] = request.response_format
        return args

    def classify(self, exc: BaseException) -> tuple[FailureReason, bool]:
        return classify(exc)

    async def complete(self, request: ChatRequest) -> ChatResult:
        async def attempt() -> Any:
            return await self._client(request).chat.completions.create(**self._call_args(request))

        return await self._call(
            request, attempt, lambda _response, usage: self._cost(request.model, usage)
        )

    def _cost(self, model: str, usage: Any) -> float:
        configured = configured_cost(self._prices, model, usage)
        return configured if configured is not None else price_map_cost(model, usage)

    async def aclose(self) -> None:
        """Close the clients of the running loop; those of a closed loop are dropped."""
        loop = asyncio.get_running_loop()
        for slot in list(self._clients):
            if slot[0] is loop or slot[0].is_closed():
                client = self._clients.pop(slot)
                if slot[0] is loop:
                    await client.close()
