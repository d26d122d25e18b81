"""The direct path for OpenAI-compatible endpoints (OpenAI, vLLM, TGI, llama.cpp servers):
chat completions posted on one shared aiohttp session per event loop, none of LiteLLM's
per-call translation. Retries, reply classification and public errors are the shared ones
(:mod:`judge.llm.calls`).

Why aiohttp and not the official ``openai`` SDK (which this path used first): measured on this
machine against the simulator (``python -m judge.bench.client_cost``: an EPITOME prompt with
its JSON schema, 64 in flight, 1,500 calls), the SDK costs 2.4-3.9 ms of CPU per call, this
path 0.52 ms and a bare aiohttp post 0.36-0.42 ms; the SDK on its aiohttp transport (the
``httpx-aiohttp`` extra) still cost 1.5-2.2 ms. The service is CPU-bound on the client
(py-spy: the SDK and httpx were 29-37 % of an embedded API's samples) and a 3-judge item makes
three calls. The wire protocol used here is small and stable: one POST with a JSON body, the
status code, the body's ``error.code`` and the retry headers.

Model strings keep their LiteLLM spelling in panels and records (``openai/gpt-4o``,
``hosted_vllm/qwen``): the provider prefix is dropped only on the wire.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from judge.domain.provenance import is_simulator_reply
from judge.domain.providers import wire_model
from judge.llm.calls import (
    ModelPrice,
    PathClient,
    RetryPolicy,
    configured_cost,
    price_map_cost,
)
from judge.llm.client import ChatRequest, ChatResult, FailureReason

OPENAI_BASE_URL = "https://api.openai.com/v1"
#: error codes of a 400 that mean a safety block, not a malformed request
_BLOCKED_CODES = frozenset({"content_filter", "content_policy_violation", "invalid_prompt"})
#: final statuses and what they mean; 408, 409, 429 and 5xx are retried
_FINAL_STATUS: dict[int, FailureReason] = {
    401: "auth_error",
    403: "auth_error",
    404: "unknown_model",
    422: "bad_request",
}
_RETRYABLE_STATUS: dict[int, FailureReason] = {
    408: "timed_out",
    409: "provider_error",
    429: "rate_limit",
}


class MissingCredentials(Exception):
    """No key for the endpoint: none on the judge and none in ``OPENAI_API_KEY``."""


class ProviderStatusError(Exception):
    """An error status from the endpoint; ``headers`` carry its retry delay (read by
    :func:`judge.llm.calls.retry_after`), ``code`` the ``error.code`` of its body. Callers see
    the class name in public errors, so each status family has the name the OpenAI SDK and
    LiteLLM give it (:func:`status_error`)."""

    def __init__(self, status_code: int, headers: Mapping[str, str], body: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.code = _error_code(body)
        # the provider's text goes to the log only (calls.failed_result), never to results
        super().__init__(f"HTTP {status_code}: {body[:500].decode('utf-8', 'replace')}")


class BadRequestError(ProviderStatusError): ...


class AuthenticationError(ProviderStatusError): ...


class PermissionDeniedError(ProviderStatusError): ...


class NotFoundError(ProviderStatusError): ...


class ConflictError(ProviderStatusError): ...


class UnprocessableEntityError(ProviderStatusError): ...


class RateLimitError(ProviderStatusError): ...


class InternalServerError(ProviderStatusError): ...


_STATUS_ERRORS: dict[int, type[ProviderStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def status_error(status: int, headers: Mapping[str, str], body: bytes) -> ProviderStatusError:
    """The exception for an error status, of the class its family is known by."""
    kind = _STATUS_ERRORS.get(status) or (
        InternalServerError if status >= 500 else ProviderStatusError
    )
    return kind(status, headers, body)


class UnusableReply(Exception):
    """A success status whose body is not a JSON object."""


def _error_code(body: bytes) -> str | None:
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    code = error.get("code") if isinstance(error, dict) else None
    return str(code) if code is not None else None


def classify(exc: BaseException) -> tuple[FailureReason, bool]:
    """(reason, retryable) for an exception raised by one attempt on this path."""
    if isinstance(exc, asyncio.TimeoutError | TimeoutError | aiohttp.ServerTimeoutError):
        return "timed_out", True
    if isinstance(exc, aiohttp.ClientError):
        return "provider_error", True  # refused or dropped connections, broken responses
    if isinstance(exc, MissingCredentials):
        return "auth_error", False
    if isinstance(exc, ProviderStatusError):
        status = exc.status_code
        if status in _RETRYABLE_STATUS:
            return _RETRYABLE_STATUS[status], True
        if status >= 500:
            return "provider_error", True
        if status in _FINAL_STATUS:
            return _FINAL_STATUS[status], False
        if status == 400:
            return ("refused" if exc.code in _BLOCKED_CODES else "bad_request"), False
    return "provider_error", False


def _as_attributes(fields: dict[str, Any]) -> SimpleNamespace:
    """A JSON object read with attribute access, the shape :func:`calls.reply_result` reads."""
    return SimpleNamespace(**fields)


class OpenAIClient(PathClient):
    """Posts OpenAI-compatible chat completions on one shared session per event loop."""

    name = "openai"

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        prices: dict[str, ModelPrice] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(retry=retry, prices=prices, rng=rng)
        # connections belong to the loop that opened them: one session (pool) per loop
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}
        self._proxies: dict[str, tuple[URL | None, aiohttp.BasicAuth | None]] = {}

    def _session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            # no pool cap here: the per-model limits (judge.llm.limits) bound concurrency
            session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
            self._sessions[loop] = session
        return session

    def _proxy(self, url: str) -> tuple[URL | None, aiohttp.BasicAuth | None]:
        """The environment's proxy for an endpoint (HTTP(S)_PROXY and NO_PROXY, as the SDK's
        httpx client applied them), read once per endpoint: the session's own ``trust_env``
        reads it, and ``.netrc``, on a worker thread for every request (measured: 0.5 to
        1.2 ms of CPU per call, doubling this path's cost)."""
        found = self._proxies.get(url)
        if found is None:
            try:
                found = get_env_proxy_for_url(URL(url))
            except LookupError:  # no proxy for this scheme, or NO_PROXY names the host
                found = (None, None)
            self._proxies[url] = found
        return found

    @staticmethod
    def _body(request: ChatRequest) -> bytes:
        body: dict[str, Any] = {
            "model": wire_model(request.model),
            "messages": request.messages,
            **request.params,  # sampling options, server-specific ones (vLLM's top_k) included
        }
        if request.response_format is not None:
            body["response_format"] = request.response_format
        return json.dumps(body, ensure_ascii=False).encode()

    @staticmethod
    def _headers(request: ChatRequest) -> dict[str, str]:
        key = request.api_key.get_secret_value() if request.api_key else None
        key = key or os.environ.get("OPENAI_API_KEY")  # as LiteLLM and the SDK read it
        if not key:
            raise MissingCredentials("no api_key for the judge and OPENAI_API_KEY is not set")
        return {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def classify(self, exc: BaseException) -> tuple[FailureReason, bool]:
        return classify(exc)

    async def complete(self, request: ChatRequest) -> ChatResult:
        url = f"{(request.api_base or OPENAI_BASE_URL).rstrip('/')}/chat/completions"
        body = self._body(request)
        timeout = aiohttp.ClientTimeout(total=request.timeout_s)
        proxy, proxy_auth = self._proxy(url)

        async def attempt() -> Any:
            headers = self._headers(request)
            async with self._session().post(
                url, data=body, headers=headers, timeout=timeout, proxy=proxy, proxy_auth=proxy_auth
            ) as response:
                raw = await response.read()
                if response.status >= 400:
                    raise status_error(response.status, response.headers, raw)
                simulator = is_simulator_reply(response.headers)
            try:
                reply = json.loads(raw, object_hook=_as_attributes)
            except ValueError as exc:
                raise UnusableReply("the reply is not JSON") from exc
            if not isinstance(reply, SimpleNamespace):
                raise UnusableReply("the reply is not a JSON object")
            reply.simulator_mark = simulator  # the headers are gone once the body is parsed
            return reply

        return await self._call(
            request,
            attempt,
            lambda response, usage: self._cost(request.model, usage),
            lambda response: bool(getattr(response, "simulator_mark", False)),
        )

    def _cost(self, model: str, usage: Any) -> float:
        configured = configured_cost(self._prices, model, usage)
        return configured if configured is not None else price_map_cost(model, usage)

    async def aclose(self) -> None:
        """Close the session of the running loop; those of a closed loop are dropped."""
        loop = asyncio.get_running_loop()
        for owner in list(self._sessions):
            if owner is loop or owner.is_closed():
                session = self._sessions.pop(owner)
                if owner is loop:
                    await session.close()
