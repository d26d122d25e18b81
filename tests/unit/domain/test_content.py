"""The content key: the same conversation under other ids, names or spacing is the same content."""

from __future__ import annotations

from typing import Any

from judge.domain.content import content_key
from judge.domain.item import parse_item


def conversation(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": "a",
        "participants": [
            {"id": "seeker", "role": "seeker"},
            {"id": "helper", "role": "supporter"},
        ],
        "turns": [
            {"speaker": "seeker", "text": "I lost my job today."},
            {"speaker": "helper", "text": "That sounds really hard."},
        ],
    }
    return item | changes


def key(raw: dict[str, Any]) -> str:
    return content_key(parse_item(raw))


def test_ids_names_metadata_and_groups_are_not_content() -> None:
    renamed = conversation(
        id="b",
        group="g",
        metadata={"source": "x"},
        participants=[
            {"id": "s2", "role": "seeker", "name": "Sam"},
            {"id": "h2", "role": "supporter"},
        ],
        turns=[
            {"speaker": "s2", "text": "  I LOST my job   today. "},
            {"speaker": "h2", "text": "That sounds really hard."},
        ],
    )
    assert key(renamed) == key(conversation())


def test_other_text_roles_focus_or_given_labels_are_other_content() -> None:
    base = key(conversation())
    other_text = conversation(
        turns=[
            {"speaker": "seeker", "text": "I lost my job today."},
            {"speaker": "helper", "text": "Tell me more."},
        ]
    )
    assert key(other_text) != base
    assert key(conversation(focus=0)) != base
    assert key(conversation(given={"d": 1})) != base
    swapped = conversation(
        participants=[
            {"id": "seeker", "role": "supporter"},
            {"id": "helper", "role": "seeker"},
        ]
    )
    assert key(swapped) != base


def test_the_shorthand_is_the_same_conversation() -> None:
    short = {"seeker_post": "I lost my job today.", "response": "That sounds really hard."}
    full = conversation(
        participants=[
            {"id": "seeker", "role": "seeker"},
            {"id": "supporter", "role": "supporter"},
        ],
        turns=[
            {"speaker": "seeker", "text": "I lost my job today."},
            {"speaker": "supporter", "text": "That sounds really hard."},
        ],
    )
    assert key(short) == key(full)
