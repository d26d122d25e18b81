"""The probe personas in process (no HTTP), the probe variants and the probe reports."""

from __future__ import annotations

import json
import random
from typing import Any

from judge.calibration import (
    Variant,
    order_report,
    self_preference_report,
    verbosity_report,
)
from judge.domain.item import parse_item
from judge.domain.judgment_schema import judgment_schema, parse_judgment, response_format
from judge.domain.probe_variants import filler, padded, participant_orders
from judge.llm.prompts import build_messages
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, build_state
from judge.simulator.personas import parse_persona
from judge.simulator.schema import requested_schema

REGISTRY = RubricRegistry.from_directory()
EPITOME = REGISTRY.get("epitome")
COUPLE = REGISTRY.get("rescue-couple")
STATE = build_state(SimulatorOptions())
ITEM = parse_item(
    {
        "seeker_post": "I failed my driving test again and I feel stupid.",
        "response": "That sounds so frustrating. What happened during the test?",
    }
)
COUPLE_ITEM = parse_item(
    {
        "participants": [
            {"id": "dana", "role": "client"},
            {"id": "therapist", "role": "therapist"},
            {"id": "lee", "role": "client"},
        ],
        "turns": [
            {"speaker": "dana", "text": "Lee never listens to me."},
            {"speaker": "lee", "text": "Because it always turns into a fight."},
            {"speaker": "therapist", "text": "It sounds like you both feel unheard."},
        ],
    }
)


def ratings(persona: str, rubric: Any, raw: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    item = parse_item(raw)
    participants = tuple(p.id for p in item.clients)
    dims = list(rubric.dimensions)
    schema = response_format(judgment_schema(rubric, dims, participants))
    reply = STATE.engine.answer(
        parse_persona(persona),
        build_messages(rubric, item, dims),
        requested_schema(schema),
        random.Random(seed),
    )
    parsed = parse_judgment(reply.content, dims, participants)
    assert parsed.complete, parsed.problems
    return {k: v.rating for k, v in parsed.ratings.items()}


def test_filler_is_whole_sentences_of_at_least_the_words_asked() -> None:
    text = filler(60)
    assert len(text.split()) >= 60
    assert text.endswith(".")
    assert "?" not in text


def test_verbose_rises_with_padding_and_accurate_does_not() -> None:
    raw = ITEM.model_dump(mode="json", exclude_none=True)
    longer = padded(ITEM, "response", filler(60))
    assert ratings("accurate", EPITOME, raw) == ratings("accurate", EPITOME, longer)
    before, after = ratings("verbose", EPITOME, raw), ratings("verbose", EPITOME, longer)
    assert all(after[d] >= before[d] for d in before)
    assert any(after[d] > before[d] for d in before)


def test_order_biased_ranks_the_first_listed_member_first() -> None:
    (swapped,) = participant_orders(COUPLE_ITEM, 3)
    assert [p["id"] for p in swapped["participants"]] == ["lee", "therapist", "dana"]
    raw = COUPLE_ITEM.model_dump(mode="json", exclude_none=True)
    assert ratings("order-biased", COUPLE, raw)["support_target"][0] == "dana"
    assert ratings("order-biased", COUPLE, swapped)["support_target"][0] == "lee"
    assert ratings("accurate", COUPLE, raw) == ratings("accurate", COUPLE, swapped)


def test_unstable_varies_between_calls_and_accurate_does_not() -> None:
    raw = ITEM.model_dump(mode="json", exclude_none=True)
    seen = {json.dumps(ratings("unstable", EPITOME, raw, seed=s)) for s in range(10)}
    assert len(seen) > 1
    steady = {json.dumps(ratings("accurate", EPITOME, raw, seed=s)) for s in range(10)}
    assert len(steady) == 1


def result(score: Any, judges: dict[str, Any], dim: str = "explorations") -> dict[str, Any]:
    return {
        "dimensions": {
            dim: {
                "score": score,
                "judges": [{"model": m, "status": "ok", "rating": r} for m, r in judges.items()],
            }
        }
    }


def test_verbosity_report_flags_a_shift_whose_ci_excludes_zero() -> None:
    variants = []
    for n in range(10):
        variants.append(Variant(n, "original", result(0, {"a": 0, "b": 1}), {}))
        variants.append(Variant(n, "padded", result(1, {"a": 1, "b": 1}), {}))
    dims, sensitive = verbosity_report(EPITOME, variants, ["a", "b"], 0.25)
    assert sensitive == ["explorations"]
    shift = dims["explorations"]["shift"]
    assert (shift["n"], shift["mean"], shift["ci95"]) == (10, 1.0, [1.0, 1.0])
    assert dims["explorations"]["judges"]["b"]["mean"] == 0.0
    quiet, none = verbosity_report(EPITOME, variants, ["a", "b"], 2.0)
    assert none == []
    assert quiet["explorations"]["length_sensitive"] is False


def test_verbosity_report_does_not_flag_a_shift_within_noise() -> None:
    variants = []
    for n in range(10):
        variants.append(Variant(n, "original", result(1, {}), {}))
        variants.append(Variant(n, "padded", result(1 + (1 if n % 2 else -1), {}), {}))
    _, sensitive = verbosity_report(EPITOME, variants, [], 0.25)
    assert sensitive == []


def test_order_report_counts_changes_of_the_top_target() -> None:
    def res(top: list[str]) -> dict[str, Any]:
        return result(top, {"j": top}, "support_target")

    variants = [
        Variant(0, "original", res(["dana", "lee"]), {}),
        Variant(0, "order-1", res(["lee", "dana"]), {}),
        Variant(1, "original", res(["both"]), {}),
        Variant(1, "order-1", res(["both", "lee"]), {}),
    ]
    dims = order_report(COUPLE, variants, ["j"])
    assert dims["support_target"]["change_rate"]["mean"] == 0.5
    assert dims["support_target"]["participant_labels"] is True


def test_self_preference_report_splits_own_family_from_others() -> None:
    variants = [
        Variant(0, "original", result(1, {"gpt": 2}), {"generator_model": "gpt-4o"}),
        Variant(1, "original", result(1, {"gpt": 1}), {"generator_model": "claude-3-7"}),
        Variant(2, "original", result(1, {"gpt": 0}), {"generator_model": "gemini-2.5"}),
    ]
    report = self_preference_report(EPITOME, variants, ["gpt"], {"gpt": "openai"})
    dim = report["judges"]["gpt"]["dimensions"]["explorations"]
    assert dim["own_family"] == {"n": 1, "mean": 2.0}
    assert dim["others"] == {"n": 2, "mean": 0.5}
    assert dim["difference"] == 1.5
