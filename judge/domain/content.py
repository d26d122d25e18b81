"""The content key of an item: what makes two calibration items the same evidence.

A calibration counts *independent units*; the same conversation submitted twice under two ids
is one unit, not two (issue 23). The key hashes the normalised conversation: every turn up to
and including the judged one, its speaker named by role and order of first appearance (so
renaming participants does not make a new conversation), its text in Unicode NFKC, case-folded,
with runs of whitespace collapsed; and the labels the judges were told (``given``). Ids, names,
metadata and ``group`` are not content.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata

from judge.domain.item import Item

_SPACE = re.compile(r"\s+")


def normalised_text(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_key(item: Item) -> str:
    """A sha256 of the normalised conversation up to the judged turn (module docstring)."""
    speakers: dict[str, str] = {}
    turns = []
    for turn in item.turns[: item.focus_index + 1]:
        if turn.speaker not in speakers:
            role = item.participant(turn.speaker).role.casefold()
            speakers[turn.speaker] = f"{role}#{len(speakers)}"
        turns.append([speakers[turn.speaker], normalised_text(turn.text)])
    payload = {"turns": turns, "given": item.given}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()
