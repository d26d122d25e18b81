"""Each provider's prompt (prefix) cache, as the simulator models it, so the cost of a panel
with and without caching can be measured.

A prompt is read as blocks: the response schema (tools and structured-output schemas come
first in every provider's prefix), then each message. A prefix is matched at block boundaries
(hash chains), never inside a block: this underestimates OpenAI's and Gemini's token-level
matching a little (the item's own message is never shared anyway). Per wire format:

- ``openai``: automatic for prompts of 1,024+ tokens; the cached part is the longest prefix
  seen before, rounded down to 1,024 + a multiple of 128 tokens; writes cost nothing.
  Reported as ``usage.prompt_tokens_details.cached_tokens``.
- ``anthropic``: only at explicit ``cache_control`` breakpoints, and only when the prefix up
  to the breakpoint reaches the model's minimum (2,048 tokens for Haiku models, 1,024 for the
  others). The longest cached breakpoint is read; the last breakpoint, if not cached, is
  written. Reported as ``cache_read_input_tokens`` / ``cache_creation_input_tokens``, with
  ``input_tokens`` the rest (as the Messages API counts).
- ``gemini``: implicit caching for prompts from 1,024 tokens (2,048 for Pro models): the
  longest prefix seen before. Reported as ``usageMetadata.cachedContentTokenCount`` (within
  ``promptTokenCount``).

An entry lives ``ttl_s`` seconds (providers keep one about five minutes), refreshed by each
hit, per (wire format, model). A prompt counts as seen when it arrives: the prefill happens
before the simulated latency, so concurrent requests after the first one hit.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from judge.simulator.formats.common import JudgeCall, estimate_tokens

__all__ = ["CacheHit", "PrefixCache", "minimum_tokens"]

_MAX_ENTRIES = 200_000
_OPENAI_STEP = 128


@dataclass(frozen=True)
class CacheHit:
    """Prompt tokens read from the cache and written to it for one call."""

    read: int = 0
    write: int = 0


def minimum_tokens(wire: str, model: str) -> int:
    """The shortest prefix the provider caches for ``model``."""
    name = model.lower()
    if wire == "anthropic" and "haiku" in name:
        return 2_048
    if wire == "gemini" and "pro" in name:
        return 2_048
    return 1_024


def _boundaries(call: JudgeCall) -> list[tuple[int, str]]:
    """(tokens up to the end of block i, hash of the prefix ending there), in order; the
    token counts add up to ``call.prompt_tokens``."""
    digest = hashlib.sha256()
    schema = json.dumps(call.schema, ensure_ascii=False) if call.schema is not None else ""
    digest.update(schema.encode())
    tokens = 3 + (estimate_tokens(schema) if call.schema is not None else 0)
    out = [(tokens, digest.hexdigest())]
    for message in call.messages:
        text = str(message.get("content") or "")
        digest.update(f"\x00{message.get('role')}\x00{text}".encode())
        tokens += 4 + estimate_tokens(text)
        out.append((tokens, digest.hexdigest()))
    return out


class PrefixCache:
    """The prefix caches of one simulator process (``clock`` is injectable for tests)."""

    def __init__(self, ttl_s: float = 300.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl = ttl_s
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str, str], float] = OrderedDict()

    def _seen(self, key: tuple[str, str, str], now: float) -> bool:
        expires = self._entries.get(key)
        if expires is None:
            return False
        if expires < now:
            del self._entries[key]
            return False
        return True

    def _store(self, key: tuple[str, str, str], now: float) -> None:
        self._entries[key] = now + self._ttl
        self._entries.move_to_end(key)
        while len(self._entries) > _MAX_ENTRIES:
            self._entries.popitem(last=False)

    def lookup(self, wire: str, call: JudgeCall) -> CacheHit:
        """What this call reads from and writes to ``wire``'s cache; it is then seen."""
        now = self._clock()
        floor = minimum_tokens(wire, call.model)
        bounds = _boundaries(call)
        if wire == "anthropic":
            return self._breakpoints(call, bounds, floor, now)
        matched = 0
        for tokens, digest in bounds:
            key = (wire, call.model, digest)
            if self._seen(key, now):
                matched = tokens
            self._store(key, now)
        if matched < floor:
            return CacheHit()
        if wire == "openai":
            matched = floor + (matched - floor) // _OPENAI_STEP * _OPENAI_STEP
        return CacheHit(read=min(matched, call.prompt_tokens))

    def _breakpoints(
        self, call: JudgeCall, bounds: list[tuple[int, str]], floor: int, now: float
    ) -> CacheHit:
        # bounds[0] is the schema; message i ends at bounds[i + 1]
        marked = [bounds[i + 1] for i in call.cache_breakpoints if 0 <= i < len(call.messages)]
        eligible = [(tokens, digest) for tokens, digest in marked if tokens >= floor]
        read = 0
        for tokens, digest in eligible:
            key = ("anthropic", call.model, digest)
            if self._seen(key, now):
                read = max(read, tokens)
                self._store(key, now)  # a hit refreshes the entry
        write = 0
        if eligible:
            tokens, digest = max(eligible)
            if tokens > read:
                write = tokens - read
                self._store(("anthropic", call.model, digest), now)
        return CacheHit(read=read, write=write)
