"""What the wire formats share: a judge call read from a request, token usage, an error."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from judge.simulator.engine import Reply

#: Provider-neutral error kinds; each format gives them its own status, type and body.
ErrorKind = Literal[
    "invalid_request",  # 400
    "authentication",  # 401
    "permission",  # 403
    "not_found",  # 404
    "method_not_allowed",  # 405
    "too_large",  # 413
    "rate_limited",  # 429, with a retry delay
    "server",  # 500
    "overloaded",  # 503 (OpenAI, Gemini) or 529 (Anthropic)
    "client_closed",  # 499: the caller went away while the simulator waited
]


#: HTTP status per error kind (OpenAI's; Anthropic overloads with 529, Gemini adds names).
STATUS: dict[ErrorKind, int] = {
    "invalid_request": 400,
    "authentication": 401,
    "permission": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "too_large": 413,
    "rate_limited": 429,
    "server": 500,
    "overloaded": 503,
    "client_closed": 499,
}


class SimError(Exception):
    """A failure to answer in the caller's wire format (see :attr:`WireFormat.error`)."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        code: str | None = None,
        retry_after_ms: int | None = None,
        allow: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.code = code
        self.retry_after_ms = retry_after_ms
        self.allow = allow


def estimate_tokens(text: str) -> int:
    """About four characters per token, at least one."""
    return max(1, math.ceil(len(text) / 4))


@dataclass(frozen=True)
class JudgeCall:
    """One request, whatever its wire format.

    ``messages`` are OpenAI-style ``{"role": "system" | "user" | "assistant", "content": str}``
    (what the engine reads); ``schema`` is the JSON schema the caller asked the reply to
    follow, ``schema_via`` says how it was asked (``response_format``, ``tool``,
    ``output_format``, ``response_json_schema``, ``response_schema`` or ``none``)."""

    model: str
    messages: list[dict[str, Any]]
    schema: dict[str, Any] | None = None
    schema_via: str = "none"
    max_tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: indexes of ``messages`` ending at an explicit prompt-cache breakpoint (Anthropic's
    #: ``cache_control``; :mod:`judge.simulator.prefix_cache`)
    cache_breakpoints: tuple[int, ...] = ()

    @property
    def prompt_tokens(self) -> int:
        """Messages (content plus a few tokens of framing each) and the response schema."""
        total = 3 + sum(4 + estimate_tokens(str(m.get("content") or "")) for m in self.messages)
        if self.schema is not None:
            total += estimate_tokens(json.dumps(self.schema, ensure_ascii=False))
        return total

    @property
    def prompt_key(self) -> str:
        """Identifies the prompt (for the per-prompt fault counters of ``failNNN-N``)."""
        text = json.dumps(self.messages, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    #: of ``prompt_tokens``: read from / written to the provider's prompt cache
    cached_tokens: int = 0
    cache_write_tokens: int = 0


def no_header_check(headers: Mapping[str, str], query: Mapping[str, str]) -> None:
    """The OpenAI-compatible route accepts any caller (the simulator's historical behaviour)."""


@dataclass(frozen=True)
class WireFormat:
    """How one provider's API is read and written.

    ``read(body, model)`` turns a parsed JSON body (and the model named in the path, for
    Gemini) into a :class:`JudgeCall` or raises :class:`SimError`; ``reply`` writes the
    answer (or raises :class:`SimError` where the provider answers with an error, e.g. an
    input its safety system rejects); ``error`` gives (status, body, headers) for a
    :class:`SimError`; ``check_headers(headers, query)`` refuses a request the provider
    would refuse (no key, no API version)."""

    name: str
    read: Callable[[Any, str | None], JudgeCall]
    reply: Callable[[JudgeCall, Reply, Usage], dict[str, Any]]
    error: Callable[[SimError], tuple[int, dict[str, Any], dict[str, str]]]
    check_headers: Callable[[Mapping[str, str], Mapping[str, str]], None] = no_header_check


def require_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise SimError("invalid_request", "the request body must be a JSON object")
    return body


def positive_int(value: Any, name: str) -> int | None:
    """An optional positive integer parameter (``max_tokens`` and friends)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SimError("invalid_request", f"{name}: expected a positive integer, got {value!r}")
    return value


def retry_after_seconds(ms: int) -> str:
    """``Retry-After`` in whole seconds, rounded up."""
    return str(max(0, math.ceil(ms / 1000)))
