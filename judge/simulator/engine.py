"""Compose a simulated judge's reply: ratings per persona, serialised as the caller asked."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from judge.simulator.conversation import JudgedView, message_text, proscriptive_ids, read_view
from judge.simulator.heuristics import heuristic_rating
from judge.simulator.options import SimulatorOptions
from judge.simulator.personas import (
    UNSTABLE_RATE,
    Persona,
    first_listed_first,
    lenient_value,
    noisy_value,
    random_value,
    seeded,
    verbose_value,
)
from judge.simulator.replay import ReplayTable, coerce
from judge.simulator.schema import DimSpec, requested_dimensions

Ratings = dict[str, dict[str, Any]]
MALFORMED_KINDS = ("invalid_json", "truncated_json", "out_of_scale", "missing_dimension")


#: Tool the ``wrong-tool`` persona calls instead of answering.
WRONG_TOOL = "search_guidelines"


@dataclass(frozen=True)
class Reply:
    """A simulated judge's answer, before a wire format writes it.

    ``kind``: ``answer`` (``content`` is the reply text), ``refusal`` (the model declines;
    ``content`` explains), ``blocked`` (a safety filter stopped the input; ``content``
    explains) or ``tool_call`` (``content`` holds the JSON arguments of a call to
    :data:`WRONG_TOOL`). ``finish_reason`` is ``length`` when the reply was cut at the
    caller's token limit."""

    content: str
    finish_reason: Literal["stop", "length"] = "stop"
    kind: Literal["answer", "refusal", "blocked", "tool_call"] = "answer"

    def limited_to(self, max_tokens: int | None, tokens: int) -> Reply:
        """This reply cut to ``max_tokens`` (about four characters each) when its ``tokens``
        exceed the caller's limit, as a provider stops generating there."""
        if max_tokens is None or tokens <= max_tokens or self.kind != "answer":
            return self
        return replace(self, content=self.content[: max_tokens * 4], finish_reason="length")


def _dump(ratings: Ratings) -> str:
    return json.dumps({"ratings": ratings}, ensure_ascii=False)


