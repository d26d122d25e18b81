"""The LiteLLM adapter: the only module that imports litellm.

The retry layer, reply classification and public error texts are shared with the direct
OpenAI-compatible path (:mod:`judge.llm.calls`); LiteLLM's own retries
are switched off. This module says which LiteLLM exceptions are which: authentication errors,
bad requests and unknown models are final at once (a missing key, which LiteLLM reports as a
500, is an authentication error); rate limits, 5xx, connection errors and timeouts are retried.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from judge._offline import configure_offline_env

configure_offline_env()

import litellm  # noqa: E402
from litellm import exceptions as errors  # noqa: E402

from judge.domain.provenance import is_simulator_reply  # noqa: E402
from judge.llm.calls import (  # noqa: E402
    PathClient,
    configured_cost,
)
from judge.llm.client import ChatRequest, ChatResult, FailureReason  # noqa: E402
from judge.llm.prompt_cache import with_cache_breakpoint  # noqa: E402

log = logging.getLogger(__name__)
litellm.suppress_debug_info = True
litellm.telemetry = False
logging.getLogger("LiteLLM").setLevel(logging.ERROR)

_RETRYABLE: dict[type[BaseException], FailureReason] = {
    errors.RateLimitError: "rate_limit",
    errors.Timeout: "timed_out",
    errors.InternalServerError: "provider_error",
    errors.ServiceUnavailableError: "provider_error",
    errors.BadGatewayError: "provider_error",
    errors.APIConnectionError: "provider_error",
}
_FINAL: dict[type[BaseException], FailureReason] = {
    errors.ContentPolicyViolationError: "refused",
    errors.AuthenticationError: "auth_error",
    errors.PermissionDeniedError: "auth_error",
    errors.NotFoundError: "unknown_model",
    errors.BadRequestError: "bad_request",
}
#: What a provider says when no key reached it (LiteLLM reports it as a 500).
_MISSING_KEY = ("missing credentials", "api_key client option must be set", "no api key")


#: LiteLLM enforces ``timeout`` on the HTTP request itself and raises a clean ``Timeout``. The
#: outer deadline is only a backstop for a call that hangs anywhere else. It must leave room:
#: ``litellm.acompletion`` first runs a synchronous set-up in a worker thread (about a second on
#: the first call of a process) that returns the coroutine doing the request; cancelling it
#: during that phase drops the coroutine un-awaited ("coroutine ... was never awaited").
DEADLINE_GRACE_S = 5.0


def classify(exc: BaseException) -> tuple[FailureReason, bool]:
    """(reason, retryable) for an exception raised by a LiteLLM call."""
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timed_out", True
    if any(marker in str(exc).lower() for marker in _MISSING_KEY):
        return "auth_error", False
    for kind, reason in _RETRYABLE.items():
        if isinstance(exc, kind):
            return reason, True
    for kind, reason in _FINAL.items():
        if isinstance(exc, kind):
            return reason, False
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return "provider_error", True
    return "provider_error", False


class LiteLLMClient(PathClient):
    """Calls models through ``litellm.acompletion`` with timeouts, retries and cost capture."""

    name = "litellm"
    deadline_grace_s = DEADLINE_GRACE_S

    def classify(self, exc: BaseException) -> tuple[FailureReason, bool]:
        return classify(exc)

    async def complete(self, request: ChatRequest) -> ChatResult:
        return await self._call(
            request,
            lambda: litellm.acompletion(**self._call_args(request)),
            lambda response, usage: self._cost(request.model, response, usage),
            lambda response: is_simulator_reply(
                (getattr(response, "_hidden_params", None) or {}).get("additional_headers")
            ),
        )

    def _call_args(self, request: ChatRequest) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": request.model,
            # Anthropic caches the rubric's system block only at an explicit breakpoint
            "messages": with_cache_breakpoint(request.model, request.messages),
            "timeout": request.timeout_s,
            "max_retries": 0,
            "num_retries": 0,
            **request.params,
        }
        if request.response_format is not None:
            args["response_format"] = request.response_format
        if request.api_base:
            args["api_base"] = request.api_base
        if request.api_key:
            args["api_key"] = request.api_key.get_secret_value()
        return args

    def _cost(self, model: str, response: Any, usage: Any) -> float:
        configured = configured_cost(self._prices, model, usage)
        if configured is not None:
            return configured
        hidden = getattr(response, "_hidden_params", None) or {}
        value = hidden.get("response_cost")
        return float(value) if isinstance(value, int | float) else 0.0


#: parts of a variable name that mark a credential (``OLLAMA_API_BASE`` is not one)
_CREDENTIAL_MARKS = ("KEY", "TOKEN", "SECRET", "CREDENTIAL", "PASSWORD")


def missing_credentials(model: str, api_base: str | None) -> list[str]:
    """For a judge without an explicit key: the environment variables LiteLLM would read its
    key from (any one would do), when none is set; empty when nothing is missing or LiteLLM
    does not know the provider. Asked at start-up (``judge serve``/``worker``/``calibrate``)."""
    check = litellm.validate_environment(model=model, api_base=api_base)
    if check.get("keys_in_environment"):
        return []
    missing = [str(name) for name in check.get("missing_keys") or []]
    return [name for name in missing if any(mark in name.upper() for mark in _CREDENTIAL_MARKS)]
