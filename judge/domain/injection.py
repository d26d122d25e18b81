"""Spot conversation text that tries to instruct the judge (prompt injection).

Detection only flags the result (``input_contains_instructions``); the prompt already treats
the conversation as data. Patterns aim at instructions addressed to a rater or model, not at
ordinary imperatives between people ("ignore him", "give me a minute").
"""

from __future__ import annotations

import re

from judge.domain.item import Item

_PATTERNS = [
    r"\bignore (?:all |the |any |your |previous |prior |above |earlier )*"
    r"(?:instructions?|rubric|rules|prompt|guidelines|criteria)\b",
    r"\bdisregard (?:all |the |any |your |previous |prior |above )*"
    r"(?:instructions?|rubric|rules|prompt|guidelines)\b",
    r"\b(?:give|rate|score|assign)\b[^.\n]{0,40}\b(?:every|all|each)\b[^.\n]{0,20}"
    r"\b(?:dimensions?|criteria|categories)\b",
    r"\b(?:system prompt|you are now|as an ai language model|new instructions?)\b",
    r"\b(?:rate|score) (?:this|me|it) (?:a |an )?\d+\b",
    r"</?\s*(?:conversation|system|instructions?)\s*>",
]
_DETECTOR = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


def contains_instructions(item: Item) -> bool:
    return any(_DETECTOR.search(turn.text) for turn in item.turns)
