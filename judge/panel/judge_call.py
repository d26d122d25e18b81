"""One judge on one item: prompt, call, validate, one bounded repair, else abstain.

Abstention reasons: the call's failure (``refused``, ``timed_out``, ``rate_limit``,
``provider_error``, ``auth_error``, ``bad_request``), or, for a reply that arrived but does
not give a valid rating for a dimension even after the repair, ``truncated`` (the reply that
failed it stopped at the token limit) or ``unparseable`` (anything else: invalid JSON, an
off-scale value, a missing dimension, a tool call instead of the judgment)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from opentelemetry import trace
from pydantic import SecretStr

from judge.domain.item import Item
from judge.domain.judgment_schema import (
    ParsedRating,
    judgment_schema,
    parse_judgment,
    response_format,
)
from judge.domain.providers import ClientChoice
from judge.domain.result import AbstentionReason, CallRecord
from judge.domain.rubric import Dimension, Rubric
from judge.domain.text_safety import storable_text
from judge.llm.client import ChatClient, ChatRequest, ChatResult, as_secret
from judge.llm.prompts import build_messages, prompt_hash, repair_message
from judge.tracing import tracer

_RAW_REPLY_LIMIT = 20_000
_MODEL_NAME_LIMIT = 200  # the judgments.resolved_model column


def _resolved(result: ChatResult) -> str | None:
    """The provider's model name, as it can be stored (a provider may send anything)."""
    if result.resolved_model is None:
        return None
    return storable_text(result.resolved_model, _MODEL_NAME_LIMIT) or None


@dataclass(frozen=True)
class JudgeTarget:
    """Where and how to call one judge (resolved from a panel's JudgeSpec)."""

    model: str
    params: dict[str, Any]
    api_base: str | None
    api_key: SecretStr | None = field(repr=False)
    timeout_s: float
    samples: int = 1  # independent samples per item (self-consistency)
    sample_params: dict[str, Any] = field(default_factory=dict)  # over params when samples > 1
    sample_seeds: bool = True  # each sample its own seed (not for providers without one)
    family: str | None = None  # model family (self-preference)
    client: ClientChoice = "auto"  # the client path (judge.llm.routing)
    simulated: bool = False  # a simulator persona (the panel configured it so)

    def endpoint(self) -> str | None:
        """Where the judge answers, as the panel signature names it: ``simulator`` for a
        persona, else the configured ``api_base`` without credentials or query (None: the
        provider's own endpoint)."""
        if self.simulated:
            return "simulator"
        if not self.api_base:
            return None
        url = urlsplit(self.api_base)
        host = url.hostname or ""
        netloc = f"{host}:{url.port}" if url.port else host
        return urlunsplit((url.scheme, netloc, url.path, "", ""))

    def __post_init__(self) -> None:
        object.__setattr__(self, "api_key", as_secret(self.api_key))

    def call_params(self, sample: int) -> dict[str, Any]:
        """Parameters of one call: ``params``, or for k > 1 samples also ``sample_params`` and
        (``sample_seeds``) a seed per sample, so samples are independent draws."""
        if self.samples <= 1:
            return self.params
        seed = {"seed": sample} if self.sample_seeds else {}
        return {**self.params, **self.sample_params, **seed}


@dataclass(frozen=True)
class Abstention:
    reason: AbstentionReason
    detail: str


@dataclass(frozen=True)
class JudgeOutcome:
    model: str
    resolved_model: str | None
    ratings: dict[str, ParsedRating]
    abstentions: dict[str, Abstention]
    calls: list[CallRecord]


def _record(
    result: ChatResult, target: JudgeTarget, params: dict[str, Any], phash: str, purpose: str
) -> CallRecord:
    outcome = "ok" if result.ok else str(result.failure)
    return CallRecord(
        requested_model=target.model,
        resolved_model=_resolved(result),
        params=params,
        prompt_hash=phash,
        purpose="repair" if purpose == "repair" else "judge",
        prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens,
        cost_usd=result.cost_usd,
        latency_ms=round(result.latency_ms, 2),
        attempts=result.attempts,
        cached=result.cached,
        simulated=result.simulated,
        outcome=outcome,
        cached_prompt_tokens=result.cached_prompt_tokens,
        cache_write_tokens=result.cache_write_tokens,
        raw_reply=(
            storable_text(result.content, _RAW_REPLY_LIMIT) if result.content is not None else None
        ),
    )


