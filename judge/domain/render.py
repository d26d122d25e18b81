"""How a conversation is shown to a judge, and how that block is read back.

The block is plain text between ``<conversation>`` and ``</conversation>``, one turn per line::

    [0] maya (client): I keep trying to talk to him and he walks away.
    *[1] therapist (therapist): What happens in you when he walks away?

A leading ``*`` marks the turn being judged (the focus). Continuation lines of a multi-line
turn are indented by four spaces. Any closing tag inside a turn is neutralised, so the data
cannot end the block early; speaker ids and roles are names (letters, digits, ``_ . -``: see
:func:`judge.domain.item.name_problem`), so they cannot carry a tag, a bracket or a line break.
:func:`parse_conversation_block` inverts :func:`render_conversation` (the simulator uses it),
and :func:`conversation_key` fingerprints the turn texts so the same conversation can be
recognised however it was formatted.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from judge.domain.item import Item

OPEN_TAG = "<conversation>"
CLOSE_TAG = "</conversation>"
_TURN_LINE = re.compile(r"^(\*?)\[(\d+)\] (\S+) \(([^)]*)\): ?(.*)$")
_TAG = re.compile(r"</?\s*conversation\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class RenderedTurn:
    index: int
    speaker: str
    role: str
    text: str
    is_focus: bool


def visible_turns(item: Item, unit: str) -> range:
    """Turns a judge sees: all of them for ``speaker`` units, up to the focus otherwise."""
    return range(len(item.turns)) if unit == "speaker" else range(item.focus_index + 1)


def _neutralise(text: str) -> str:
    return _TAG.sub(lambda m: m.group(0).replace("<", "‹").replace(">", "›"), text)


def render_conversation(item: Item, unit: str) -> str:
    lines = [OPEN_TAG]
    for i in visible_turns(item, unit):
        turn = item.turns[i]
        role = item.participant(turn.speaker).role
        mark = "*" if unit != "speaker" and i == item.focus_index else ""
        text_lines = _neutralise(turn.text).splitlines() or [""]
        lines.append(f"{mark}[{i}] {turn.speaker} ({role}): {text_lines[0]}")
        lines.extend(f"    {more}" for more in text_lines[1:])
    lines.append(CLOSE_TAG)
    return "\n".join(lines)


def parse_conversation_block(text: str) -> list[RenderedTurn]:
    """The turns of the last ``<conversation>`` block in ``text`` (empty if there is none)."""
    start = text.rfind(OPEN_TAG)
    end = text.find(CLOSE_TAG, start)
    if start < 0 or end < 0:
        return []
    turns: list[RenderedTurn] = []
    for line in text[start + len(OPEN_TAG) : end].splitlines():
        match = _TURN_LINE.match(line)
        if match:
            star, index, speaker, role, body = match.groups()
            turns.append(RenderedTurn(int(index), speaker, role, body, bool(star)))
        elif line.startswith("    ") and turns:
            last = turns[-1]
            turns[-1] = RenderedTurn(
                last.index, last.speaker, last.role, f"{last.text}\n{line[4:]}", last.is_focus
            )
    return turns


def conversation_key(texts: list[str]) -> str:
    """A fingerprint of turn texts that ignores case, punctuation, whitespace and turn breaks."""
    normalised = "".join(re.sub(r"[^a-z0-9]", "", t.lower()) for t in texts)
    return hashlib.sha256(normalised.encode()).hexdigest()[:16]
