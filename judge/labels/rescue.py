"""Labelled calibration items from RESCUE-BENCH sessions (``rescue-couple``, ``rescue-family``).

A RESCUE-BENCH file has one session per JSON line: ``sample_id``, ``scenario``, ``participants``
(the clients) and ``rows`` in time order (``primary_speaker``, ``dialogue_cleaned``, the row's
annotations). Each session becomes several items, one per **checkpoint**: the conversation up
to and including one row (the focus turn), with the gold labels that apply at that moment. The
single expert is ``rescue-bench`` (the benchmark's verified annotation).

Checkpoint convention (row ``c`` is the checkpoint, row ``c+1`` the next row):

- ``intervene_now`` (ITP): at every non-therapist row that has a next row; positive iff the next
  row is the therapist's. (The benchmark balances yes/no per sample by sampling; here every
  candidate is kept, so the classes keep their natural ratio.)
- ``relation_pattern`` (RPP): the benchmark predicts a therapist row's ``relation_cycle_state``
  from the turns before it, so that label belongs to the checkpoint just before the therapist
  row. A client row's own ``relation_pattern`` (a window label that, in the couple sessions,
  always equals the next therapist row's state) labels that client row and takes precedence.
  An empty string means no clear pattern and gives no label; so does a label outside the
  rubric's set. ``relation_pattern`` on therapist rows and ``relation_cycle_state`` on client
  rows (always empty in the data) are not used.
- ``support_target`` and ``support_strategy`` (STP, SSP): a therapist row whose first
  ``support_strategy`` item has a non-empty ``strategy_type`` labels the checkpoint just before
  it (the benchmark gives the model the prior turns only). The target is that item's
  ``target`` without "Therapist"/empty names, falling back to the row's ``target``; one name is
  that participant, two or more collapse to the group label ("Couple"/"Family"), which also
  stays itself. The strategy is the item's ``strategy_type`` when it is in the rubric's closed
  set (else no strategy label, as the benchmark skips it). A therapist row that opens the
  session has no checkpoint before it and gives no label.
- ``focus_emotion`` and ``focus_intensity`` (ER): at a client row, the ``internal_emotion`` entry
  of the row's own speaker (its ``emotion_description`` and ``intensity``) when present.

Context windows (the benchmark's protocol, shared with ``POST /v1/sessions``): a checkpoint's
item holds the checkpoint and the 3 rows before it, except for the relation pattern, judged
on the whole prefix in an item of its own (id suffix ``#prefix``); while both windows hold the
same rows (the first 4 rows) one item carries every label.

Every item's ``group`` is its session (``sample_id``): checkpoints of one session are not
independent, so calibration CIs resample sessions. A checkpoint labelled with both a support
target and a strategy also gives a second item (id suffix ``#given-target``) whose judges are
told the gold target (``given``) and asked for the strategy, as the benchmark's SSP task does;
the report evaluates it apart from the end-to-end items.

Participants: the session's ``participants`` as ``client``s (ids are the names, whitespace
replaced by ``_``), then any other non-therapist speaker in order of appearance, plus
``therapist``. A checkpoint with no label at all gives no item.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judge.domain.jsonl import read_jsonl_strict
from judge.domain.rubric import NominalScale, RankedScale, Rubric
from judge.domain.session import CONTEXT_ROWS, PREFIX, RECENT, window_of
from judge.errors import JsonLinesInvalid, RescueFileError

EXPERT = "rescue-bench"
GIVEN_TARGET_SUFFIX = "#given-target"
#: the id suffix of a checkpoint's whole-prefix item (the relation pattern's window)
PREFIX_SUFFIX = "#prefix"
THERAPIST_ID = "therapist"
_THERAPIST_NAMES = frozenset({"therapist"})
_GROUP_LABELS = {"couple": "Couple", "family": "Family"}


def read_sessions(path: Path) -> list[dict[str, Any]]:
    """The sessions of a RESCUE-BENCH JSON Lines file (one JSON object per line)."""
    try:
        lines = read_jsonl_strict(path.read_bytes())
    except OSError as exc:
        raise RescueFileError(f"{path}: cannot read: {exc}") from None
    except JsonLinesInvalid as exc:
        raise RescueFileError(f"{path}: {exc.message}") from None
    sessions = []
    for n, session in lines:
        if not isinstance(session, dict) or not isinstance(session.get("rows"), list):
            raise RescueFileError(f"{path}: line {n}: not a RESCUE-BENCH session (no rows list)")
        sessions.append(session)
    return sessions


def _is_therapist(name: object) -> bool:
    return isinstance(name, str) and name.strip().lower() in _THERAPIST_NAMES


def participant_id(name: str) -> str:
    """A participant id for a RESCUE name (ids cannot contain whitespace)."""
    return THERAPIST_ID if _is_therapist(name) else re.sub(r"\s+", "_", name.strip())


def scenario_of(session: dict[str, Any]) -> str:
    """``family`` or ``couple``, as the benchmark's group mode: family when the sample id starts
    with ``family_therapy/`` or any speaker or target is "Family"."""
    if str(session.get("sample_id", "")).startswith("family_therapy/"):
        return "family"
    if session.get("scenario") == "family":
        return "family"
    for row in session.get("rows", []):
        names = [row.get("primary_speaker"), *(row.get("target") or [])]
        for support in row.get("support_strategy") or []:
            names += support.get("target") or []
        if "Family" in names:
            return "family"
    return "couple"


def _fix_mojibake(text: str) -> str:
    """UTF-8 punctuation that was decoded as Latin-1 (e.g. ``â\\x80\\x99`` for ’), repaired."""
    if "\u00e2" not in text and "\u00c3" not in text:
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return text


def _names(values: Iterable[object]) -> list[str]:
    return [v.strip() for v in values if isinstance(v, str) and v.strip() and not _is_therapist(v)]


def support_target(row: dict[str, Any], group: str) -> str | None:
    """The gold support target of a therapist row (None without a usable support item)."""
    supports = row.get("support_strategy") or []
    if not supports or not str(supports[0].get("strategy_type") or "").strip():
        return None
    names = _names(supports[0].get("target") or []) or _names(row.get("target") or [])
    if not names:
        return None
    if len(names) >= 2:
        return group
    return names[0] if names[0] in _GROUP_LABELS.values() else participant_id(names[0])


def support_strategy(row: dict[str, Any]) -> str | None:
    supports = row.get("support_strategy") or []
    if not supports:
        return None
    strategy = str(supports[0].get("strategy_type") or "").strip()
    return strategy or None


@dataclass
class RescueItems:
    """Labelled items plus what was left out and why (label counts for the record)."""

    items: list[dict[str, Any]] = field(default_factory=list)
    labels: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    given: int = 0  # support-strategy items asked with the gold target given


def _label_ids(rubric: Rubric, dim_id: str) -> frozenset[str]:
    ids = {d.id for d in rubric.dimensions}
    if dim_id not in ids:
        return frozenset()
    scale = rubric.dimension(dim_id).scale
    if isinstance(scale, NominalScale | RankedScale) and scale.labels:
        return frozenset(label.id for label in scale.labels)
    return frozenset()


def session_items(session: dict[str, Any], rubric: Rubric, out: RescueItems) -> None:
    """Append the labelled checkpoints of one session to ``out``."""
    sample_id = str(session.get("sample_id", "session"))
    scenario = scenario_of(session)
    group = _GROUP_LABELS[scenario]
    rows: list[dict[str, Any]] = session["rows"]
    dims = {d.id: d for d in rubric.dimensions}
    patterns = _label_ids(rubric, "relation_pattern")
    strategies = _label_ids(rubric, "support_strategy")

    names: dict[str, str] = {}  # participant id -> name
    listed = [p for p in session.get("participants") or [] if isinstance(p, str)]
    speakers = [r.get("primary_speaker") for r in rows]
    for name in [*listed, *(s for s in speakers if isinstance(s, str))]:
        if name.strip() and not _is_therapist(name):
            names.setdefault(participant_id(name), name.strip())
    clients = list(names)
    participants = [{"id": pid, "role": "client", "name": names[pid]} for pid in clients]
    participants.append({"id": THERAPIST_ID, "role": "therapist"})
    candidates = {*clients, group}
    turns = [
        {
            "speaker": participant_id(str(row.get("primary_speaker") or "")),
            "text": _fix_mojibake(str(row.get("dialogue_cleaned") or "")),
        }
        for row in rows
    ]

    for c, row in enumerate(rows):
        nxt = rows[c + 1] if c + 1 < len(rows) else None
        client_row = not _is_therapist(row.get("primary_speaker"))
        next_therapist = nxt is not None and _is_therapist(nxt.get("primary_speaker"))
        labels: dict[str, Any] = {}

        if client_row and nxt is not None:
            labels["intervene_now"] = next_therapist

        pattern: object = None
        if client_row and row.get("relation_pattern") is not None:
            pattern = row.get("relation_pattern")
        elif next_therapist and nxt is not None:
            pattern = nxt.get("relation_cycle_state")
        if isinstance(pattern, str) and pattern.strip():
            if pattern.strip() in patterns:
                labels["relation_pattern"] = pattern.strip()
            else:
                out.skipped["relation_pattern_not_in_rubric"] += 1

        if next_therapist and nxt is not None:
            target = support_target(nxt, group)
            if target is not None:
                if target in candidates:
                    labels["support_target"] = target
                else:
                    out.skipped["support_target_unknown_person"] += 1
                strategy = support_strategy(nxt)
                if strategy in strategies:
                    labels["support_strategy"] = strategy
                elif strategy is not None:
                    out.skipped["support_strategy_not_in_rubric"] += 1

        if client_row:
            speaker = row.get("primary_speaker")
            emotion = next(
                (
                    e
                    for e in row.get("internal_emotion") or []
                    if isinstance(e, dict) and e.get("person") == speaker
                ),
                None,
            )
            if emotion is not None:
                text = _fix_mojibake(str(emotion.get("emotion_description") or "")).strip()
                scale = dims["focus_emotion"].scale if "focus_emotion" in dims else None
                if text and scale is not None and scale.check(text) is None:
                    labels["focus_emotion"] = text
                intensity = emotion.get("intensity")
                if isinstance(intensity, int) and not isinstance(intensity, bool):
                    scale = dims["focus_intensity"].scale if "focus_intensity" in dims else None
                    if scale is not None and scale.check(intensity) is None:
                        labels["focus_intensity"] = intensity

        labels = {k: v for k, v in labels.items() if k in dims}
        if not labels:
            continue
        out.labels.update(labels.keys())
        item_id = f"{sample_id}#{row.get('row_index', c + 1)}"
        metadata = {
            "sample_id": sample_id,
            "row_index": row.get("row_index", c + 1),
            "scenario": scenario,
            "rows": len(rows),  # where the checkpoint falls in the session (issue 31)
        }
        item: dict[str, Any] = {}
        for window, start, told in _windows(c, labels):
            item_window = {
                "id": item_id + ("" if window == RECENT else PREFIX_SUFFIX),
                "participants": participants,
                "turns": turns[start : c + 1],
                "focus": c - start,
                "group": sample_id,
                "metadata": metadata,
            }
            out.items.append(
                {"id": item_window["id"], "item": item_window, "labels": {EXPERT: told}}
            )
            if window == RECENT:
                item = item_window
        if "support_target" in labels and "support_strategy" in labels:
            # SSP as the benchmark asks it: the judge is told the gold target
            given_id = f"{item_id}{GIVEN_TARGET_SUFFIX}"
            out.given += 1
            out.items.append(
                {
                    "id": given_id,
                    "item": item
                    | {"id": given_id, "given": {"support_target": labels["support_target"]}},
                    "labels": {EXPERT: {"support_strategy": labels["support_strategy"]}},
                }
            )


def _windows(c: int, labels: dict[str, Any]) -> list[tuple[str, int, dict[str, Any]]]:
    """The items of checkpoint ``c`` with the context RESCUE-BENCH gives each task (shared with
    sessions: judge/domain/session.py): the checkpoint and the 3 rows before it, the whole
    prefix for the relation pattern; one item when both windows hold the same rows."""
    start = max(0, c - CONTEXT_ROWS)
    if start == 0:
        return [(RECENT, 0, labels)]
    recent = {k: v for k, v in labels.items() if window_of(k) == RECENT}
    prefix = {k: v for k, v in labels.items() if window_of(k) == PREFIX}
    out = [(RECENT, start, recent)] if recent else []
    return out + ([(PREFIX, 0, prefix)] if prefix else [])


def rescue_items(sessions: Sequence[dict[str, Any]], rubric: Rubric) -> RescueItems:
    """Labelled items for ``rubric`` from the sessions of its setting (couple or family)."""
    if rubric.setting not in _GROUP_LABELS:
        raise RescueFileError(
            f"rubric {rubric.id!r} is not a RESCUE-BENCH session rubric (setting "
            f"{rubric.setting!r}); use rescue-couple or rescue-family"
        )
    out = RescueItems()
    for session in sessions:
        if scenario_of(session) == rubric.setting:
            session_items(session, rubric, out)
        else:
            out.skipped[f"{scenario_of(session)}_session"] += 1
    return out


def load_rescue_items(path: Path, rubric: Rubric) -> list[dict[str, Any]]:
    """``judge calibrate --rescue PATH``: the labelled items, or an error naming the file."""
    built = rescue_items(read_sessions(path), rubric)
    if not built.items:
        raise RescueFileError(f"{path}: no {rubric.setting} session with labels for {rubric.id}")
    return built.items


def rescue_session(session: dict[str, Any]) -> dict[str, Any]:
    """A RESCUE-BENCH session as a session to score (``POST /v1/sessions``): its participants,
    its turns (a therapist turn's ``to`` from the row's ``target``, the group label for both
    or all clients), ``supporter`` the therapist and the session's ``sample_id`` as its id."""
    scenario = scenario_of(session)
    group = _GROUP_LABELS[scenario]
    # the participants and turns exactly as the calibration items have them
    listed = [p for p in session.get("participants") or [] if isinstance(p, str)]
    names: dict[str, str] = {}
    for row in session["rows"]:
        listed.append(str(row.get("primary_speaker") or ""))
    for name in listed:
        if name.strip() and not _is_therapist(name):
            names.setdefault(participant_id(name), name.strip())
    participants: list[dict[str, Any]] = [
        {"id": pid, "role": "client", "name": name} for pid, name in names.items()
    ]
    participants.append({"id": THERAPIST_ID, "role": "therapist"})
    turns = []
    for row in session["rows"]:
        speaker = participant_id(str(row.get("primary_speaker") or ""))
        turn: dict[str, Any] = {
            "speaker": speaker,
            "text": _fix_mojibake(str(row.get("dialogue_cleaned") or "")),
        }
        if speaker == THERAPIST_ID:
            targets = _names(row.get("target") or [])
            to = [
                "all" if t == group else participant_id(t)
                for t in targets
                if t == group or participant_id(t) in names
            ]
            if to:
                turn["to"] = list(dict.fromkeys(to))
        turns.append(turn)
    return {
        "id": str(session.get("sample_id", "session")),
        "participants": participants,
        "turns": turns,
        "supporter": THERAPIST_ID,
    }
