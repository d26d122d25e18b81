"""OpenAI chat completions: ``POST /v1/chat/completions`` (LiteLLM's ``openai/...``)."""

from __future__ import annotations

import time
import uuid
from typing import Any

from judge.simulator.conversation import message_text
from judge.simulator.engine import WRONG_TOOL, Reply
from judge.simulator.formats.common import (
    STATUS,
    JudgeCall,
    SimError,
    Usage,
    WireFormat,
    positive_int,
    require_object,
    retry_after_seconds,
)
from judge.simulator.schema import requested_schema

FINGERPRINT = "empathy-judge-simulator"

_TYPE = {
    "rate_limited": "rate_limit_error",
    "server": "server_error",
    "overloaded": "server_error",
    "authentication": "authentication_error",
    "permission": "permission_error",
}
_CODE = {"rate_limited": "rate_limit_exceeded", "overloaded": "service_unavailable"}


def read(body: Any, path_model: str | None) -> JudgeCall:
    body = require_object(body)
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise SimError("invalid_request", "'model' is required (a persona name or alias)")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SimError("invalid_request", "'messages' must be a non-empty list")
    if body.get("stream"):
        raise SimError("invalid_request", "the simulator does not stream; send stream=false")
    schema = requested_schema(body.get("response_format"))
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    return JudgeCall(
        model=model,
        messages=[
            {
                "role": "system" if m.get("role") == "developer" else m.get("role"),
                "content": message_text(m),
            }
            for m in messages
            if isinstance(m, dict)
        ],
        schema=schema,
        schema_via="response_format" if schema is not None else "none",
        max_tokens=positive_int(limit, "max_completion_tokens"),
    )


def reply(call: JudgeCall, answer: Reply, usage: Usage) -> dict[str, Any]:
    if answer.kind == "blocked":  # the moderation system rejects the prompt itself
        raise SimError(
            "invalid_request",
            "Invalid prompt: your prompt was flagged as potentially violating our usage "
            f"policy. {answer.content}",
            code="invalid_prompt",
        )
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    finish: str = answer.finish_reason
    if answer.kind == "refusal":  # structured outputs: a refusal instead of the schema
        message = {"role": "assistant", "content": None, "refusal": answer.content}
    elif answer.kind == "tool_call":
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{uuid.uuid4().hex[:24]}",
                    "type": "function",
                    "function": {"name": WRONG_TOOL, "arguments": answer.content},
                }
            ],
        }
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-sim-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": call.model,
        "system_fingerprint": FINGERPRINT,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens, "audio_tokens": 0},
        },
    }


def error(exc: SimError) -> tuple[int, dict[str, Any], dict[str, str]]:
    headers: dict[str, str] = {}
    if exc.retry_after_ms is not None:
        headers["retry-after"] = retry_after_seconds(exc.retry_after_ms)
        headers["retry-after-ms"] = str(exc.retry_after_ms)
    if exc.allow:
        headers["allow"] = ", ".join(exc.allow)
    body = {
        "error": {
            "message": exc.message,
            "type": _TYPE.get(exc.kind, "invalid_request_error"),
            "param": None,
            "code": exc.code or _CODE.get(exc.kind),
        }
    }
    return STATUS[exc.kind], body, headers


OPENAI = WireFormat("openai", read, reply, error)
