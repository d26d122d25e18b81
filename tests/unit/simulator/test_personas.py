"""The simulator's reading of schemas, personas and text, in process (no HTTP)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from judge.domain.item import Item, parse_item
from judge.domain.judgment_schema import judgment_schema, parse_judgment, response_format
from judge.domain.render import render_conversation
from judge.domain.rubric import Rubric
from judge.llm.prompts import build_messages
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, build_state
from judge.simulator.personas import UnknownPersona, parse_persona
from judge.simulator.replay import split_full_conversation
from judge.simulator.schema import requested_dimensions, requested_schema

REGISTRY = RubricRegistry.from_directory()
STATE = build_state(SimulatorOptions())


def body_for(rubric: Rubric, item: Item) -> tuple[dict[str, Any], tuple[str, ...]]:
    participants = tuple(p.id for p in item.clients)
    dims = list(rubric.dimensions)
    return (
        {
            "messages": build_messages(rubric, item, dims),
            "response_format": response_format(judgment_schema(rubric, dims, participants)),
        },
        participants,
    )


def answer(persona: str, body: dict[str, Any], seed: int = 0) -> str:
    schema = requested_schema(body.get("response_format"))
    reply = STATE.engine.answer(
        parse_persona(persona), body["messages"], schema, random.Random(seed)
    )
    return reply.content


@pytest.mark.parametrize("rubric_id", REGISTRY.ids())
@pytest.mark.parametrize("persona", ["accurate", "noisy@1", "lenient", "random@2"])
def test_every_bundled_rubric_gets_complete_on_scale_replies(rubric_id: str, persona: str) -> None:
    rubric = REGISTRY.get(rubric_id)
    for example in rubric.expert_examples:
        item = parse_item(example.input, field_prefix="input")
        body, participants = body_for(rubric, item)
        content = answer(persona, body)
        parsed = parse_judgment(content, list(rubric.dimensions), participants)
        assert parsed.complete, (example.id, parsed.problems)
        assert all(r.rationale.startswith("[simulated ") for r in parsed.ratings.values())
        assert content == answer(persona, body, seed=99)  # per-call randomness plays no part


def test_schema_scales_are_read_from_the_response_format() -> None:
    rubric = REGISTRY.get("rescue-couple")
    schema = judgment_schema(rubric, list(rubric.dimensions), ("maya", "sam"))
    specs = {s.id: s for s in requested_dimensions(schema) or []}
    kinds = {spec.kind for spec in specs.values()}
    assert kinds == {"ordinal", "binary", "nominal", "ranked", "free_text"}
    ranked = next(s for s in specs.values() if s.kind == "ranked" and "maya" in s.labels)
    assert ranked.k == 3
    assert "Couple" in ranked.labels


def test_persona_grammar() -> None:
    assert parse_persona("openai/noisy@2").tag == "2"
    assert parse_persona("fail429-3").fail_count == 3
    assert parse_persona("replay-gemini", {"gemini"}).replay_name == "gemini"
    with pytest.raises(UnknownPersona):
        parse_persona("replay-nothing", set())
    with pytest.raises(UnknownPersona):
        parse_persona("gpt-4o")


def test_proscriptive_dimensions_read_the_opposite_way() -> None:
    rubric = REGISTRY.get("lend-an-ear")
    caring = parse_item(
        {
            "seeker_post": "I got passed over for the promotion I worked so hard for.",
            "response": "I'm so sorry, that sounds really discouraging after all that effort. "
            "What hurt most about how it was handled?",
        }
    )
    pushy = parse_item(
        {
            "seeker_post": "I got passed over for the promotion I worked so hard for.",
            "response": "Don't be discouraged, at least you still have a job. You should ask "
            "your manager what to do, and you need to try harder next time.",
        }
    )
    ratings = {}
    for name, item in (("caring", caring), ("pushy", pushy)):
        body, participants = body_for(rubric, item)
        parsed = parse_judgment(answer("accurate", body), list(rubric.dimensions), participants)
        ratings[name] = {k: v.rating for k, v in parsed.ratings.items()}
    for proscriptive in ("advice_giving", "dismissing_emotions"):
        assert ratings["pushy"][proscriptive] > ratings["caring"][proscriptive]
    for prescriptive in ("validating_emotions", "encouraging_elaboration"):
        assert ratings["caring"][prescriptive] > ratings["pushy"][prescriptive]


def test_replay_transcripts_drop_empty_turns_and_join_continuations() -> None:
    text = "Seeker: one\nSupporter: \n Seeker: two_comma_ three\nmore of two\nSupporter: four\n"
    assert split_full_conversation(text) == [
        ("seeker", "one"),
        ("seeker", "two_comma_ three\nmore of two"),
        ("supporter", "four"),
    ]


def test_a_repair_request_still_finds_the_conversation() -> None:
    rubric = REGISTRY.get("epitome")
    item = parse_item({"seeker_post": "I feel alone.", "response": "I'm so sorry. Why alone?"})
    body, _ = body_for(rubric, item)
    first = answer("accurate", body)
    body["messages"] += [
        {"role": "assistant", "content": "not json"},
        {"role": "user", "content": "Your reply could not be used. Answer again."},
    ]
    assert answer("accurate", body) == first
    assert render_conversation(item, rubric.unit) in body["messages"][1]["content"]
    assert json.loads(first)["ratings"]
