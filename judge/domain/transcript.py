"""Build items from the text layouts of annotation files.

Two layouts: a ``full_conversation`` column holding ``Seeker: ...`` / ``Supporter: ...``
lines (empty turns are dropped; a line without a speaker prefix continues the previous turn),
or ``seeker_post`` plus ``response_post`` / ``response``. The EmpatheticDialogues
``_comma_`` escape is undone in the items built here.
"""

from __future__ import annotations

import re
from typing import Any

TEXT_COLUMNS = frozenset({"full_conversation", "seeker_post", "response_post", "response"})
_SPEAKER_LINE = re.compile(
    r"^\s*(seeker|supporter|listener|counselor|therapist|client|helper|user|assistant|"
    r"speaker\s*\w+)\s*:\s?(.*)$",
    re.IGNORECASE,
)
_SUPPORT_SIDE = {"supporter", "listener", "counselor", "therapist", "helper", "assistant"}


def split_full_conversation(text: str) -> list[tuple[str, str]]:
    """``(speaker, text)`` pairs of a ``Seeker: ...`` / ``Supporter: ...`` transcript, empty
    turns dropped."""
    turns: list[tuple[str, str]] = []
    for line in text.splitlines():
        match = _SPEAKER_LINE.match(line)
        if match:
            turns.append((match.group(1).strip().lower(), match.group(2).strip()))
        elif line.strip() and turns:
            speaker, body = turns[-1]
            turns[-1] = (speaker, f"{body}\n{line.strip()}".strip())
        elif line.strip():
            turns.append(("unknown", line.strip()))
    return [(speaker, body) for speaker, body in turns if body]


def _unescape(text: str) -> str:
    """Undo the EmpatheticDialogues release's ``_comma_`` escape (judges should read commas)."""
    return text.replace("_comma_", ",")


def item_from_row(row: dict[str, str], item_id: str | None = None) -> dict[str, Any] | None:
    """A raw item (docs/DESIGN.md section 3 shape) from an annotation-file row, or None if the row
    holds no conversation text."""
    if row.get("full_conversation", "").strip():
        turns = split_full_conversation(row["full_conversation"])
        speakers = []
        for speaker, _ in turns:
            if speaker not in speakers:
                speakers.append(speaker)
        participants = [
            {"id": s, "role": "supporter" if s in _SUPPORT_SIDE else "seeker"} for s in speakers
        ]
        return {
            "id": item_id,
            "participants": participants,
            "turns": [{"speaker": s, "text": _unescape(t)} for s, t in turns],
        }
    response = row.get("response_post") or row.get("response")
    if row.get("seeker_post") and response:
        return {"id": item_id, "seeker_post": row["seeker_post"], "response": response}
    return None