class Engine:
    """Stateless apart from its loaded tables: the same request gives the same ratings."""

    def __init__(
        self,
        options: SimulatorOptions,
        replay: dict[str, ReplayTable],
        labels: list[ReplayTable],
    ) -> None:
        self.options = options
        self.replay = replay
        self.labels = labels

    def answer(
        self,
        persona: Persona,
        messages: list[dict[str, Any]],
        schema: dict[str, Any] | None,
        call_rng: random.Random,
    ) -> Reply:
        """``messages`` OpenAI-style; ``schema`` the JSON schema the reply must follow."""
        if persona.kind == "refusing":
            return Reply(
                f"[simulated {persona.label} judge] I can't help with rating this conversation.",
                kind="refusal",
            )
        if persona.kind == "blocked":
            return Reply(
                f"[simulated {persona.label} judge] The input was blocked by a safety filter.",
                kind="blocked",
            )
        dims = requested_dimensions(schema) if schema is not None else None
        view = read_view(messages)
        if dims is None:
            return Reply(self._plain_text(persona, view))
        if persona.kind == "wrong-tool":
            return Reply(json.dumps({"query": "how to rate empathy"}), kind="tool_call")
        if persona.kind == "replay":
            return self._replay(persona, view, dims)
        ratings = self.accurate(persona, view, dims, proscriptive_ids(messages))
        if persona.kind == "noisy":
            for spec in dims:
                rng = seeded(self.options.seed, "noisy", persona.tag, view.key, spec.id)
                entry = ratings[spec.id]
                entry["rating"] = noisy_value(spec, entry["rating"], rng, self.options.noise_rate)
        elif persona.kind == "lenient":
            for spec in dims:
                ratings[spec.id]["rating"] = lenient_value(spec, ratings[spec.id]["rating"])
        elif persona.kind == "random":
            rng = seeded(self.options.seed, "random", persona.tag, view.key)
            for spec in dims:
                ratings[spec.id] = {
                    "rationale": f"[simulated {persona.label} judge] a random pick.",
                    "rating": random_value(spec, rng),
                }
        elif persona.kind == "verbose":
            words = sum(len(t.split()) for t in view.judged_texts)
            for spec in dims:
                ratings[spec.id]["rating"] = verbose_value(spec, ratings[spec.id]["rating"], words)
        elif persona.kind == "order-biased":
            first = first_listed_member(messages)
            for spec in dims:
                entry = ratings[spec.id]
                entry["rating"] = first_listed_first(spec, entry["rating"], first)
        elif persona.kind == "unstable":
            for spec in dims:  # the per-model call stream: every call draws anew
                if call_rng.random() < UNSTABLE_RATE:
                    ratings[spec.id]["rating"] = random_value(spec, call_rng)
        elif persona.kind == "malformed" and call_rng.random() < self.options.malformed_rate:
            return malformed(ratings, dims, call_rng)
        return Reply(_dump(ratings))

    def accurate(
        self,
        persona: Persona,
        view: JudgedView,
        dims: list[DimSpec],
        proscriptive: frozenset[str] = frozenset(),
    ) -> Ratings:
        """Reference labels where a ``--labels`` file has them, else the text heuristics."""
        row: dict[str, str] = {}
        source = ""
        for table in self.labels:
            found = table.row(view.key)
            if found is not None:
                row, source = found, table.path.name
                break
        ratings: Ratings = {}
        for spec in dims:
            raw = row.get(spec.id)
            value = coerce(raw, spec, clamp=True) if raw is not None else None
            if value is not None:
                rationale = f"[simulated {persona.label} judge] reference label from {source}."
            else:
                value, rationale = heuristic_rating(
                    spec, view, persona.label, spec.id in proscriptive
                )
            ratings[spec.id] = {"rationale": rationale, "rating": value}
        return ratings

    def _replay(self, persona: Persona, view: JudgedView, dims: list[DimSpec]) -> Reply:
        table = self.replay[persona.replay_name]
        row = table.row(view.key)
        if row is None:
            return Reply(
                f"[simulated {persona.label} judge] I'm sorry, but I can't rate this "
                f"conversation: it is not among the recorded annotations in {table.path.name}."
            )
        ratings: Ratings = {}
        for spec in dims:
            raw = row.get(spec.id)
            value = coerce(raw, spec, clamp=False) if raw is not None else None
            if value is not None:
                ratings[spec.id] = {
                    "rationale": f"[simulated {persona.label} judge] rating recorded in "
                    f"{table.path.name}.",
                    "rating": value,
                }
        return Reply(_dump(ratings))

    def _plain_text(self, persona: Persona, view: JudgedView) -> str:
        words = sum(len(t.split()) for t in view.judged_texts)
        return (
            f"[simulated {persona.label} judge] This is the empathy-judge LLM simulator, not a "
            f"real model. I read {len(view.turns)} turn(s) and judged {len(view.judged)} "
            f"({words} words). Ask for a JSON schema with properties.ratings (response_format, "
            f"a forced tool, output_format or responseJsonSchema) to get structured ratings."
        )


_MEMBERS = re.compile(r"Members \(not the therapist\): ([^\n]*?)\.?$", re.MULTILINE)


def first_listed_member(messages: list[dict[str, Any]]) -> str | None:
    """The first participant the prompt lists (the last ``Members ...`` line: examples come
    before the judged item)."""
    found: list[str] = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            found += _MEMBERS.findall(message_text(message))
    if not found:
        return None
    first = found[-1].split(",")[0].strip()
    return first or None


def _off_scale(spec: DimSpec, rng: random.Random) -> Any:
    if spec.kind == "ordinal":
        return spec.levels[-1] + rng.randint(1, 3)
    if spec.kind == "binary":
        return "yes"
    if spec.kind == "nominal":
        return "unlisted_label"
    if spec.kind == "ranked":
        return ["unlisted_label"]
    return ""


def malformed(ratings: Ratings, dims: list[DimSpec], rng: random.Random) -> Reply:
    """One of four realistic failures: prose around broken JSON, a reply cut short, a rating
    outside its scale, or a dimension left out."""
    kind = rng.choice(MALFORMED_KINDS) if dims else "invalid_json"
    if kind == "invalid_json":
        text = _dump(ratings).replace('"ratings"', "ratings", 1)
        return Reply(f"Here is my judgment of the reply:\n{text}")
    if kind == "truncated_json":
        text = _dump(ratings)
        return Reply(text[: max(1, int(len(text) * rng.uniform(0.3, 0.9)))], "length")
    spec = rng.choice(dims)
    broken = {k: dict(v) for k, v in ratings.items()}
    if kind == "out_of_scale":
        broken[spec.id]["rating"] = _off_scale(spec, rng)
    else:
        del broken[spec.id]
    return Reply(_dump(broken))
