"""The simulator's HTTP surface: a plain ASGI app (no web framework), OpenAI-compatible.

Routes: ``POST /v1/chat/completions`` (also ``/chat/completions``), ``GET /v1/models``,
``GET /health``, and for tests ``GET /_simulator/stats`` (``DELETE`` resets it),
``GET /_simulator/aliases``, ``PUT``/``DELETE /_simulator/aliases/{name}``.
Every response carries the header ``x-llm-simulator: empathy-judge``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from judge.simulator.engine import Engine
from judge.simulator.options import SimulatorOptions
from judge.simulator.personas import (
    SIMPLE_PERSONAS,
    Persona,
    UnknownPersona,
    parse_persona,
    strip_provider,
)
from judge.simulator.replay import ReplayTable, load_table

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

SIMULATOR_HEADER = (b"x-llm-simulator", b"empathy-judge")
FINGERPRINT = "empathy-judge-simulator"
MAX_BODY = 32 * 1024 * 1024
_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})


class HttpError(Exception):
    """An OpenAI-style error response."""

    def __init__(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        code: str | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code
        self.headers = headers or []

    def body(self) -> dict[str, Any]:
        return {
            "error": {"message": self.message, "type": self.kind, "param": None, "code": self.code}
        }


def estimate_tokens(text: str) -> int:
    """About four characters per token, at least one."""
    return max(1, math.ceil(len(text) / 4))


def prompt_tokens(body: dict[str, Any]) -> int:
    """Messages (content plus a few tokens of framing each) and the response schema."""
    total = 3
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else message
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        total += 4 + estimate_tokens(text or "")
    if body.get("response_format") is not None:
        total += estimate_tokens(json.dumps(body["response_format"], ensure_ascii=False))
    return total


class ModelStats:
    __slots__ = ("calls", "completion_tokens", "errors", "ok", "prompt_tokens")

    def __init__(self) -> None:
        self.calls = 0
        self.ok = 0
        self.errors: dict[str, int] = defaultdict(int)
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": dict(self.errors),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


class SimulatorApp:
    """The ASGI application. Per-process state: aliases, call statistics, fault counters."""

    def __init__(self, options: SimulatorOptions, engine: Engine) -> None:
        self.options = options
        self.engine = engine
        self.aliases: dict[str, str] = {}
        for name, target in options.aliases.items():
            self.set_alias(name, target)
        self.stats: dict[str, ModelStats] = defaultdict(ModelStats)
        self.fault_counts: dict[tuple[str, str], int] = defaultdict(int)
        self.call_rngs: dict[str, random.Random] = {}
        self.jitter_rng = random.Random(options.seed)
        self.started = int(time.time())

    # -- personas and aliases -------------------------------------------------------------
    def set_alias(self, name: str, target: str) -> Persona:
        if not name or "@" in name or "/" in name:
            raise HttpError(400, f"alias name {name!r} must not be empty or contain '@' or '/'")
        try:
            persona = parse_persona(target, set(self.engine.replay))
        except UnknownPersona as exc:
            raise HttpError(400, str(exc), code="unknown_persona") from None
        self.aliases[name] = target
        return persona

    def resolve(self, model: str) -> Persona:
        bare = strip_provider(model.strip())
        target = self.aliases.get(bare)
        base, _, tag = bare.partition("@")
        if target is None and base in self.aliases:
            # ``alias@tag``: the alias's persona with the tag appended to its own tag.
            target_base, _, target_tag = self.aliases[base].partition("@")
            target = f"{target_base}@{'+'.join(t for t in (target_tag, tag) if t)}"
        try:
            return parse_persona(target or bare, set(self.engine.replay))
        except UnknownPersona as exc:
            raise HttpError(404, str(exc), code="model_not_found") from None

    # -- ASGI -----------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            status, payload, headers = await self._route(scope, receive)
        except HttpError as exc:
            status, payload, headers = exc.status, exc.body(), exc.headers
        except Exception as exc:  # a bug in the simulator must still answer like a provider
            error = HttpError(500, f"simulator internal error: {exc!r}", "server_error")
            status, payload, headers = 500, error.body(), []
        await _send_json(send, status, payload, headers)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _route(
        self, scope: Scope, receive: Receive
    ) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        method: str = scope["method"]
        path: str = scope["path"].rstrip("/") or "/"
        if path in _CHAT_PATHS:
            _allow(method, "POST")
            return await self._chat(await _read_json(receive), receive)
        if path in ("/v1/models", "/models"):
            _allow(method, "GET")
            return 200, self._models(), []
        if path in ("/health", "/v1/health"):
            _allow(method, "GET")
            return 200, {"status": "ok", "simulator": "empathy-judge"}, []
        if path == "/_simulator/stats":
            _allow(method, "GET", "DELETE")
            if method == "DELETE":
                self.stats.clear()
                self.fault_counts.clear()
            return 200, self._stats(), []
        if path == "/_simulator/aliases":
            _allow(method, "GET")
            return 200, {"aliases": dict(self.aliases)}, []
        if path.startswith("/_simulator/aliases/"):
            name = path.removeprefix("/_simulator/aliases/")
            _allow(method, "GET", "PUT", "DELETE")
            if method == "PUT":
                body = await _read_json(receive)
                target = body.get("persona") if isinstance(body, dict) else None
                if not isinstance(target, str):
                    raise HttpError(400, 'expected a JSON body {"persona": "<persona>[@<tag>]"}')
                self.set_alias(name, target)
            elif method == "DELETE":
                self.aliases.pop(name, None)
                return 200, {"name": name, "persona": None}, []
            if name not in self.aliases:
                raise HttpError(404, f"no alias named {name!r}", code="alias_not_found")
            return 200, {"name": name, "persona": self.aliases[name]}, []
        raise HttpError(404, f"no route {method} {scope['path']}", code="not_found")

    async def _chat(
        self, body: Any, receive: Receive
    ) -> tuple[int, Any, list[tuple[bytes, bytes]]]:
        if not isinstance(body, dict):
            raise HttpError(400, "the request body must be a JSON object")
        model = body.get("model")
        if not isinstance(model, str) or not model.strip():
            raise HttpError(400, "'model' is required (a persona name or alias)")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise HttpError(400, "'messages' must be a non-empty list")
        if body.get("stream"):
            raise HttpError(400, "the simulator does not stream; send stream=false")
        persona = self.resolve(model)
        stats = self.stats[model]
        stats.calls += 1
        used_prompt = prompt_tokens(body)
        try:
            await self._faults(persona, model, body, receive)
            rng = self.call_rngs.setdefault(model, random.Random(f"{self.options.seed}:{model}"))
            reply = self.engine.answer(persona, body, rng)
        except HttpError as exc:
            stats.errors[str(exc.status)] += 1
            raise
        used_completion = estimate_tokens(reply.content)
        stats.ok += 1
        stats.prompt_tokens += used_prompt
        stats.completion_tokens += used_completion
        return (
            200,
            {
                "id": f"chatcmpl-sim-{uuid.uuid4().hex[:24]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": FINGERPRINT,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "logprobs": None,
                        "finish_reason": reply.finish_reason,
                    }
                ],
                "usage": {
                    "prompt_tokens": used_prompt,
                    "completion_tokens": used_completion,
                    "total_tokens": used_prompt + used_completion,
                },
            },
            [],
        )

    async def _faults(
        self, persona: Persona, model: str, body: dict[str, Any], receive: Receive
    ) -> None:
        """Raise the persona's HTTP failure for this call, or wait out its latency."""
        status = 0
        if persona.kind.startswith("fail"):
            prompt = json.dumps(body.get("messages"), sort_keys=True, ensure_ascii=False)
            key = (model, hashlib.sha256(prompt.encode()).hexdigest())
            self.fault_counts[key] += 1
            if self.fault_counts[key] <= persona.fail_count:
                status = int(persona.kind.removeprefix("fail"))
        elif persona.kind == "flaky":
            rng = self.call_rngs.setdefault(model, random.Random(f"{self.options.seed}:{model}"))
            if rng.random() < self.options.flaky_rate:
                status = rng.choice((429, 500, 503))
        if status == 429:
            raise self._rate_limited()
        if status == 401:
            raise HttpError(401, "simulated: incorrect API key provided", code="invalid_api_key")
        if status == 400:
            raise HttpError(400, "simulated: the request is invalid", code="invalid_request")
        base = self.options.slow_latency_ms if persona.kind == "slow" else self.options.latency_ms
        jitter = self.options.jitter_ms
        delay_ms = base + (self.jitter_rng.uniform(-jitter, jitter) if jitter > 0 else 0.0)
        if not await _sleep_unless_disconnected(max(0.0, delay_ms) / 1000, receive):
            raise HttpError(499, "client closed the connection while waiting", code="client_closed")
        if status == 500:
            raise HttpError(500, "simulated internal server error", "server_error", "server_error")
        if status == 503:
            raise HttpError(
                503,
                "simulated overload: the engine is currently overloaded",
                "server_error",
                "service_unavailable",
            )

    def _rate_limited(self) -> HttpError:
        ms = self.options.retry_after_ms
        return HttpError(
            429,
            "simulated rate limit reached; retry after the Retry-After delay",
            "rate_limit_error",
            "rate_limit_exceeded",
            [
                (b"retry-after", str(max(0, math.ceil(ms / 1000))).encode()),
                (b"retry-after-ms", str(ms).encode()),
            ],
        )

    def _models(self) -> dict[str, Any]:
        names = [*SIMPLE_PERSONAS, *(f"replay-{n}" for n in sorted(self.engine.replay))]
        names += sorted(self.aliases)
        return {
            "object": "list",
            "data": [
                {"id": n, "object": "model", "created": self.started, "owned_by": FINGERPRINT}
                for n in names
            ],
        }

    def _stats(self) -> dict[str, Any]:
        models = {name: s.as_dict() for name, s in sorted(self.stats.items())}
        return {"models": models, "total_calls": sum(s.calls for s in self.stats.values())}


