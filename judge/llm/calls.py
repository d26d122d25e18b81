"""What every client path shares: the one retry layer, how a reply is classified, what a
failure tells callers, and the prices.

Retries: rate limits, 5xx (Anthropic's 529 overload included), connection errors and timeouts
are retried with exponential backoff and jitter, honouring the provider's retry delay
(``retry-after-ms``/``retry-after`` headers; Gemini's ``RetryInfo.retryDelay``). There is no
model fallback: a judge that keeps failing becomes an abstention with its reason. Each client
path only says which of its exceptions are which (``classify``).

This is a small loop rather than tenacity: the decision per attempt needs the provider's own
delay from the exception, the result must carry the attempt count and the reason, and the
jitter source is injected so tests are deterministic; tenacity would wrap the same three
functions and add a dependency to the hot path.

A failure's ``error`` is a reason code and a fixed sentence (plus the HTTP status and the
exception's class): provider messages can carry endpoint URLs and partly masked keys, so their
text goes to this process's log only, never to results or the database.

A reply is classified the same way whichever provider sent it (LiteLLM's reply and the
direct path's parsed JSON have the same shape): ``finish_reason == "content_filter"`` or a
``refusal`` without content is ``refused``; ``finish_reason == "length"``, or a reply that
used every token of an explicit ``max_tokens``, is marked truncated;
tool calls are reported by name.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from judge.domain.provenance import is_simulator_reply
from judge.llm.client import ChatRequest, ChatResult, FailureReason
from judge.llm.prompt_cache import TokenPrices, cache_usage, split_cost

log = logging.getLogger("judge.llm")

Classifier = Callable[[BaseException], tuple[FailureReason, bool]]

_PUBLIC_ERRORS: dict[str, str] = {
    "timed_out": "the provider did not answer in time",
    "rate_limit": "the provider kept refusing for rate limits",
    "provider_error": "the provider failed to answer",
    "refused": "the provider refused the request (content policy)",
    "auth_error": "the provider refused the credentials, or none were configured",
    "bad_request": "the provider rejected the request as invalid",
    "unknown_model": "the provider does not know this model",
}
_RETRY_DELAY = re.compile(r'"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"')


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens, for models LiteLLM's price map does not know; prompt tokens
    read from (written to) the provider's cache cost ``cached_input_per_mtok``
    (``cache_write_per_mtok``), the input price when not given."""

    input_per_mtok: float
    output_per_mtok: float
    cached_input_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None

    def per_token(self) -> TokenPrices:
        def scaled(value: float | None) -> float | None:
            return None if value is None else value / 1_000_000

        return TokenPrices(
            self.input_per_mtok / 1_000_000,
            self.output_per_mtok / 1_000_000,
            scaled(self.cached_input_per_mtok),
            scaled(self.cache_write_per_mtok),
        )


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max_s)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        return rng.uniform(ceiling / 2, ceiling)


def public_error(reason: str, exc: BaseException, attempts: int) -> str:
    """What callers may see of a failed call: no provider text (see the module docstring)."""
    status = getattr(exc, "status_code", None)
    facts = [f"HTTP {status}"] if isinstance(status, int) else []
    facts += [type(exc).__name__, f"{attempts} attempt{'s' if attempts != 1 else ''}"]
    return f"{reason}: {_PUBLIC_ERRORS.get(reason, 'the call failed')} ({'; '.join(facts)})"


def retry_after(exc: BaseException) -> float | None:
    """The provider's retry delay in seconds: ``retry-after-ms`` or ``retry-after`` (OpenAI;
    Anthropic's headers reach LiteLLM's exceptions as ``litellm_response_headers``), or
    Gemini's ``RetryInfo.retryDelay`` in the error body."""
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


@dataclass
class Attempts:
    """The outcome of :func:`with_retries`: the response, or the last exception and its reason."""

    response: Any
    failure: tuple[BaseException, FailureReason] | None
    count: int


async def with_retries(
    call: Callable[[], Awaitable[Any]],
    *,
    classify: Classifier,
    policy: RetryPolicy,
    rng: random.Random,
    deadline_s: float,
) -> Attempts:
    """Call until a response, a final error, or the retries are spent (``deadline_s`` bounds
    each attempt as a backstop; the clients enforce the request's own timeout)."""
    attempts = 0
    while True:
        attempts += 1
        try:
            response = await asyncio.wait_for(call(), timeout=deadline_s)
        except Exception as exc:
            reason, retryable = classify(exc)
            if retryable and attempts <= policy.max_retries:
                await asyncio.sleep(policy.delay(attempts, retry_after(exc), rng))
                continue
            return Attempts(None, (exc, reason), attempts)
        return Attempts(response, None, attempts)


