"""Read the rating scales a caller asks for from its ``response_format`` JSON schema.

The schema is the one built by :func:`judge.domain.judgment_schema.judgment_schema`:
``properties.ratings.properties`` maps each dimension id to an object whose ``rating`` schema
says the scale: an integer enum (ordinal levels), a boolean (binary), a string enum (nominal),
an array of string enum with ``maxItems`` (ranked top-k) or a plain string (free text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["ordinal", "binary", "nominal", "ranked", "free_text"]

_MAX_CHARS = re.compile(r"at most (\d+) characters")


@dataclass(frozen=True)
class DimSpec:
    """One requested dimension: its id and what a valid rating looks like."""

    id: str
    kind: Kind
    levels: tuple[int, ...] = ()  # ordinal, ascending
    labels: tuple[str, ...] = ()  # nominal and ranked
    k: int = 1  # ranked: at most k labels
    max_chars: int = 600  # free text


def _ordinal_levels(schema: dict[str, Any]) -> tuple[int, ...]:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, int) for v in enum):
        return tuple(sorted(set(enum)))
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, int) and isinstance(high, int) and low < high <= low + 100:
        return tuple(range(low, high + 1))
    return ()


def _string_enum(schema: Any) -> tuple[str, ...]:
    enum = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum):
        return tuple(enum)
    return ()


def dim_spec(dim_id: str, rating: Any) -> DimSpec:
    """The scale of one dimension; anything unrecognised is answered as free text."""
    if not isinstance(rating, dict):
        return DimSpec(dim_id, "free_text")
    kind = rating.get("type")
    if kind in ("integer", "number"):
        levels = _ordinal_levels(rating)
        if levels:
            return DimSpec(dim_id, "ordinal", levels=levels)
    if kind == "boolean":
        return DimSpec(dim_id, "binary")
    if kind == "string":
        labels = _string_enum(rating)
        if len(labels) >= 1:
            return DimSpec(dim_id, "nominal", labels=labels)
    if kind == "array":
        labels = _string_enum(rating.get("items"))
        if labels:
            max_items = rating.get("maxItems")
            k = max_items if isinstance(max_items, int) and max_items >= 1 else 1
            return DimSpec(dim_id, "ranked", labels=labels, k=min(k, len(labels)))
    max_len = rating.get("maxLength")
    if isinstance(max_len, int) and max_len > 0:
        return DimSpec(dim_id, "free_text", max_chars=max_len)
    match = _MAX_CHARS.search(str(rating.get("description", "")))
    return DimSpec(dim_id, "free_text", max_chars=int(match.group(1)) if match else 600)


def requested_schema(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema of a ``{"type": "json_schema", ...}`` response format, else None."""
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    wrapper = response_format.get("json_schema")
    schema = wrapper.get("schema") if isinstance(wrapper, dict) else None
    return schema if isinstance(schema, dict) else None


def requested_dimensions(schema: dict[str, Any]) -> list[DimSpec] | None:
    """The dimensions under ``properties.ratings.properties``, or None if the schema has none."""
    ratings = schema.get("properties", {})
    ratings = ratings.get("ratings") if isinstance(ratings, dict) else None
    props = ratings.get("properties") if isinstance(ratings, dict) else None
    if not isinstance(props, dict):
        return None
    specs = []
    for dim_id, entry in props.items():
        inner = entry.get("properties") if isinstance(entry, dict) else None
        rating = inner.get("rating") if isinstance(inner, dict) else entry
        specs.append(dim_spec(str(dim_id), rating))
    return specs
