"""What a simulated judge reads: the conversation block of the prompt and the judged turns.

The prompt carries the conversation as rendered by :func:`judge.domain.render.render_conversation`.
The turn marked ``*`` is judged; without a mark (``speaker`` units) the supporter-side turns
are judged together. Conversations are recognised by :func:`conversation_key` over their turn
texts, after undoing the ``_comma_`` escape of the EmpatheticDialogues release, so an item
built from an annotation file matches that file's row whichever way its text was cleaned.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from judge.domain.item import SUPPORTER_ROLES
from judge.domain.render import RenderedTurn, conversation_key, parse_conversation_block


def clean_turn_text(text: str) -> str:
    """Undo dataset escapes that would otherwise change a conversation's key."""
    return text.replace("_comma_", ",")


def turns_key(texts: list[str]) -> str:
    """The key of a conversation given its turn texts (empty turns contribute nothing)."""
    return conversation_key([clean_turn_text(t) for t in texts if t.strip()])


def message_text(message: Any) -> str:
    """The text of one chat message (a string, or a list of ``{"type": "text"}`` parts)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") in ("text", "input_text")
        ]
        return "\n".join(parts)
    return ""


@dataclass(frozen=True)
class JudgedView:
    """The conversation as the judge sees it."""

    turns: tuple[RenderedTurn, ...]
    judged: tuple[RenderedTurn, ...]  # the focus turn, or every supporter-side turn
    key: str  # conversation_key over all turn texts

    @property
    def judged_texts(self) -> list[str]:
        return [t.text for t in self.judged]

    @property
    def context_text(self) -> str:
        judged = {t.index for t in self.judged}
        return "\n".join(t.text for t in self.turns if t.index not in judged)


def read_view(messages: list[Any]) -> JudgedView:
    """Find the conversation in the latest user message that has one (a repair request that
    follows a bad reply has none); without any, the last user message is the judged text."""
    user_texts = [
        message_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "user"
    ]
    turns: list[RenderedTurn] = []
    for text in reversed(user_texts):
        turns = parse_conversation_block(text)
        if turns:
            break
    if not turns:
        text = user_texts[-1] if user_texts else ""
        lone = RenderedTurn(0, "author", "supporter", text, True)
        return JudgedView((lone,), (lone,), turns_key([text]))
    focus = tuple(t for t in turns if t.is_focus)
    if not focus:
        focus = tuple(t for t in turns if t.role.lower() in SUPPORTER_ROLES and t.text.strip())
    if not focus:
        focus = (turns[-1],)
    return JudgedView(tuple(turns), focus, turns_key([t.text for t in turns]))


_PROSCRIPTIVE_HEADING = re.compile(r"^###\s+(\S+).*\[proscriptive", re.MULTILINE)


def proscriptive_ids(messages: list[Any]) -> frozenset[str]:
    """Dimension ids the system prompt marks ``[proscriptive`` (higher = more unwanted). A
    caller without a system role (LiteLLM folds the system prompt into the first user turn
    for Gemini models it does not know) has it in a user message instead."""
    found: set[str] = set()
    roles = {m.get("role") for m in messages if isinstance(m, dict)}
    wanted = "system" if "system" in roles else "user"
    for message in messages:
        if isinstance(message, dict) and message.get("role") == wanted:
            found.update(_PROSCRIPTIVE_HEADING.findall(message_text(message)))
    return frozenset(found)
