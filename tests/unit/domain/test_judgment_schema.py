"""Judges' replies: rationales capped and storable; replies that break JSON parsers are
problems, never scores."""

from __future__ import annotations

import json

import pytest

from judge.domain.judgment_schema import MAX_RATIONALE_CHARS, parse_judgment
from judge.rubrics import RubricRegistry

EPITOME = RubricRegistry.from_directory().get("epitome")


def test_rationales_are_capped_and_storable() -> None:
    dims = list(EPITOME.dimensions)
    reply = {d.id: {"rationale": "why\x00 " * 1_000 + "\ud800", "rating": 1} for d in dims}
    outcome = parse_judgment(json.dumps({"ratings": reply}), dims, ())
    for rated in outcome.ratings.values():
        assert len(rated.rationale) == MAX_RATIONALE_CHARS
        assert rated.rationale.endswith("…")
        assert "\x00" not in rated.rationale


@pytest.mark.parametrize(
    "content", ["[" * 50_000 + "]" * 50_000, '{"ratings": ' + "1" * 6_000 + "}"]
)
def test_replies_that_break_json_parsers_are_problems(content: str) -> None:
    dims = list(EPITOME.dimensions)
    outcome = parse_judgment(content, dims, ())
    assert outcome.ratings == {}
    assert set(outcome.problems.values()) == {"reply is not usable JSON"}