def _allow(method: str, *allowed: str) -> None:
    if method not in allowed:
        raise HttpError(
            405,
            f"method {method} not allowed here; use {' or '.join(allowed)}",
            code="method_not_allowed",
            headers=[(b"allow", ", ".join(allowed).encode())],
        )


async def _read_json(receive: Receive) -> Any:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise HttpError(400, "client disconnected before sending the body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise HttpError(413, f"request body larger than {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    raw = b"".join(chunks)
    if not raw.strip():
        raise HttpError(400, "the request body is empty; expected JSON")
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HttpError(400, f"the request body is not valid JSON: {exc}") from None


async def _wait_for_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _sleep_unless_disconnected(seconds: float, receive: Receive) -> bool:
    """Sleep without blocking; give up early (False) if the client goes away, so long
    ``slow`` waits do not pin connections of callers that already timed out."""
    if seconds <= 0:
        return True
    if seconds < 1.0:
        await asyncio.sleep(seconds)
        return True
    watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
    try:
        done, _ = await asyncio.wait({watcher}, timeout=seconds)
    finally:
        watcher.cancel()
    return not done


async def _send_json(
    send: Send, status: int, payload: Any, headers: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                SIMULATOR_HEADER,
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def load_tables(options: SimulatorOptions) -> tuple[dict[str, ReplayTable], list[ReplayTable]]:
    """Read the ``--replay`` and ``--labels`` files (rubrics are loaded only when needed)."""
    if not options.replay and not options.labels:
        return {}, []
    from judge.rubrics import RubricRegistry

    rubrics = RubricRegistry.from_directory(options.rubrics_dir).all()
    replay = {name: load_table(name, Path(path), rubrics) for name, path in options.replay.items()}
    labels = [load_table(f"labels{i}", Path(p), rubrics) for i, p in enumerate(options.labels)]
    return replay, labels


def create_app(options: SimulatorOptions | None = None) -> SimulatorApp:
    """The ASGI app for ``options`` (files are read now; errors raise ``ReplayFileError``)."""
    options = options or SimulatorOptions()
    replay, labels = load_tables(options)
    return SimulatorApp(options, Engine(options, replay, labels))
