"""A :class:`~judge.llm.client.ChatClient` that answers from a script, in process.

For fast tests of the panel, aggregation and flags that must not depend on the simulator's
keyword heuristics or on HTTP: the script decides each judge's reply from the request. The
real provider path is tested against the simulator over HTTP; this client is not a provider.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from judge.llm.client import ChatRequest, ChatResult, FailureReason

#: a script answers a request with the reply's text, or with a whole result (a failure)
Script = Callable[[ChatRequest], str | ChatResult]


def judgment(ratings: Mapping[str, Any], rationale: str = "scripted") -> str:
    """A reply in the judgment schema rating each dimension id in ``ratings``."""
    return json.dumps(
        {"ratings": {dim: {"rationale": rationale, "rating": r} for dim, r in ratings.items()}}
    )


def failure(
    request: ChatRequest, reason: FailureReason, error: str = "scripted failure"
) -> ChatResult:
    """A failed call, as a client reports one after its retries."""
    return ChatResult(
        model=request.model,
        resolved_model=None,
        content=None,
        failure=reason,
        error=error,
        prompt_tokens=0,
        completion_tokens=0,
        cost_usd=0.0,
        latency_ms=0.0,
        attempts=1,
    )


class ScriptedChatClient:
    """Answers every request from ``script`` and keeps the requests it saw."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[ChatRequest] = []

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.requests.append(request)
        answer = self.script(request)
        if isinstance(answer, ChatResult):
            return answer
        return ChatResult(
            model=request.model,
            resolved_model=request.model,
            content=answer,
            failure=None,
            error=None,
            prompt_tokens=sum(len(m["content"]) for m in request.messages) // 4,
            completion_tokens=len(answer) // 4,
            cost_usd=0.0,
            latency_ms=0.0,
            attempts=1,
        )