async def _traced_call(
    client: ChatClient, request: ChatRequest, rubric_id: str, purpose: str
) -> ChatResult:
    """One logical LLM call as a client span, with the GenAI semantic-convention attributes
    (model, token usage) that LLM-observability tools read, plus outcome and cost."""
    with tracer().start_as_current_span(
        f"chat {request.model}", kind=trace.SpanKind.CLIENT
    ) as span:
        span.set_attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": request.model,
                "judge.rubric": rubric_id,
                "judge.purpose": purpose,
            }
        )
        result = await client.complete(request)
        outcome = "ok" if result.ok else str(result.failure)
        span.set_attributes(
            {
                "gen_ai.response.model": result.resolved_model or "",
                "gen_ai.usage.input_tokens": result.prompt_tokens,
                "gen_ai.usage.output_tokens": result.completion_tokens,
                "gen_ai.usage.cache_read_input_tokens": result.cached_prompt_tokens,
                "judge.outcome": outcome,
                "judge.cost_usd": result.cost_usd,
                "judge.cached": result.cached,
                "judge.attempts": result.attempts,
            }
        )
        if not result.ok:
            span.set_status(trace.Status(trace.StatusCode.ERROR, outcome))
        return result


async def run_judge(
    client: ChatClient,
    rubric: Rubric,
    item: Item,
    target: JudgeTarget,
    dimensions: list[Dimension],
    *,
    use_cache: bool = True,
    sample: int = 0,
) -> JudgeOutcome:
    """One judge's ratings of ``dimensions``; ``sample`` numbers independent samples."""
    params = target.call_params(sample)
    participants = tuple(p.id for p in item.clients)
    schema = response_format(judgment_schema(rubric, dimensions, participants))
    messages = build_messages(rubric, item, dimensions)
    request = ChatRequest(
        model=target.model,
        messages=messages,
        response_format=schema,
        params=params,
        api_base=target.api_base,
        api_key=target.api_key,
        timeout_s=target.timeout_s,
        use_cache=use_cache,
        sample=sample,
        client=target.client,
    )
    phash = prompt_hash(messages, schema, params)
    result = await _traced_call(client, request, rubric.id, "judge")
    calls = [_record(result, target, params, phash, "judge")]
    if not result.ok:
        reason: AbstentionReason = result.failure or "provider_error"
        detail = result.error or reason
        return JudgeOutcome(
            target.model, None, {}, {d.id: Abstention(reason, detail) for d in dimensions}, calls
        )
    problems, ratings = _problems(result, dimensions, participants)
    cut = set(problems) if result.truncated else set()
    resolved = _resolved(result)
    if problems:
        repair_messages = [
            *messages,
            # an empty assistant turn is refused by some providers (Anthropic)
            {"role": "assistant", "content": result.content or "(no answer)"},
            repair_message(problems),
        ]
        repair = await _traced_call(
            client,
            ChatRequest(
                model=target.model,
                messages=repair_messages,
                response_format=schema,
                params=params,
                api_base=target.api_base,
                api_key=target.api_key,
                timeout_s=target.timeout_s,
                use_cache=use_cache,
                sample=sample,
                client=target.client,
            ),
            rubric.id,
            "repair",
        )
        calls.append(
            _record(repair, target, params, prompt_hash(repair_messages, schema, params), "repair")
        )
        if repair.ok:
            resolved = _resolved(repair) or resolved
            second, second_ratings = _problems(repair, dimensions, participants)
            for dim_id in list(problems):
                if dim_id in second_ratings:
                    ratings[dim_id] = second_ratings[dim_id]
                    del problems[dim_id]
                    cut.discard(dim_id)
                else:
                    problems[dim_id] = f"{problems[dim_id]}; after repair: {second[dim_id]}"
                    if repair.truncated:
                        cut.add(dim_id)
                    else:
                        cut.discard(dim_id)
    abstentions = {
        dim_id: Abstention("truncated" if dim_id in cut else "unparseable", why)
        for dim_id, why in problems.items()
    }
    return JudgeOutcome(target.model, resolved, ratings, abstentions, calls)


def _problems(
    result: ChatResult, dimensions: list[Dimension], participants: tuple[str, ...]
) -> tuple[dict[str, str], dict[str, ParsedRating]]:
    """Per-dimension problems and valid ratings of a reply that arrived."""
    parsed = parse_judgment(result.content, dimensions, participants)
    problems = dict(parsed.problems)
    if result.truncated:
        problems = {d: f"reply cut at the token limit ({why})" for d, why in problems.items()}
    elif result.tool_calls and not (result.content or "").strip():
        called = ", ".join(result.tool_calls)
        problems = dict.fromkeys(problems, f"reply called tool {called} instead of answering")
    return problems, dict(parsed.ratings)
