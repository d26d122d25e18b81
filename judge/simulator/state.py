"""A simulator server's state and the one path every wire format takes to an answer: resolve
the persona, inject its faults and latency, ask the engine, cut at the token limit, count."""

from __future__ import annotations

import asyncio
import random
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from judge.simulator.engine import Engine
from judge.simulator.formats.common import (
    JudgeCall,
    SimError,
    Usage,
    WireFormat,
    estimate_tokens,
)
from judge.simulator.options import SimulatorOptions
from judge.simulator.personas import (
    SIMPLE_PERSONAS,
    Persona,
    UnknownPersona,
    parse_persona,
    strip_provider,
)
from judge.simulator.prefix_cache import CacheHit, PrefixCache
from judge.simulator.replay import ReplayTable, load_table

FINGERPRINT = "empathy-judge-simulator"

#: Waits the ASGI ``receive`` channel for ``http.disconnect`` (the caller gave up).
Disconnected = Callable[[], Awaitable[None]]


class ModelStats:
    """Calls per requested model name: answered, failed per HTTP status, tokens, and how the
    answered calls asked for structured output (``structured``, see ``JudgeCall.schema_via``)."""

    __slots__ = (
        "cache_write_tokens",
        "cached_tokens",
        "calls",
        "completion_tokens",
        "errors",
        "ok",
        "prompt_tokens",
        "structured",
    )

    def __init__(self) -> None:
        self.calls = 0
        self.ok = 0
        self.errors: dict[str, int] = defaultdict(int)
        self.structured: dict[str, int] = defaultdict(int)
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.cache_write_tokens = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "ok": self.ok,
            "errors": dict(self.errors),
            "structured": dict(self.structured),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


