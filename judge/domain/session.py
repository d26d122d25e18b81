"""A whole multi-party session to judge checkpoint by checkpoint (``POST /v1/sessions``).

A session is an item's conversation (``participants``, ``turns``; docs/DESIGN.md section 3)
plus ``supporter`` (the participant whose turns are evaluated; default: the only participant
with a supporter role), optional ``checkpoints`` (turn indices; default: every turn of a
client) and, per turn, an optional ``to``: whom a supporter turn addresses (participant ids;
``all`` or the group label ``Couple``/``Family`` for every client). Without ``to`` a supporter
turn is taken to address the client who spoke last (marked as inferred).

Each checkpoint is judged with the context window the RESCUE-BENCH protocol gives each task:
the checkpoint turn and the :data:`CONTEXT_ROWS` turns before it, except the relation pattern,
which sees the whole prefix. A window longer than the item size limit loses its oldest turns
(``truncated``). Errors name the field (``session.turns[3].to[0]``...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from empathy_judge_client.session_view import TurnRef
from judge.domain.item import Item, parse_item
from judge.errors import ItemInvalid

#: turns of context before the checkpoint (RESCUE-BENCH: "the previous 3 rows")
CONTEXT_ROWS = 3
RECENT = "recent"
PREFIX = "prefix"
#: the window each dimension is read from (the others: ``recent``)
TASK_WINDOWS = {"relation_pattern": PREFIX}
#: ``to`` values that address every client
GROUP_WORDS = frozenset({"all", "Couple", "Family"})
#: the most checkpoints one session may have
MAX_CHECKPOINTS = 2_000


def window_of(dim_id: str) -> str:
    return TASK_WINDOWS.get(dim_id, RECENT)


@dataclass(frozen=True)
class Session:
    """A validated session."""

    item: Item
    supporter: str
    checkpoints: tuple[int, ...]
    to: tuple[tuple[str, ...] | None, ...]

    @property
    def id(self) -> str | None:
        return self.item.id


@dataclass(frozen=True)
class PlannedJob:
    """One job of a session: a checkpoint seen through one window ``[start, end)``."""

    checkpoint: int
    window: str
    start: int
    end: int
    truncated: bool
    item: dict[str, Any]


def _to(raw: object, field: str, ids: set[str]) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ItemInvalid(field, "must be a list of participant ids")
    for j, value in enumerate(raw):
        if value not in ids and value not in GROUP_WORDS:
            raise ItemInvalid(f"{field}[{j}]", f"{value!r} is not a participant of the session")
    return tuple(raw)


def parse_session(raw: object, *, prefix: str = "session") -> Session:
    """Validate a decoded JSON session; errors name ``<prefix>.<field>``."""
    if not isinstance(raw, dict):
        raise ItemInvalid(prefix, "must be a JSON object")
    data = dict(raw)
    supporter = data.pop("supporter", None)
    checkpoints = data.pop("checkpoints", None)
    turns = data.get("turns")
    to_raw: list[object] = []
    if isinstance(turns, list):
        plain = []
        for turn in turns:
            if isinstance(turn, dict):
                to_raw.append(turn.get("to"))
                plain.append({k: v for k, v in turn.items() if k != "to"})
            else:
                to_raw.append(None)
                plain.append(turn)
        data["turns"] = plain
    item = parse_item(data, field_prefix=prefix)
    ids = {p.id for p in item.participants}
    chosen = _supporter(item, supporter, prefix)
    to = tuple(_to(v, f"{prefix}.turns[{i}].to", ids) for i, v in enumerate(to_raw))
    return Session(item, chosen, _checkpoints(item, chosen, checkpoints, prefix), to)


def _supporter(item: Item, raw: object, prefix: str) -> str:
    if raw is None:
        found = [p.id for p in item.supporters]
        if len(found) != 1:
            raise ItemInvalid(
                f"{prefix}.supporter",
                f"name the supporter: the session has {len(found)} participants with a "
                "supporter role",
            )
        return found[0]
    if not isinstance(raw, str) or raw not in {p.id for p in item.participants}:
        raise ItemInvalid(f"{prefix}.supporter", "must be a participant id of the session")
    return raw


def _checkpoints(item: Item, supporter: str, raw: object, prefix: str) -> tuple[int, ...]:
    field = f"{prefix}.checkpoints"
    if raw is None:
        found = tuple(i for i, t in enumerate(item.turns) if t.speaker != supporter)
    else:
        if not isinstance(raw, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in raw
        ):
            raise ItemInvalid(field, "must be a list of turn indices")
        for j, index in enumerate(raw):
            if not 0 <= index < len(item.turns):
                raise ItemInvalid(f"{field}[{j}]", f"turn {index} is not in the session")
            if item.turns[index].speaker == supporter:
                raise ItemInvalid(f"{field}[{j}]", f"turn {index} is the supporter's")
        found = tuple(sorted(set(raw)))
    if not found:
        raise ItemInvalid(field, "the session has no client turn to judge")
    if len(found) > MAX_CHECKPOINTS:
        raise ItemInvalid(field, f"{len(found)} checkpoints; at most {MAX_CHECKPOINTS}")
    return found


def _fit(session: Session, start: int, end: int, max_chars: int | None) -> tuple[int, bool]:
    """The window's start once its oldest turns are dropped to fit ``max_chars``."""
    if max_chars is None:
        return start, False
    texts = [len(t.text) for t in session.item.turns]
    if texts[end - 1] > max_chars:
        raise ItemInvalid(
            f"session.turns[{end - 1}].text",
            f"{texts[end - 1]} characters; an item holds at most {max_chars}",
        )
    first = start
    while sum(texts[first:end]) > max_chars:
        first += 1
    return first, first > start


def plan_session(
    session: Session, session_id: str, *, max_chars: int | None = None
) -> list[PlannedJob]:
    """Up to two jobs per checkpoint (the ``recent`` and ``prefix`` windows) in checkpoint
    order; one only when both windows hold the same turns (its judgments serve both)."""
    item = session.item
    participants = [p.model_dump(exclude_none=True) for p in item.participants]
    planned: list[PlannedJob] = []
    for c in session.checkpoints:
        for window, start in ((RECENT, max(0, c - CONTEXT_ROWS)), (PREFIX, 0)):
            first, truncated = _fit(session, start, c + 1, max_chars)
            if window == PREFIX and planned[-1].start == first:
                continue
            turns = [t.model_dump() for t in item.turns[first : c + 1]]
            body = {
                "id": f"{session_id}#{c}@{window}",
                "participants": participants,
                "turns": turns,
                "focus": c - first,
                "group": session_id,
                "metadata": {"session": session_id, "checkpoint": c, "window": window},
            }
            planned.append(PlannedJob(c, window, first, c + 1, truncated, body))
    return planned


def turn_refs(session: Session) -> list[TurnRef]:
    """Who spoke each turn and whom the supporter's turns addressed (given or inferred)."""
    clients = [p.id for p in session.item.clients]
    refs = []
    last_client: str | None = None
    for i, turn in enumerate(session.item.turns):
        given = session.to[i] if i < len(session.to) else None
        to: list[str] = []
        inferred = False
        if turn.speaker == session.supporter:
            if given is not None:
                for name in given:
                    to += clients if name in GROUP_WORDS else [name]
            elif last_client is not None:
                to, inferred = [last_client], True
        else:
            last_client = turn.speaker
        refs.append(
            TurnRef(index=i, speaker=turn.speaker, to=list(dict.fromkeys(to)), to_inferred=inferred)
        )
    return refs
