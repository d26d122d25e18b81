"""Gemini ``generateContent`` in the Google AI Studio shape: ``POST
{api_base}/models/{model}:generateContent`` (LiteLLM's ``gemini/...``; the simulator answers
under ``/v1beta``, ``/v1`` and its root alike)."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from judge.domain.provenance import SIMULATOR_REPLY_ID_PREFIX
from judge.simulator.engine import WRONG_TOOL, Reply
from judge.simulator.formats.common import (
    STATUS,
    JudgeCall,
    SimError,
    Usage,
    WireFormat,
    positive_int,
    require_object,
)

_STATUS_NAME = {
    "invalid_request": "INVALID_ARGUMENT",
    "authentication": "UNAUTHENTICATED",
    "permission": "PERMISSION_DENIED",
    "not_found": "NOT_FOUND",
    "method_not_allowed": "UNIMPLEMENTED",
    "too_large": "INVALID_ARGUMENT",
    "rate_limited": "RESOURCE_EXHAUSTED",
    "server": "INTERNAL",
    "overloaded": "UNAVAILABLE",
    "client_closed": "CANCELLED",
}
_SAFETY_BLOCK = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH", "blocked": True}]
_SAFETY_OK = [
    {"category": c, "probability": "NEGLIGIBLE"}
    for c in ("HARM_CATEGORY_HARASSMENT", "HARM_CATEGORY_HATE_SPEECH")
]
_OPENAPI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}
#: For a model its price map does not mark as taking a response schema, LiteLLM sends only
#: ``response_mime_type`` and appends the schema to the prompt in this form.
_PROMPT_SCHEMA = re.compile(r"Use this JSON schema:\s*```json\s*(\{.*\})\s*```", re.DOTALL)


def check_headers(headers: Mapping[str, str], query: Mapping[str, str]) -> None:
    if not headers.get("x-goog-api-key") and not query.get("key"):
        raise SimError(
            "permission",
            "Method doesn't allow unregistered callers (callers without established identity). "
            "Please use API Key or other form of API consumer identity to call this API.",
        )


def _get(mapping: Mapping[str, Any], snake: str) -> Any:
    """A field under its snake_case or camelCase name (the API accepts both)."""
    head, *rest = snake.split("_")
    camel = head + "".join(part.title() for part in rest)
    return mapping.get(snake, mapping.get(camel))


def _parts_text(content: Any) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    texts = []
    for part in parts if isinstance(parts, list) else []:
        if isinstance(part, dict) and "text" in part:
            texts.append(str(part["text"]))
        elif isinstance(part, dict) and ("functionCall" in part or "function_call" in part):
            texts.append(json.dumps(_get(part, "function_call"), ensure_ascii=False))
    return "\n".join(texts)


def openapi_to_json_schema(schema: Any) -> Any:
    """A ``responseSchema`` (OpenAPI subset: upper-case types, string enums) read as JSON
    schema, so older Gemini models' requests are understood too."""
    if isinstance(schema, list):
        return [openapi_to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: openapi_to_json_schema(v) for k, v in schema.items()}
    kind = out.get("type")
    if isinstance(kind, str) and kind in _OPENAPI_TYPES:
        out["type"] = kind.lower()
    enum = out.get("enum")
    if out.get("type") in ("integer", "number") and isinstance(enum, list):
        with contextlib.suppress(TypeError, ValueError):
            out["enum"] = [int(v) for v in enum]
    return out


def read(body: Any, path_model: str | None) -> JudgeCall:
    body = require_object(body)
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise SimError(
            "invalid_request", "* GenerateContentRequest.contents: contents is not specified"
        )
    messages: list[dict[str, Any]] = []
    system = _parts_text(_get(body, "system_instruction"))
    if system:
        messages.append({"role": "system", "content": system})
    for content in contents:
        if isinstance(content, dict):
            role = "assistant" if content.get("role") == "model" else "user"
            messages.append({"role": role, "content": _parts_text(content)})
    config = _get(body, "generation_config")
    config = config if isinstance(config, dict) else {}
    schema: Any = _get(config, "response_json_schema")
    via = "response_json_schema"
    if schema is None and _get(config, "response_schema") is not None:
        schema, via = openapi_to_json_schema(_get(config, "response_schema")), "response_schema"
    if schema is None and messages:
        found = _PROMPT_SCHEMA.search(str(messages[-1]["content"]))
        if found:
            try:
                schema, via = openapi_to_json_schema(json.loads(found.group(1))), "prompt"
            except json.JSONDecodeError:
                schema = None
    if not isinstance(schema, dict):
        schema, via = None, "none"
    return JudgeCall(
        model=path_model or "",
        messages=messages,
        schema=schema,
        schema_via=via,
        max_tokens=positive_int(_get(config, "max_output_tokens"), "maxOutputTokens"),
    )


def reply(call: JudgeCall, answer: Reply, usage: Usage) -> dict[str, Any]:
    used = {
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": usage.completion_tokens,
        "totalTokenCount": usage.prompt_tokens + usage.completion_tokens,
    }
    if usage.cached_tokens:  # within promptTokenCount, as the API reports it
        used["cachedContentTokenCount"] = usage.cached_tokens
    common = {
        "usageMetadata": used,
        "modelVersion": call.model,
        "responseId": f"{SIMULATOR_REPLY_ID_PREFIX}{uuid.uuid4().hex}",
    }
    if answer.kind == "blocked":  # the prompt itself is blocked: no candidates at all
        feedback = {"blockReason": "SAFETY", "safetyRatings": _SAFETY_BLOCK}
        return {"promptFeedback": feedback, **common}
    if answer.kind == "refusal":  # the candidate stopped by the safety filter, no content
        candidate = {"finishReason": "SAFETY", "index": 0, "safetyRatings": _SAFETY_BLOCK}
        return {"candidates": [candidate], **common}
    if answer.kind == "tool_call":
        call_part = {"functionCall": {"name": WRONG_TOOL, "args": json.loads(answer.content)}}
        parts: list[dict[str, Any]] = [call_part]
    else:
        parts = [{"text": answer.content}]
    candidate = {
        "content": {"parts": parts, "role": "model"},
        "finishReason": "MAX_TOKENS" if answer.finish_reason == "length" else "STOP",
        "index": 0,
        "safetyRatings": _SAFETY_OK,
    }
    return {"candidates": [candidate], **common}


def error(exc: SimError) -> tuple[int, dict[str, Any], dict[str, str]]:
    status, name = STATUS[exc.kind], _STATUS_NAME[exc.kind]
    message = exc.message
    details: list[dict[str, Any]] = []
    if exc.retry_after_ms is not None:
        delay = f"{exc.retry_after_ms / 1000:g}s"
        message = f"{message} Please retry in {delay}."
        details.append({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay})
    headers = {"allow": ", ".join(exc.allow)} if exc.allow else {}
    body = {"error": {"code": status, "message": message, "status": name, "details": details}}
    return status, body, headers


GEMINI = WireFormat("gemini", read, reply, error, check_headers)
