"""The boundary to language models: a request, a result, and the client protocol.

Only :mod:`judge.llm.litellm_client` talks to LiteLLM; everything else depends on
:class:`ChatClient`. A result is either a reply (``content``) or a failure with a ``reason``;
failures are recorded as abstentions by the caller and never turned into scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

FailureReason = Literal[
    "timeout", "rate_limit", "provider_error", "refusal", "auth_error", "bad_request"
]


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: list[dict[str, str]]
    response_format: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    api_base: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0
    use_cache: bool = True


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

    @property
    def ok(self) -> bool:
        return self.failure is None


class ChatClient(Protocol):
    async def complete(self, request: ChatRequest) -> ChatResult: ...
