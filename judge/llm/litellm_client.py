"""The LiteLLM adapter: the only module that imports litellm.

One retry layer lives here (LiteLLM's and the OpenAI SDK's own retries are switched off):
rate limits, 5xx (Anthropic's 529 overload included), connection errors and timeouts are
retried with exponential backoff and jitter, honouring the provider's retry delay
(``retry-after-ms``/``retry-after`` headers; Gemini's ``RetryInfo.retryDelay``). There is no
model fallback: a judge that keeps failing becomes an abstention with its reason.
Authentication errors, bad requests and unknown models are final at once: retrying cannot
cure them (a missing key, which LiteLLM reports as a 500, is an authentication error).

A failure's ``error`` is a reason code and a fixed sentence (plus the HTTP status and the
exception's class): provider messages can carry endpoint URLs and partly masked keys, so
their text goes to this process's log only, never to results or the database.

A reply is classified the same way whichever provider sent it (LiteLLM normalises them):
``finish_reason == "content_filter"`` (Anthropic ``stop_reason: refusal``, Gemini
``SAFETY``/``promptFeedback.blockReason``) or an OpenAI ``refusal`` without content is
``refused``; ``finish_reason == "length"``, or a reply that used every token of an explicit
``max_tokens`` (LiteLLM reports a forced Anthropic tool call cut at ``max_tokens`` as
``stop``), is marked truncated; tool calls are reported by name.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from judge._offline import configure_offline_env

configure_offline_env()

import litellm  # noqa: E402
from litellm import exceptions as errors  # noqa: E402

from judge.llm.client import ChatRequest, ChatResult, FailureReason  # noqa: E402
from judge.settings import Settings  # noqa: E402

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
_PUBLIC_ERRORS: dict[str, str] = {
    "timed_out": "the provider did not answer in time",
    "rate_limit": "the provider kept refusing for rate limits",
    "provider_error": "the provider failed to answer",
    "refused": "the provider refused the request (content policy)",
    "auth_error": "the provider refused the credentials, or none were configured",
    "bad_request": "the provider rejected the request as invalid",
    "unknown_model": "the provider does not know this model",
}


#: LiteLLM enforces ``timeout`` on the HTTP request itself and raises a clean ``Timeout``. The
#: outer deadline is only a backstop for a call that hangs anywhere else. It must leave room:
#: ``litellm.acompletion`` first runs a synchronous set-up in a worker thread (about a second on
#: the first call of a process) that returns the coroutine doing the request; cancelling it
#: during that phase drops the coroutine un-awaited ("coroutine ... was never awaited").
DEADLINE_GRACE_S = 5.0


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens, for models LiteLLM's price map does not know."""

    input_per_mtok: float
    output_per_mtok: float


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0


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


def public_error(reason: str, exc: BaseException, attempts: int) -> str:
    """What callers may see of a failed call: no provider text (see the module docstring)."""
    status = getattr(exc, "status_code", None)
    facts = [f"HTTP {status}"] if isinstance(status, int) else []
    facts += [type(exc).__name__, f"{attempts} attempt{'s' if attempts != 1 else ''}"]
    return f"{reason}: {_PUBLIC_ERRORS.get(reason, 'the call failed')} ({'; '.join(facts)})"


_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')


def _retry_after(exc: BaseException) -> float | None:
    """The provider's retry delay in seconds: ``retry-after-ms`` or ``retry-after`` (OpenAI;
    Anthropic's headers reach us only as LiteLLM's ``litellm_response_headers``), or Gemini's
    ``RetryInfo.retryDelay`` in the error body."""
    for source in (
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "litellm_response_headers", None),
        getattr(exc, "headers", None),
    ):
        if not source:
            continue
        try:
            millis = source.get("retry-after-ms")
            if millis is not None:
                return float(millis) / 1000
            seconds = source.get("retry-after")
            if seconds is not None:
                return float(seconds)
        except (TypeError, ValueError, AttributeError):
            continue
    found = _RETRY_DELAY.search(str(exc))
    return float(found.group(1)) if found else None


