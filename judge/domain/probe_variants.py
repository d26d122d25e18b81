"""Variants of an item for bias probes: padded with content-neutral filler (verbosity), and
with the non-supporter participants listed in another order (order)."""

from __future__ import annotations

from typing import Any

from judge.domain.item import Item, Turn

#: Content-neutral filler: logistics with no feeling, question, advice, validation or
#: reference to either speaker, so a judge reading the rubric should not move on it.
FILLER_SENTENCES = (
    "The committee meeting was moved to Thursday afternoon.",
    "Parking near the library opens at eight.",
    "A new bus timetable starts next month.",
    "The printer on the third floor was replaced last week.",
    "Tickets for the museum exhibit went on sale yesterday.",
    "The bakery on Main Street changed its opening hours.",
    "Road works on the bridge finish in the spring.",
    "The quarterly newsletter comes out on Mondays.",
    "The gym extended its evening schedule by an hour.",
    "Rain is forecast for the coast over the weekend.",
)


def filler(words: int, sentences: tuple[str, ...] = FILLER_SENTENCES) -> str:
    """Whole filler sentences, cycling through ``sentences``, until ``words`` are reached."""
    out: list[str] = []
    count = 0
    i = 0
    while count < words:
        sentence = sentences[i % len(sentences)]
        out.append(sentence)
        count += len(sentence.split())
        i += 1
    return " ".join(out)


def _padded_turn(item: Item, unit: str) -> int:
    """The turn whose length a verbosity probe changes: the judged one (``response`` and
    ``conversation`` units), or the supporter side's last turn (``speaker``)."""
    if unit != "speaker":
        return item.focus_index
    supporters = {p.id for p in item.supporters}
    for index in range(len(item.turns) - 1, -1, -1):
        if item.turns[index].speaker in supporters:
            return index
    return item.focus_index


def as_raw(item: Item) -> dict[str, Any]:
    """The item as a JSON object the item parser accepts."""
    return item.model_dump(mode="json", exclude_none=True)


def padded(item: Item, unit: str, text: str) -> dict[str, Any]:
    """``item`` with ``text`` appended to the reply the rubric judges."""
    index = _padded_turn(item, unit)
    turns = list(item.turns)
    turn = turns[index]
    turns[index] = Turn(speaker=turn.speaker, text=f"{turn.text.rstrip()} {text}")
    return as_raw(item.model_copy(update={"turns": tuple(turns)}))


def participant_orders(item: Item, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` variants listing the non-supporter participants rotated (supporters
    keep their places); empty with fewer than two of them."""
    clients = [p for p in item.participants if not p.is_supporter]
    if len(clients) < 2:
        return []
    slots = [i for i, p in enumerate(item.participants) if not p.is_supporter]
    out = []
    for shift in range(1, min(limit, len(clients) - 1) + 1):
        rotated = clients[shift:] + clients[:shift]
        participants = list(item.participants)
        for slot, person in zip(slots, rotated, strict=True):
            participants[slot] = person
        out.append(as_raw(item.model_copy(update={"participants": tuple(participants)})))
    return out
