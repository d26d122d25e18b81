"""Recorded ratings from an annotation CSV, looked up by conversation.

Two layouts are read: a ``full_conversation`` column with ``Seeker: ...`` / ``Supporter: ...``
lines (the Kumar et al. LLM files; empty turns are ignored, a line without a speaker prefix
continues the previous turn), or ``seeker_post`` plus ``response_post``/``response``. Every
other column is a rating column. A column is served under its own name and under every
dimension id that lists it in ``aliases`` (so ``level_emotional_reactions`` answers for the
EPITOME dimension ``emotional_reactions``).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.domain.rubric import Rubric
from judge.domain.transcript import TEXT_COLUMNS, split_full_conversation
from judge.simulator.conversation import turns_key
from judge.simulator.schema import DimSpec

_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


class ReplayFileError(ValueError):
    """An annotation file that cannot be served (unreadable, or without conversation text)."""


def column_targets(columns: Iterable[str], rubrics: Iterable[Rubric]) -> dict[str, set[str]]:
    """For each rating column, the names it is served under (itself and matching dimensions)."""
    aliases: dict[str, set[str]] = {}
    for rubric in rubrics:
        for dim in rubric.dimensions:
            for alias in (dim.id, *dim.aliases):
                aliases.setdefault(alias, set()).add(dim.id)
    return {
        col: {col} | aliases.get(col, set())
        for col in columns
        if col and col not in TEXT_COLUMNS and not col.startswith("Unnamed")
    }


@dataclass
class ReplayTable:
    """Rows of one annotation file keyed by conversation."""

    name: str
    path: Path
    rows: dict[str, dict[str, str]] = field(default_factory=dict)
    duplicates: int = 0
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.rows)

    def row(self, key: str) -> dict[str, str] | None:
        return self.rows.get(key)


def _row_texts(row: dict[str, str], columns: set[str]) -> list[str]:
    if "full_conversation" in columns:
        return [body for _, body in split_full_conversation(row.get("full_conversation") or "")]
    response = row.get("response_post") if "response_post" in columns else row.get("response")
    return [row.get("seeker_post") or "", response or ""]


def load_table(name: str, path: Path, rubrics: Iterable[Rubric]) -> ReplayTable:
    """Read an annotation CSV; raise :class:`ReplayFileError` naming the file on a problem."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            columns = set(reader.fieldnames or ())
            has_pair = "seeker_post" in columns and columns & {"response_post", "response"}
            if "full_conversation" not in columns and not has_pair:
                raise ReplayFileError(
                    f"{path}: no conversation text: needs a full_conversation column, or "
                    f"seeker_post with response_post or response (columns: "
                    f"{', '.join(sorted(columns)) or 'none'})"
                )
            targets = column_targets(reader.fieldnames or (), rubrics)
            table = ReplayTable(name, path)
            for row in reader:
                texts = [t for t in _row_texts(row, columns) if t.strip()]
                if not texts:
                    table.skipped += 1
                    continue
                key = turns_key(texts)
                if key in table.rows:
                    table.duplicates += 1
                    continue
                values: dict[str, str] = {}
                for column, names in targets.items():
                    raw = (row.get(column) or "").strip()
                    if raw:
                        for target in names:
                            values.setdefault(target, raw)
                table.rows[key] = values
    except OSError as exc:
        raise ReplayFileError(f"{path}: cannot read: {exc}") from None
    except (csv.Error, UnicodeDecodeError) as exc:
        raise ReplayFileError(f"{path}: not a readable CSV file: {exc}") from None
    return table


def _number(raw: str) -> float | None:
    try:
        return float(raw)
    except ValueError:
        return None


def coerce(raw: str, spec: DimSpec, *, clamp: bool) -> Any:
    """A recorded cell as a rating for ``spec``; None if it cannot be one.

    Fractional values (crowd means) are rounded half up. Out-of-scale numbers are served as
    recorded unless ``clamp`` (reference labels for the ``accurate`` persona are clamped)."""
    if spec.kind == "ordinal":
        number = _number(raw)
        if number is None:
            return None
        value = int(number + 0.5) if number >= 0 else -int(-number + 0.5)
        if clamp:
            value = max(spec.levels[0], min(spec.levels[-1], value))
        return value
    if spec.kind == "binary":
        lowered = raw.lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        number = _number(raw)
        return None if number is None else number > 0
    if spec.kind == "nominal":
        for label in spec.labels:
            if label.lower() == raw.lower():
                return label
        return None if clamp else raw
    if spec.kind == "ranked":
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = [p.strip() for p in re.split(r"[|;,]", raw) if p.strip()]
        if not isinstance(parsed, list):
            parsed = [parsed]
        values = [str(v) for v in parsed]
        if clamp:
            values = [v for v in dict.fromkeys(values) if v in spec.labels][: spec.k]
            return values or None
        return values
    return raw[: spec.max_chars] if clamp else raw
