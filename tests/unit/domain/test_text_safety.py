"""Strings that are stored: NUL characters, lone surrogates and controls; JSON values within
the depth, size and number limits, each problem naming its place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge.domain.text_safety import json_problem, storable_text, text_problem


def test_text_problems() -> None:
    assert text_problem("plain, with\nlines\tand tabs") is None
    assert text_problem("a\x00b") == "contains a NUL character (U+0000)"
    assert "lone UTF-16 surrogate (U+D83D) at position 2" in (text_problem("ab\ud83d") or "")
    assert text_problem("a\x07b") is None
    assert text_problem("a\x07b", controls=True) == "contains a control character (U+0007)"
    assert text_problem("emoji 😀 and 中文") is None


def test_judge_text_is_made_storable_not_refused() -> None:
    assert storable_text("a\x00b\ud800c") == "ab\ufffdc"
    assert storable_text("x" * 50, 10) == "x" * 10


@pytest.mark.parametrize(
    ("value", "where", "message"),
    [
        ({"a": {"b": [1, {"c": "x\x00"}]}}, "a.b[1].c", "NUL"),
        ({"k\x00": 1}, "<key>", "NUL"),
        ({"a": float("nan")}, "a", "finite"),
        ({"a": float("inf")}, "a", "finite"),
        ({"a": 2**64}, "a", "64 bits"),
        ({"a": json.loads("[" * 17 + "]" * 17)}, "a" + "[0]" * 15, "16 levels"),
        ({"blob": "x" * 70_000}, "", "65536"),
        ({"s": "\udfff"}, "s", "surrogate"),
        ({"k" * 201: 1}, "<key>", "longer than 200"),
    ],
)
def test_json_problems_name_the_place(value: Any, where: str, message: str) -> None:
    found = json_problem(value)
    assert found is not None
    assert found[0] == where
    assert message in found[1]


def test_json_within_limits_is_fine() -> None:
    value = {"a": json.loads("[" * 15 + "]" * 15), "n": -(2**63) + 1, "f": 1.5, "t": True}
    assert json_problem(value) is None
    deep: list[Any] = []
    for _ in range(100_000):  # deeper than any recursive walk could go
        deep = [deep]
    assert json_problem({"deep": deep}) == (
        "deep" + "[0]" * 15,
        "is nested more than 16 levels deep",
    )
