"""A session's trajectory from its judged checkpoints (pure): each member's focus emotion and
intensity over time, the relation pattern per checkpoint and its transitions, intervene-now
and the top support target per checkpoint."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from empathy_judge_client.session_view import (
    Checkpoint,
    CheckpointDimension,
    Level,
    MemberPoint,
    RelationPoint,
    SupportPoint,
    Trajectory,
    Transition,
    worst,
)

__all__ = ["relation_transitions", "top_label", "trajectory"]


def top_label(score: Any) -> str | None:
    """A nominal score as it is, a ranked one's first label."""
    if isinstance(score, list):
        return str(score[0]) if score else None
    return None if score is None else str(score)


def _number(score: Any) -> float | None:
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None
    return float(score)


def _text(found: CheckpointDimension | None) -> str | None:
    return None if found is None or found.score is None else str(found.score)


def _yes_no(found: CheckpointDimension | None) -> bool | None:
    return found.score if found is not None and isinstance(found.score, bool) else None


def _level(found: Sequence[CheckpointDimension | None]) -> Level:
    return worst([d.level for d in found if d is not None])


def relation_transitions(
    points: Sequence[tuple[int, str | None]],
) -> tuple[list[Transition], dict[str, dict[str, int]]]:
    """Transitions between consecutive labelled points (``None`` points are skipped) and
    their counts, ``counts[source][target]``; staying in a pattern counts as ``source ->
    source`` (the diagonal), a change is listed as a transition."""
    changes: list[Transition] = []
    counts: dict[str, dict[str, int]] = {}
    labelled = [(at, p) for at, p in points if p is not None]
    for (_, source), (at, target) in itertools.pairwise(labelled):
        row = counts.setdefault(source, {})
        row[target] = row.get(target, 0) + 1
        if source != target:
            changes.append(Transition(at=at, source=source, target=target))
    return changes, counts


def trajectory(checkpoints: Sequence[Checkpoint]) -> Trajectory:
    """The trajectory of the completed checkpoints, in session order."""
    members: dict[str, list[MemberPoint]] = {}
    relation: list[RelationPoint] = []
    support: list[SupportPoint] = []
    done = sorted((c for c in checkpoints if c.status == "completed"), key=lambda c: c.index)
    for c in done:
        emotion = c.dimensions.get("focus_emotion")
        intensity = c.dimensions.get("focus_intensity")
        if emotion is not None or intensity is not None:
            members.setdefault(c.speaker, []).append(
                MemberPoint(
                    index=c.index,
                    emotion=None
                    if emotion is None or emotion.score is None
                    else str(emotion.score),
                    intensity=None if intensity is None else _number(intensity.score),
                    level=_level([intensity]),
                )
            )
        pattern = c.dimensions.get("relation_pattern")
        if pattern is not None:
            relation.append(
                RelationPoint(index=c.index, pattern=top_label(pattern.score), level=pattern.level)
            )
        now = c.dimensions.get("intervene_now")
        target = c.dimensions.get("support_target")
        if now is not None or target is not None:
            support.append(
                SupportPoint(
                    index=c.index,
                    intervene_now=now.score
                    if now is not None and isinstance(now.score, bool)
                    else None,
                    support_target=None if target is None else top_label(target.score),
                    supporter_next=c.supporter_next,
                    level=_level([now, target]),
                )
            )
    transitions, counts = relation_transitions([(p.index, p.pattern) for p in relation])
    # every field given: the wire form carries the fields a builder set (wire.wire_json)
    return Trajectory(
        members=members,
        relation=relation,
        transitions=transitions,
        transition_counts=counts,
        support=support,
    )