class SimulatorState:
    """Per-process state: aliases, call statistics, fault counters, random generators."""

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
        self.prefix_cache = (
            PrefixCache(options.prompt_cache_ttl_s) if options.prompt_cache else None
        )

    # -- personas and aliases -------------------------------------------------------------
    def set_alias(self, name: str, target: str) -> Persona:
        if not name or "@" in name or "/" in name:
            raise SimError(
                "invalid_request", f"alias name {name!r} must not be empty or contain '@' or '/'"
            )
        try:
            persona = parse_persona(target, set(self.engine.replay))
        except UnknownPersona as exc:
            raise SimError("invalid_request", str(exc), code="unknown_persona") from None
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
            raise SimError("not_found", str(exc), code="model_not_found") from None

    # -- one call -------------------------------------------------------------------------
    async def answer(
        self, fmt: WireFormat, call: JudgeCall, disconnected: Disconnected
    ) -> dict[str, Any]:
        """The reply body in ``fmt``'s shape, or :class:`SimError` (counted per status)."""
        stats = self.stats[call.model]
        stats.calls += 1
        try:
            persona = self.resolve(call.model)
            cached = self._cached(fmt, call)
            await self._faults(persona, call, disconnected)
            reply = self.engine.answer(persona, call.messages, call.schema, self._rng(call.model))
            reply = reply.limited_to(call.max_tokens, estimate_tokens(reply.content))
            used = estimate_tokens(reply.content)
            if reply.finish_reason == "length" and call.max_tokens is not None:
                used = call.max_tokens
            usage = Usage(call.prompt_tokens, used, cached.read, cached.write)
            body = fmt.reply(call, reply, usage)
        except SimError as exc:
            stats.errors[str(fmt.error(exc)[0])] += 1
            raise
        stats.ok += 1
        stats.structured[call.schema_via] += 1
        stats.prompt_tokens += usage.prompt_tokens
        stats.completion_tokens += usage.completion_tokens
        stats.cached_tokens += usage.cached_tokens
        stats.cache_write_tokens += usage.cache_write_tokens
        return body

    def _cached(self, fmt: WireFormat, call: JudgeCall) -> CacheHit:
        """The prompt-cache outcome of a call that reached the model (the prefill happens on
        arrival, before the latency)."""
        if self.prefix_cache is None:
            return CacheHit()
        return self.prefix_cache.lookup(fmt.name, call)

    def _rng(self, model: str) -> random.Random:
        return self.call_rngs.setdefault(model, random.Random(f"{self.options.seed}:{model}"))

    async def _faults(self, persona: Persona, call: JudgeCall, disconnected: Disconnected) -> None:
        """Raise the persona's failure for this call, or wait out its latency."""
        fault: str | None = None
        if persona.fail_count:
            key = (call.model, call.prompt_key)
            self.fault_counts[key] += 1
            if self.fault_counts[key] <= persona.fail_count:
                fault = persona.kind
        elif persona.kind == "flaky" and self._rng(call.model).random() < self.options.flaky_rate:
            fault = self._rng(call.model).choice(("fail429", "fail500", "overloaded"))
        if fault == "fail429":
            raise SimError(
                "rate_limited",
                "simulated rate limit reached; retry after the indicated delay.",
                retry_after_ms=self.options.retry_after_ms,
            )
        if fault == "fail401":
            raise SimError("authentication", "simulated: incorrect API key provided")
        if fault == "fail400":
            raise SimError("invalid_request", "simulated: the request is invalid")
        base = self.options.slow_latency_ms if persona.kind == "slow" else self.options.latency_ms
        jitter = self.options.jitter_ms
        delay_ms = base + (self.jitter_rng.uniform(-jitter, jitter) if jitter > 0 else 0.0)
        if not await _sleep_unless_disconnected(max(0.0, delay_ms) / 1000, disconnected):
            raise SimError("client_closed", "client closed the connection while waiting")
        if fault == "fail500":
            raise SimError("server", "simulated internal server error", code="server_error")
        if fault == "overloaded":
            raise SimError("overloaded", "simulated overload: the model is overloaded.")

    # -- views ----------------------------------------------------------------------------
    def models(self) -> dict[str, Any]:
        names = [*SIMPLE_PERSONAS, *(f"replay-{n}" for n in sorted(self.engine.replay))]
        names += sorted(self.aliases)
        return {
            "object": "list",
            "data": [
                {"id": n, "object": "model", "created": self.started, "owned_by": FINGERPRINT}
                for n in names
            ],
        }

    def stats_view(self) -> dict[str, Any]:
        models = {name: s.as_dict() for name, s in sorted(self.stats.items())}
        return {"models": models, "total_calls": sum(s.calls for s in self.stats.values())}

    def reset_stats(self) -> None:
        self.stats.clear()
        self.fault_counts.clear()


async def _sleep_unless_disconnected(seconds: float, disconnected: Disconnected) -> bool:
    """Sleep without blocking; give up early (False) if the client goes away, so long
    ``slow`` waits do not pin connections of callers that already timed out."""
    if seconds <= 0:
        return True
    if seconds < 1.0:
        await asyncio.sleep(seconds)
        return True
    watcher = asyncio.ensure_future(disconnected())
    try:
        done, _ = await asyncio.wait({watcher}, timeout=seconds)
    finally:
        watcher.cancel()
    return not done


def load_tables(options: SimulatorOptions) -> tuple[dict[str, ReplayTable], list[ReplayTable]]:
    """Read the ``--replay`` and ``--labels`` files (rubrics are loaded only when needed)."""
    if not options.replay and not options.labels:
        return {}, []
    from judge.rubrics import RubricRegistry

    rubrics = RubricRegistry.from_directory(options.rubrics_dir).all()
    replay = {name: load_table(name, Path(path), rubrics) for name, path in options.replay.items()}
    labels = [load_table(f"labels{i}", Path(p), rubrics) for i, p in enumerate(options.labels)]
    return replay, labels


def build_state(options: SimulatorOptions | None = None) -> SimulatorState:
    """The state for ``options`` (files are read now; errors raise ``ReplayFileError``, an
    alias naming no persona :class:`SimError`)."""
    options = options or SimulatorOptions()
    replay, labels = load_tables(options)
    return SimulatorState(options, Engine(options, replay, labels))
