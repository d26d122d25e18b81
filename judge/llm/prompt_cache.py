"""Provider prompt caching: the breakpoint Anthropic needs, the cached-token counts every
provider reports, and their price.

The system message depends only on the rubric (:mod:`judge.llm.prompts`), so every item of a
rubric shares it as a prompt prefix. OpenAI caches such prefixes by itself (prompts of 1,024+
tokens) and Gemini 2.5+ implicitly; Anthropic only up to an explicit ``cache_control``
breakpoint, which :func:`with_cache_breakpoint` puts on the system block (LiteLLM passes it
on to the Messages API as is).

What comes back, as LiteLLM normalises it and as the direct path reads it:
``usage.prompt_tokens`` counts every prompt token, cached ones included;
``usage.prompt_tokens_details.cached_tokens`` the tokens read from the cache (OpenAI's own
field; LiteLLM maps Anthropic's ``cache_read_input_tokens`` and Gemini's
``cachedContentTokenCount`` onto it); ``prompt_tokens_details.cache_creation_tokens`` or
Anthropic's top-level ``cache_creation_input_tokens`` the tokens written to the cache
(Anthropic charges a write at 1.25x the input price).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judge.domain.providers import provider_of

__all__ = [
    "CACHE_CONTROL_PROVIDERS",
    "CacheUsage",
    "TokenPrices",
    "cache_usage",
    "split_cost",
    "with_cache_breakpoint",
]

#: providers whose prompt cache works only at explicit ``cache_control`` breakpoints
#: (Gemini's cache_control means LiteLLM would create a context cache through another API)
CACHE_CONTROL_PROVIDERS = frozenset({"anthropic"})
_EPHEMERAL = {"type": "ephemeral"}


def with_cache_breakpoint(model: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with a cache breakpoint on the system block, for a provider that caches
    only there; the messages themselves otherwise (a new list, the input is not changed)."""
    if provider_of(model) not in CACHE_CONTROL_PROVIDERS:
        return messages
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str) and content:
            block = {"type": "text", "text": content, "cache_control": _EPHEMERAL}
            message = {**message, "content": [block]}
        out.append(message)
    return out


@dataclass(frozen=True)
class CacheUsage:
    """Prompt tokens read from the provider's cache and written to it (within the total)."""

    read: int = 0
    write: int = 0


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _field(source: Any, name: str) -> Any:
    if isinstance(source, dict):
        return source.get(name)
    return getattr(source, name, None)


def cache_usage(usage: Any) -> CacheUsage:
    """The cached-token counts of a reply's ``usage`` (an object or a dict), whichever
    provider's fields carry them; zero when none do."""
    if usage is None:
        return CacheUsage()
    details = _field(usage, "prompt_tokens_details")
    read = _int(_field(details, "cached_tokens")) if details is not None else 0
    read = read or _int(_field(usage, "cache_read_input_tokens"))
    write = _int(_field(details, "cache_creation_tokens")) if details is not None else 0
    write = write or _int(_field(usage, "cache_creation_input_tokens"))
    total = _int(_field(usage, "prompt_tokens"))
    if total:  # a provider cannot have cached more than it was sent
        read = min(read, total)
        write = min(write, total - read)
    return CacheUsage(read, write)


@dataclass(frozen=True)
class TokenPrices:
    """USD per token; a cache price of None is the input price (no discount assumed)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


def split_cost(prices: TokenPrices, usage: Any) -> float:
    """What a reply cost: uncached prompt tokens at the input price, cache reads and writes at
    their own, completion tokens at the output price."""
    prompt = _int(_field(usage, "prompt_tokens"))
    completion = _int(_field(usage, "completion_tokens"))
    cached = cache_usage(usage)
    read_price = prices.input if prices.cache_read is None else prices.cache_read
    write_price = prices.input if prices.cache_write is None else prices.cache_write
    fresh = max(0, prompt - cached.read - cached.write)
    return (
        fresh * prices.input
        + cached.read * read_price
        + cached.write * write_price
        + completion * prices.output
    )
