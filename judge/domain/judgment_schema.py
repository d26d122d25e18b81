"""The JSON schema a judge's reply must follow, built from a rubric, and its validation.

Reply shape (sent to providers as ``response_format`` json_schema, name ``judgment``)::

    {"ratings": {"<dimension id>": {"rationale": "<why>", "rating": <value>}, ...}}

The rationale comes first so that a model reasons before it commits to a number. Values:
ordinal -> integer from the level list; binary -> boolean; nominal -> one label string;
ranked -> list of up to k labels, best first; free_text -> string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from judge.domain.rubric import Dimension, RankedScale, Rubric
from judge.domain.text_safety import storable_text

SCHEMA_NAME = "judgment"
#: Rationales are returned to callers and stored: a judge that writes pages is cut here.
MAX_RATIONALE_CHARS = 2_000


def rating_schema(dimension: Dimension, participants: tuple[str, ...]) -> dict[str, Any]:
    scale = dimension.scale
    if scale.type == "ordinal":
        return {"type": "integer", "enum": list(range(scale.min, scale.max + 1))}
    if scale.type == "binary":
        return {"type": "boolean"}
    if scale.type == "nominal":
        return {"type": "string", "enum": list(scale.label_ids)}
    if scale.type == "ranked":
        return {
            "type": "array",
            "items": {"type": "string", "enum": list(scale.label_ids(participants))},
            "minItems": 1,
            "maxItems": scale.k,
        }
    return {"type": "string", "description": f"at most {scale.max_chars} characters"}


def judgment_schema(
    rubric: Rubric, dimensions: list[Dimension], participants: tuple[str, ...]
) -> dict[str, Any]:
    """JSON schema for one reply covering ``dimensions`` (all of a rubric, or just one)."""
    props = {
        d.id: {
            "type": "object",
            "additionalProperties": False,
            "required": ["rationale", "rating"],
            "properties": {
                "rationale": {"type": "string"},
                "rating": rating_schema(d, participants),
            },
        }
        for d in dimensions
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["ratings"],
        "properties": {
            "ratings": {
                "type": "object",
                "additionalProperties": False,
                "required": [d.id for d in dimensions],
                "properties": props,
            }
        },
    }


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": SCHEMA_NAME, "strict": True, "schema": schema},
    }


@dataclass(frozen=True)
class ParsedRating:
    rating: Any
    rationale: str


@dataclass(frozen=True)
class ParseOutcome:
    """Per dimension: a valid rating, or the reason there is none."""

    ratings: dict[str, ParsedRating]
    problems: dict[str, str]

    @property
    def complete(self) -> bool:
        return not self.problems


def clip_rationale(rationale: object) -> str:
    """A rationale as returned: a string of at most :data:`MAX_RATIONALE_CHARS` characters."""
    if not isinstance(rationale, str):
        return ""
    text = storable_text(rationale)
    return text if len(text) <= MAX_RATIONALE_CHARS else text[: MAX_RATIONALE_CHARS - 1] + "…"


def _strip_fences(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped.strip()


def parse_judgment(
    content: str | None, dimensions: list[Dimension], participants: tuple[str, ...]
) -> ParseOutcome:
    """Validate a reply against the rubric's scales. Nothing is coerced: a value that does not
    fit its scale is a problem, never a score."""
    every = {d.id: "" for d in dimensions}
    if not content or not content.strip():
        return ParseOutcome({}, dict.fromkeys(every, "empty reply"))
    try:
        data = json.loads(_strip_fences(content))
    except json.JSONDecodeError as exc:
        return ParseOutcome({}, dict.fromkeys(every, f"reply is not valid JSON ({exc.msg})"))
    except (ValueError, RecursionError):  # a 5,000-digit number, nesting beyond the stack
        return ParseOutcome({}, dict.fromkeys(every, "reply is not usable JSON"))
    ratings_obj = data.get("ratings") if isinstance(data, dict) else None
    if not isinstance(ratings_obj, dict):
        return ParseOutcome({}, dict.fromkeys(every, "reply has no 'ratings' object"))
    ratings: dict[str, ParsedRating] = {}
    problems: dict[str, str] = {}
    for dim in dimensions:
        entry = ratings_obj.get(dim.id)
        if not isinstance(entry, dict) or "rating" not in entry:
            problems[dim.id] = "dimension missing from the reply"
            continue
        value = entry["rating"]
        scale = dim.scale
        if isinstance(scale, RankedScale):
            error = scale.check(value, participants)
        else:
            error = scale.check(value)
        if error:
            problems[dim.id] = f"rating {storable_text(error, 300)}"
            continue
        if isinstance(value, str):  # a free-text rating: stored and returned like a rationale
            value = storable_text(value)
        rationale = entry.get("rationale")
        ratings[dim.id] = ParsedRating(value, clip_rationale(rationale))
    return ParseOutcome(ratings, problems)
