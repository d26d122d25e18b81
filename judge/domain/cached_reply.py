"""A cached LLM reply (shared by the caching client and the SQL cache store)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CachedReply:
    content: str
    resolved_model: str | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    simulated: bool = False  # the simulator sent it (judge.domain.provenance)
