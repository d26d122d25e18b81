"""Input items: a dyadic or multi-party conversation plus the turn to judge.

The public shape is docs/DESIGN.md section 3. ``parse_item`` also accepts the shorthand
``{"seeker_post": ..., "response": ...}``. Every error names the offending field.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from judge.domain.text_fold import identity_key
from judge.domain.text_safety import json_problem, strip_nul, text_problem
from judge.errors import ItemInvalid

#: Roles that give support (the judged side in dyadic rubrics, the therapist in multi-party ones).
SUPPORTER_ROLES = frozenset(
    {"supporter", "therapist", "counselor", "listener", "helper", "assistant"}
)


_NAME_PUNCTUATION = frozenset("_.-")


def name_problem(value: str) -> str | None:
    """Participant ids and roles are shown to judges next to the conversation, so they are
    names, not text: letters, marks and digits of any script plus ``_ . -``, starting with a
    letter or digit. No spaces, brackets, tags or line breaks can reach the prompt this way."""
    for position, char in enumerate(value):
        kind = unicodedata.category(char)[0]
        allowed = kind in "LN" if position == 0 else kind in "LMN" or char in _NAME_PUNCTUATION
        if not allowed:
            shown = repr(char) if char.isprintable() else f"U+{ord(char):04X}"
            return (
                f"{shown} at position {position} is not allowed: use letters, digits, '_', '.' "
                "or '-', starting with a letter or digit"
            )
    return None


def _name(value: str) -> str:
    problem = name_problem(value)
    if problem:
        raise PydanticCustomError("unsafe_name", problem)
    return value


def check_stored(value: str) -> str:
    """A string stored as given (ids, names): no control characters, no lone surrogates."""
    problem = text_problem(value, controls=True)
    if problem:
        raise PydanticCustomError("unsafe_text", problem)
    return value


def _turn_text(value: str) -> str:
    """Turn text is kept verbatim except for NUL characters, which are dropped."""
    problem = text_problem(strip_nul(value))
    if problem:
        raise PydanticCustomError("unsafe_text", problem)
    return strip_nul(value)


Name = Annotated[str, AfterValidator(_name)]
#: an id or name stored as given, at most 200 characters (the id columns' length)
StoredId = Annotated[str, Field(max_length=200), AfterValidator(check_stored)]
TurnText = Annotated[str, AfterValidator(_turn_text)]


class Participant(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Name = Field(min_length=1, max_length=200)
    role: Name = Field(min_length=1, max_length=100)
    name: StoredId | None = None

    @property
    def is_supporter(self) -> bool:
        return self.role.lower() in SUPPORTER_ROLES


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    speaker: Name = Field(min_length=1, max_length=200)
    text: TurnText = Field(max_length=100_000)


class Item(BaseModel):
    """One conversation to judge. ``focus`` is the index of the judged turn or checkpoint."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: StoredId | None = None
    participants: tuple[Participant, ...] = Field(min_length=2, max_length=50)
    turns: tuple[Turn, ...] = Field(min_length=1, max_length=5_000)
    focus: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: items of one group (a session's checkpoints, several replies to one post) are not
    #: independent: calibration CIs resample whole groups
    group: StoredId | None = None
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
        problem = text_problem(strip_nul(raw[key]))
        if problem:
            raise ItemInvalid(key, problem)
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
    problem = json_problem(item.metadata)
    if problem:
        where, message = problem
        field = f"{field_prefix}.metadata" + (f".{where}" if where and where[0] != "[" else where)
        raise ItemInvalid(field, message)
    return item


def _check_references(item: Item, prefix: str) -> None:
    ids = [p.id for p in item.participants]
    seen: dict[str, int] = {}
    for j, participant_id in enumerate(ids):
        first = seen.setdefault(identity_key(participant_id), j)
        if first != j:
            raise ItemInvalid(
                f"{prefix}.participants[{j}].id",
                f"participant ids must be unique: {participant_id!r} reads as "
                f"participants[{first}].id {ids[first]!r} (compared after Unicode "
                "normalisation, look-alike letters and case folded)",
            )
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