def _reply_outcome(
    request: ChatRequest, choice: Any, completion_tokens: int
) -> tuple[FailureReason | None, str | None, bool, tuple[str, ...]]:
    """(failure, error, truncated, tool names) of a reply that arrived."""
    message = choice.message
    content = getattr(message, "content", None)
    finish = getattr(choice, "finish_reason", None)
    refusal = getattr(message, "refusal", None)
    tools = tuple(
        str(getattr(getattr(call, "function", None), "name", "") or "?")
        for call in (getattr(message, "tool_calls", None) or ())
    )
    if finish == "content_filter":
        return "refused", "the provider's safety filter stopped the reply", False, tools
    if refusal and not content:
        return "refused", "the model refused to answer", False, tools
    limit = request.params.get("max_tokens", request.params.get("max_completion_tokens"))
    cut = finish == "length" or (isinstance(limit, int) and completion_tokens >= limit > 0)
    return None, None, cut, tools


class LiteLLMClient:
    """Calls models through ``litellm.acompletion`` with timeouts, retries and cost capture."""

    def __init__(
        self,
        *,
        retry: RetryPolicy | None = None,
        prices: dict[str, ModelPrice] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._retry = retry or RetryPolicy()
        self._prices = prices or {}
        self._rng = rng or random.Random()

    @classmethod
    def from_settings(cls, settings: Settings) -> LiteLLMClient:
        """Retries and the configured prices (USD per million tokens) from the settings."""
        return cls(
            retry=RetryPolicy(
                max_retries=settings.llm.max_retries, backoff_base_s=settings.llm.backoff_base_s
            ),
            prices={
                m: ModelPrice(p.input_per_mtok, p.output_per_mtok)
                for m, p in settings.prices.items()
            },
        )

    async def complete(self, request: ChatRequest) -> ChatResult:
        started = time.perf_counter()
        attempts = 0
        prompt_tokens = completion_tokens = 0
        cost = 0.0
        while True:
            attempts += 1
            try:
                response = await asyncio.wait_for(
                    litellm.acompletion(**self._call_args(request)),
                    timeout=request.timeout_s + DEADLINE_GRACE_S,
                )
            except Exception as exc:
                reason, retryable = classify(exc)
                if retryable and attempts <= self._retry.max_retries:
                    await asyncio.sleep(self._backoff(attempts, _retry_after(exc)))
                    continue
                log.warning(
                    "call to %s failed (%s, %d attempt(s)): %s: %s",
                    request.model,
                    reason,
                    attempts,
                    type(exc).__name__,
                    str(exc)[:1000],
                )
                return ChatResult(
                    model=request.model,
                    resolved_model=None,
                    content=None,
                    failure=reason,
                    error=public_error(reason, exc, attempts),
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    cost_usd=cost,
                    latency_ms=(time.perf_counter() - started) * 1000,
                    attempts=attempts,
                )
            try:
                usage = getattr(response, "usage", None)
                used = int(getattr(usage, "completion_tokens", 0) or 0)
                prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
                completion_tokens += used
                cost += self._cost(request.model, response, usage)
                choice = response.choices[0]
                content = getattr(choice.message, "content", None)
                failure, error, truncated, tools = _reply_outcome(request, choice, used)
            except (AttributeError, IndexError, TypeError, ValueError) as exc:
                # a reply without the expected shape is the provider's fault: an abstention
                return ChatResult(
                    model=request.model,
                    resolved_model=None,
                    content=None,
                    failure="provider_error",
                    error=f"provider_error: the reply has no usable message ({type(exc).__name__})",
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion_tokens,
                    cost_usd=cost,
                    latency_ms=(time.perf_counter() - started) * 1000,
                    attempts=attempts,
                )
            if content is not None and not isinstance(content, str):
                content = str(content)
            return ChatResult(
                model=request.model,
                resolved_model=str(getattr(response, "model", "") or "") or None,
                content=content if failure is None else None,
                failure=failure,
                error=error,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
                latency_ms=(time.perf_counter() - started) * 1000,
                attempts=attempts,
                truncated=truncated,
                tool_calls=tools,
            )

    def _call_args(self, request: ChatRequest) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": request.model,
            "messages": request.messages,
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

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self._retry.backoff_max_s)
        ceiling = min(self._retry.backoff_max_s, self._retry.backoff_base_s * 2 ** (attempt - 1))
        return self._rng.uniform(ceiling / 2, ceiling)

    def _cost(self, model: str, response: Any, usage: Any) -> float:
        price = self._prices.get(model)
        if price is not None:
            return (
                int(getattr(usage, "prompt_tokens", 0) or 0) * price.input_per_mtok
                + int(getattr(usage, "completion_tokens", 0) or 0) * price.output_per_mtok
            ) / 1_000_000
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
