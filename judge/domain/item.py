"""Input items: a dyadic or multi-party conversation plus the turn to judge.

The public shape is DESIGN.md section 3. ``parse_item`` also accepts the shorthand
``{"seeker_post": ..., "response": ...}``. Every error names the offending field.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from judge.errors import ItemInvalid

#: Roles that give support (the judged side in dyadic rubrics, the therapist in multi-party ones).
SUPPORTER_ROLES = frozenset(
    {"supporter", "therapist", "counselor", "listener", "helper", "assistant"}
)


class Participant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    role: str = Field(min_length=1, max_length=100)
    name: str | None = Field(default=None, max_length=200)

    @property
    def is_supporter(self) -> bool:
        return self.role.lower() in SUPPORTER_ROLES


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    speaker: str = Field(min_length=1, max_length=200)
    text: str = Field(max_length=100_000)


class Item(BaseModel):
    """One conversation to judge. ``focus`` is the index of the judged turn or checkpoint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = Field(default=None, max_length=200)
    participants: tuple[Participant, ...] = Field(min_length=2, max_length=50)
    turns: tuple[Turn, ...] = Field(min_length=1, max_length=5_000)
    focus: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: items of one group (a session's checkpoints, several replies to one post) are not
    #: independent: calibration CIs resample whole groups
    group: str | None = Field(default=None, max_length=200)
    #: labels the judges are told rather than asked for (dimension id -> value), e.g. the gold
    #: support target when the support strategy is evaluated given it
    given: dict[str, Any] = Field(default_factory=dict)

    @property
    def focus_index(self) -> int:
        return len(self.turns) - 1 if self.focus is None else self.focus

    def participant(self, speaker: str) -> Participant:
        for p in self.participants:
            if p.id == speaker:
                return p
        raise KeyError(speaker)

    @property
    def clients(self) -> list[Participant]:
        return [p for p in self.participants if not p.is_supporter]

    @property
    def supporters(self) -> list[Participant]:
        return [p for p in self.participants if p.is_supporter]


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _from_shorthand(raw: dict[str, Any]) -> dict[str, Any]:
    allowed = {"id", "seeker_post", "response", "metadata", "group"}
    extra = sorted(set(raw) - allowed)
    if extra:
        raise ItemInvalid(extra[0], "unknown field in the {seeker_post, response} shorthand")
    for key in ("seeker_post", "response"):
        if not isinstance(raw.get(key), str):
            raise ItemInvalid(key, "must be a string")
    return {
        "id": raw.get("id"),
        "participants": [
            {"id": "seeker", "role": "seeker"},
            {"id": "supporter", "role": "supporter"},
        ],
        "turns": [
            {"speaker": "seeker", "text": raw["seeker_post"]},
            {"speaker": "supporter", "text": raw["response"]},
        ],
        "metadata": raw.get("metadata") or {},
        "group": raw.get("group"),
    }


def parse_item(raw: object, *, field_prefix: str = "item") -> Item:
    """Validate a decoded JSON value as an :class:`Item`; errors name ``<prefix>.<field>``."""
    if not isinstance(raw, dict):
        raise ItemInvalid(field_prefix, "must be a JSON object")
    try:
        data = _from_shorthand(raw) if "seeker_post" in raw or "response" in raw else raw
        item = Item.model_validate(data)
    except ItemInvalid as exc:
        raise ItemInvalid(f"{field_prefix}.{exc.field}", exc.detail) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = _loc(tuple(first["loc"]))
        raise ItemInvalid(
            f"{field_prefix}.{field}" if field else field_prefix, first["msg"]
        ) from None
    _check_references(item, field_prefix)
    return item


def _check_references(item: Item, prefix: str) -> None:
    ids = [p.id for p in item.participants]
    if len(set(ids)) != len(ids):
        raise ItemInvalid(f"{prefix}.participants", "participant ids must be unique")
    known = set(ids)
    for i, turn in enumerate(item.turns):
        if turn.speaker not in known:
            raise ItemInvalid(
                f"{prefix}.turns[{i}].speaker",
                f"{turn.speaker!r} is not one of the participants ({', '.join(ids)})",
            )
    if item.focus is not None and not 0 <= item.focus < len(item.turns):
        raise ItemInvalid(
            f"{prefix}.focus", f"must be a turn index between 0 and {len(item.turns) - 1}"
        )
