"""Serve identical (model, parameters, messages, schema) calls from a cache.

Only complete, successful replies are cached (not one cut at the token limit). A cached
reply costs nothing and is marked ``cached`` so usage reports count it as a cache hit, not
as an LLM call.

The cache is partitioned by tenant (the API key that owns the job, set with
:func:`cache_partition` around the scoring): a hit, reported in ``usage.cache_hits`` and
visible as a faster answer, must never reveal that another key scored the same text.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Protocol

from judge.domain.cached_reply import CachedReply
from judge.llm.client import ChatClient, ChatRequest, ChatResult


class CallCache(Protocol):
    async def get(self, key: str) -> CachedReply | None: ...

    async def put(self, key: str, model: str, reply: CachedReply) -> None: ...


#: the tenant whose calls are being made (None: no key, the keyless loopback mode); a
#: context variable, so the panel's concurrent judge calls inherit it
_PARTITION: ContextVar[str | None] = ContextVar("judge_cache_partition", default=None)


@contextlib.contextmanager
def cache_partition(owner: str | None) -> Iterator[None]:
    token = _PARTITION.set(owner)
    try:
        yield
    finally:
        _PARTITION.reset(token)


def cache_key(request: ChatRequest) -> str:
    payload: list[object] = [
        request.model,
        request.params,
        request.messages,
        request.response_format,
    ]
    if request.api_base:  # another endpoint (the simulator, a proxy) is another reply
        payload.append({"api_base": request.api_base})
    if request.sample:  # sample 0 keeps the key it had before samples existed
        payload.append({"sample": request.sample})
    owner = _PARTITION.get()
    if owner is not None:  # keyless entries keep the key they had before partitioning
        payload.append({"owner": owner})
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class CachingClient:
    def __init__(self, inner: ChatClient, cache: CallCache) -> None:
        self._inner = inner
        self._cache = cache

    async def complete(self, request: ChatRequest) -> ChatResult:
        if not request.use_cache:
            return await self._inner.complete(request)
        key = cache_key(request)
        hit = await self._cache.get(key)
        if hit is not None:
            return ChatResult(
                model=request.model,
                resolved_model=hit.resolved_model,
                content=hit.content,
                failure=None,
                error=None,
                prompt_tokens=0,
                completion_tokens=0,
                cost_usd=0.0,
                latency_ms=0.0,
                attempts=0,
                cached=True,
                simulated=hit.simulated,
            )
        result = await self._inner.complete(request)
        if result.ok and result.content and not result.truncated:
            await self._cache.put(
                key,
                request.model,
                CachedReply(
                    content=result.content,
                    resolved_model=result.resolved_model,
                    prompt_tokens=result.prompt_tokens,
                    completion_tokens=result.completion_tokens,
                    cost_usd=result.cost_usd,
                    simulated=result.simulated,
                ),
            )
        return result