def reply_outcome(
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


def failed_result(
    request: ChatRequest,
    exc: BaseException,
    reason: FailureReason,
    *,
    attempts: int,
    started: float,
    client: str,
) -> ChatResult:
    """The result of a call that never got a reply; the provider's text goes to the log."""
    log.warning(
        "call to %s via %s failed (%s, %d attempt(s)): %s: %s",
        request.model,
        client,
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
        prompt_tokens=0,
        completion_tokens=0,
        cost_usd=0.0,
        latency_ms=(time.perf_counter() - started) * 1000,
        attempts=attempts,
    )


def reply_result(
    request: ChatRequest,
    response: Any,
    *,
    attempts: int,
    started: float,
    cost: Callable[[Any], float],
    simulated: bool = False,
) -> ChatResult:
    """The result of a reply (OpenAI chat-completion shape); one without a usable message is
    the provider's fault: an abstention, never a score. ``simulated``: the simulator's mark was
    on the response (its id is checked here too)."""
    try:
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        cached = cache_usage(usage)
        cost_usd = cost(usage)
        choice = response.choices[0]
        content = getattr(choice.message, "content", None)
        failure, error, truncated, tools = reply_outcome(request, choice, completion_tokens)
    except (AttributeError, IndexError, TypeError, ValueError) as exc:
        return ChatResult(
            model=request.model,
            resolved_model=None,
            content=None,
            failure="provider_error",
            error=f"provider_error: the reply has no usable message ({type(exc).__name__})",
            prompt_tokens=0,
            completion_tokens=0,
            cost_usd=0.0,
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
        cost_usd=cost_usd,
        latency_ms=(time.perf_counter() - started) * 1000,
        attempts=attempts,
        truncated=truncated,
        cached_prompt_tokens=cached.read,
        cache_write_tokens=cached.write,
        tool_calls=tools,
        simulated=simulated or is_simulator_reply(None, getattr(response, "id", None)),
    )


def configured_cost(prices: dict[str, ModelPrice], model: str, usage: Any) -> float | None:
    """The cost at a configured price (``prices`` in the settings), or None if none is set;
    cached prompt tokens at the configured cache prices (:func:`prompt_cache.split_cost`)."""
    price = prices.get(model)
    if price is None:
        return None
    return split_cost(price.per_token(), usage)


@cache
def _litellm_price_map() -> dict[str, Any]:
    """LiteLLM's bundled price map, read as a file: finding the package does not import it
    (importing litellm costs seconds and about 150 MB; the direct path does not need it)."""
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "model_prices_and_context_window_backup.json"
        if path.is_file():
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return data
    return {}


def price_map_prices(model: str) -> TokenPrices | None:
    """A model's prices in LiteLLM's price map (``openai/gpt-4o`` is listed as ``gpt-4o``),
    cache reads and writes included where it lists them; None for a model it does not list."""
    table = _litellm_price_map()
    entry = table.get(model) or table.get(model.split("/", 1)[-1])
    if not isinstance(entry, dict):
        return None

    def price(key: str) -> float | None:
        value = entry.get(key)
        return float(value) if isinstance(value, int | float) else None

    return TokenPrices(
        price("input_cost_per_token") or 0.0,
        price("output_cost_per_token") or 0.0,
        price("cache_read_input_token_cost"),
        price("cache_creation_input_token_cost"),
    )


def price_map_cost(model: str, usage: Any) -> float:
    """The cost from LiteLLM's price map (a table lookup, cached tokens at their price); a
    model it does not list costs 0 (configure a price)."""
    prices = price_map_prices(model)
    return 0.0 if prices is None else split_cost(prices, usage)


class PathClient:
    """What both client paths share: the retry policy, configured prices, the jitter source,
    and one call with retries turned into a :class:`ChatResult`. A path supplies its
    ``name``, ``classify`` and the coroutine of one attempt."""

    name = "path"
    #: a backstop over the request's own timeout, which the HTTP client enforces
    deadline_grace_s = 5.0

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

    def classify(self, exc: BaseException) -> tuple[FailureReason, bool]:
        raise NotImplementedError

    async def _call(
        self,
        request: ChatRequest,
        attempt: Callable[[], Awaitable[Any]],
        cost: Callable[[Any, Any], float],
        simulated: Callable[[Any], bool] = lambda _response: False,
    ) -> ChatResult:
        """``cost(response, usage)`` prices a reply; ``simulated(response)`` reads the
        simulator's mark from what the path kept of the response headers."""
        started = time.perf_counter()
        outcome = await with_retries(
            attempt,
            classify=self.classify,
            policy=self._retry,
            rng=self._rng,
            deadline_s=request.timeout_s + self.deadline_grace_s,
        )
        if outcome.failure is not None:
            return failed_result(
                request, *outcome.failure, attempts=outcome.count, started=started, client=self.name
            )
        response = outcome.response
        return reply_result(
            request,
            response,
            attempts=outcome.count,
            started=started,
            cost=lambda usage: cost(response, usage),
            simulated=simulated(response),
        )
