"""Anthropic Messages: ``POST /v1/messages`` (LiteLLM's ``anthropic/...``; ``api_base`` is the
simulator's root URL, LiteLLM appends ``/v1/messages``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

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

#: The tool LiteLLM declares (and forces) to get a JSON reply from models without native
#: structured output (``RESPONSE_FORMAT_TOOL_NAME`` in litellm).
JSON_TOOL = "json_tool_call"

_STATUS = {**STATUS, "overloaded": 529}
_TYPE = {
    "authentication": "authentication_error",
    "permission": "permission_error",
    "not_found": "not_found_error",
    "too_large": "request_too_large",
    "rate_limited": "rate_limit_error",
    "server": "api_error",
    "overloaded": "overloaded_error",
}


def check_headers(headers: Mapping[str, str], query: Mapping[str, str]) -> None:
    """The API refuses a request without a key or an ``anthropic-version``."""
    if not headers.get("x-api-key") and not headers.get("authorization"):
        raise SimError("authentication", "x-api-key header is required")
    if not headers.get("anthropic-version"):
        raise SimError("invalid_request", "anthropic-version: header is required")


def _block_text(block: Any) -> str:
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return json.dumps(block.get("input"), ensure_ascii=False)
    if kind == "tool_result":
        return _content_text(block.get("content"))
    return ""


def _content_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(t for t in (_block_text(b) for b in content) if t)
    return _block_text(content)


def _schema(body: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    output_format = body.get("output_format")
    if isinstance(output_format, dict) and isinstance(output_format.get("schema"), dict):
        return output_format["schema"], "output_format"
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("name") == JSON_TOOL:
            schema = tool.get("input_schema")
            return (schema, "tool") if isinstance(schema, dict) else (None, "none")
    return None, "none"


def _marked(content: Any) -> bool:
    """Whether a content (a string or a list of blocks) carries a ``cache_control``."""
    blocks = content if isinstance(content, list) else [content]
    return any(isinstance(b, dict) and b.get("cache_control") for b in blocks)


def read(body: Any, path_model: str | None) -> JudgeCall:
    body = require_object(body)
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise SimError("invalid_request", "model: Field required")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise SimError("invalid_request", "messages: Field required (a non-empty list)")
    if "max_tokens" not in body:
        raise SimError("invalid_request", "max_tokens: Field required")
    if body.get("stream"):
        raise SimError("invalid_request", "the simulator does not stream; send stream=false")
    converted: list[dict[str, Any]] = []
    breakpoints: list[int] = []
    system = _content_text(body.get("system"))
    if system:
        if _marked(body.get("system")):
            breakpoints.append(0)
        converted.append({"role": "system", "content": system})
    for message in messages:
        if isinstance(message, dict):
            role = "assistant" if message.get("role") == "assistant" else "user"
            if _marked(message.get("content")):
                breakpoints.append(len(converted))
            converted.append({"role": role, "content": _content_text(message.get("content"))})
    schema, via = _schema(body)
    return JudgeCall(
        model=model,
        messages=converted,
        schema=schema,
        schema_via=via,
        max_tokens=positive_int(body.get("max_tokens"), "max_tokens"),
        cache_breakpoints=tuple(breakpoints),
    )


def _content(call: JudgeCall, answer: Reply) -> tuple[list[dict[str, Any]], str]:
    """Content blocks and ``stop_reason``."""
    cut = answer.finish_reason == "length"
    if answer.kind == "tool_call":
        tool = {"type": "tool_use", "id": _id("toolu"), "name": WRONG_TOOL}
        return [{**tool, "input": json.loads(answer.content)}], "tool_use"
    if call.schema_via == "tool":
        if cut:  # a tool call cut at max_tokens: the API cannot return half an object
            return [{"type": "tool_use", "id": _id("toolu"), "name": JSON_TOOL, "input": {}}], (
                "max_tokens"
            )
        try:
            payload = json.loads(answer.content)
        except json.JSONDecodeError:
            payload = None
        if isinstance(payload, dict):
            block = {"type": "tool_use", "id": _id("toolu"), "name": JSON_TOOL, "input": payload}
            return [block], "tool_use"
    return [{"type": "text", "text": answer.content}], "max_tokens" if cut else "end_turn"


def reply(call: JudgeCall, answer: Reply, usage: Usage) -> dict[str, Any]:
    stop_details = None
    if answer.kind in ("refusal", "blocked"):
        content: list[dict[str, Any]] = []
        stop_reason = "refusal"
        stop_details = {"type": "refusal", "explanation": answer.content}
    else:
        content, stop_reason = _content(call, answer)
    message: dict[str, Any] = {
        "id": _id("msg"),
        "type": "message",
        "role": "assistant",
        "model": call.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            # the Messages API counts cached tokens apart from ``input_tokens``
            "input_tokens": usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens,
            "output_tokens": usage.completion_tokens,
            "cache_creation_input_tokens": usage.cache_write_tokens,
            "cache_read_input_tokens": usage.cached_tokens,
        },
    }
    if stop_details is not None:
        message["stop_details"] = stop_details
    return message


def error(exc: SimError) -> tuple[int, dict[str, Any], dict[str, str]]:
    request_id = _id("req")
    headers = {"request-id": request_id}
    if exc.retry_after_ms is not None:
        headers["retry-after"] = retry_after_seconds(exc.retry_after_ms)
    if exc.allow:
        headers["allow"] = ", ".join(exc.allow)
    body = {
        "type": "error",
        "error": {"type": _TYPE.get(exc.kind, "invalid_request_error"), "message": exc.message},
        "request_id": request_id,
    }
    return _STATUS[exc.kind], body, headers


def _id(prefix: str) -> str:
    return f"{prefix}_sim{uuid.uuid4().hex[:21]}"


ANTHROPIC = WireFormat("anthropic", read, reply, error, check_headers)
