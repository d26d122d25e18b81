"""The boundary to language models: a request, a result, and the client protocol.

Only :mod:`judge.llm.litellm_client` talks to LiteLLM; everything else depends on
:class:`ChatClient`. A result is either a reply (``content``) or a failure with a ``reason``;
failures are recorded as abstentions by the caller and never turned into scores.

Failure reasons (they are also abstention reasons, see :mod:`judge.domain.result`):
``refused`` (a refusal or a safety block, in the reply or as an error), ``timed_out``,
``rate_limit`` (still limited after the retries), ``provider_error`` (5xx and overload after
the retries, connection errors, an unusable reply), ``auth_error``, ``bad_request``,
``unknown_model`` (the provider does not know the model). ``auth_error`` and ``unknown_model``
are configuration failures: they stop the run instead of becoming abstentions.
A reply cut at the token limit is not a failure here: it is marked ``truncated`` and the
caller decides whether what arrived is usable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import SecretStr

from judge.domain.result import CallFailure

#: why a call failed (one vocabulary with the results': :data:`judge.domain.result.CallFailure`)
FailureReason = CallFailure
#: Failures that no retry and no other item can cure: the judge's configuration is wrong
#: (no or refused credentials, a model the provider does not know). They stop a run.
CONFIGURATION_FAILURES: frozenset[str] = frozenset({"auth_error", "unknown_model"})


def as_secret(value: SecretStr | str | None) -> SecretStr | None:
    """A provider key as :class:`SecretStr` (hidden from every repr); plain strings from
    callers are wrapped, empty ones mean no key."""
    if value is None or isinstance(value, SecretStr):
        return value
    return SecretStr(value) if value else None


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: list[dict[str, str]]
    response_format: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    api_base: str | None = None
    api_key: SecretStr | None = field(default=None, repr=False)
    timeout_s: float = 60.0
    use_cache: bool = True
    sample: int = 0  # self-consistency sample index: part of the cache key, never collapsed
    #: the client path: ``auto``, ``litellm`` or ``openai`` (see :mod:`judge.llm.routing`)
    client: Literal["auto", "litellm", "openai"] = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_key", as_secret(self.api_key))


@dataclass(frozen=True)
class ChatResult:
    """One logical call (after retries). Token counts and cost cover every attempt made."""

    model: str
    resolved_model: str | None
    content: str | None
    failure: FailureReason | None
    error: str | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: float
    attempts: int
    cached: bool = False
    truncated: bool = False  # the reply stopped at the token limit (``content`` is partial)
    tool_calls: tuple[str, ...] = ()  # tools the reply called instead of answering
    simulated: bool = False  # the reply came from the LLM simulator (judge.domain.provenance)
    #: prompt tokens the provider read from / wrote to its prompt cache (within prompt_tokens)
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None


class ChatClient(Protocol):
    async def complete(self, request: ChatRequest) -> ChatResult: ...
