"""The supporter across a session (pure): barrel, ripple and timing measures computed from the
per-checkpoint judgments (README, "Sessions", defines each one with its inputs).

Barrel: a group is only as well as its most distressed member is cared for. Ripple: one
member's distress spreads through the others. Each measure is flagged by the reliability of
the judgments it rests on (the worst level among them) and is at least caution when the
supporter's addressees were inferred rather than given, or when there is nothing to measure.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from empathy_judge_client.session_view import (
    Level,
    Measure,
    MeasureFlag,
    MemberPoint,
    SupporterMeasures,
    Trajectory,
    TurnRef,
    worst,
)

__all__ = ["RIPPLE_WINDOW", "RISE", "most_distressed", "supporter_measures"]

#: a change of judged intensity (0-10) of at least this much between a member's consecutive
#: checkpoints is a rise or a fall
RISE = 2.0
#: a rise is followed by another member's rise when it comes within this many turns
RIPPLE_WINDOW = 6
INTENSITY = "focus_intensity"
INTERVENE = "intervene_now"


def _flag(levels: Sequence[Level], rests_on: str, *, inferred: bool, n: int) -> MeasureFlag:
    reasons: list[str] = []
    found = list(levels)
    if inferred:
        reasons.append("addressing_inferred")
        found.append("caution")
    if n == 0:
        reasons.append("insufficient_data")
        found.append("caution")
    level = worst(found)
    if level != "trusted" and any(lv != "trusted" for lv in levels):
        reasons.insert(0, f"{rests_on}_{worst(list(levels))}")
    return MeasureFlag(level=level, reasons=reasons, rests_on=[rests_on])


def _series(members: dict[str, list[MemberPoint]]) -> dict[str, list[MemberPoint]]:
    return {m: [p for p in ps if p.intensity is not None] for m, ps in members.items()}


def most_distressed(members: dict[str, list[MemberPoint]]) -> str | None:
    """The member with the highest judged intensity at any checkpoint (ties: the higher
    mean, then the member judged first)."""
    best: tuple[float, float, int] | None = None
    chosen = None
    for member, points in _series(members).items():
        if not points:
            continue
        values = [p.intensity for p in points if p.intensity is not None]
        key = (max(values), sum(values) / len(values), -points[0].index)
        if best is None or key > best:
            best, chosen = key, member
    return chosen


def _barrel(
    turns: Sequence[TurnRef], supporter: str, member: str, levels: list[Level]
) -> dict[str, Measure]:
    start = next(t.index for t in turns if t.speaker == member)
    later = [t for t in turns if t.speaker == supporter and t.index > start]
    inferred = any(t.to_inferred for t in later)
    hits = [t.index for t in later if member in t.to]
    delay = hits[0] - start if hits else None
    stops = [start, *hits, len(turns)]
    longest = max(b - a for a, b in itertools.pairwise(stops))
    share = len(hits) / len(later) if later else None

    def measure(value: float | None, unit: str, n: int) -> Measure:
        flag = _flag(levels, INTENSITY, inferred=inferred, n=n)
        if value is None and n and "never_addressed" not in flag.reasons:
            flag.reasons.append("never_addressed")
        return Measure(value=value, unit=unit, flag=flag, n=n)

    return {
        "first_address_delay": measure(delay, "turns", len(later)),
        "address_share": measure(share, "share of supporter turns", len(later)),
        "longest_unaddressed": measure(longest, "turns", len(turns) - start),
    }


def _steps(points: list[MemberPoint], sign: int) -> list[tuple[MemberPoint, MemberPoint]]:
    """Consecutive point pairs whose intensity moved by at least RISE in ``sign``'s way."""
    return [
        (a, b)
        for a, b in itertools.pairwise(points)
        if a.intensity is not None
        and b.intensity is not None
        and sign * (b.intensity - a.intensity) >= RISE
    ]


def _ripple(
    turns: Sequence[TurnRef], supporter: str, series: dict[str, list[MemberPoint]]
) -> dict[str, Measure]:
    rises = {m: _steps(ps, +1) for m, ps in series.items()}
    followed, rise_levels = 0, []
    total_rises = 0
    for member, steps in rises.items():
        for a, b in steps:
            total_rises += 1
            rise_levels += [a.level, b.level]
            others = [(x, y) for m, s in rises.items() if m != member for x, y in s]
            if any(b.index < y.index <= b.index + RIPPLE_WINDOW for _, y in others):
                followed += 1
    falls = [(m, a, b) for m, ps in series.items() for a, b in _steps(ps, -1)]
    preceded, fall_levels, inferred = 0, [], False
    for member, a, b in falls:
        fall_levels += [a.level, b.level]
        between = [t for t in turns if t.speaker == supporter and a.index < t.index < b.index]
        inferred = inferred or any(t.to_inferred for t in between)
        if any(member in t.to for t in between):
            preceded += 1
    return {
        "rise_followed_share": Measure(
            value=followed / total_rises if total_rises else None,
            unit="share of rises",
            flag=_flag(rise_levels, INTENSITY, inferred=False, n=total_rises),
            n=total_rises,
        ),
        "intervention_before_fall_share": Measure(
            value=preceded / len(falls) if falls else None,
            unit="share of falls",
            flag=_flag(fall_levels, INTENSITY, inferred=inferred, n=len(falls)),
            n=len(falls),
        ),
    }


def _timing(trajectory: Trajectory) -> dict[str, Measure]:
    pairs = [
        (p.intervene_now, p.supporter_next, p.level)
        for p in trajectory.support
        if p.intervene_now is not None and p.supporter_next is not None
    ]
    levels = [lv for *_, lv in pairs]
    n = len(pairs)
    agree = sum(1 for now, spoke, _ in pairs if now == spoke)
    missed = sum(1 for now, spoke, _ in pairs if now and not spoke)
    premature = sum(1 for now, spoke, _ in pairs if spoke and not now)

    def measure(value: float | None, unit: str) -> Measure:
        return Measure(
            value=value, unit=unit, flag=_flag(levels, INTERVENE, inferred=False, n=n), n=n
        )

    return {
        "timing_agreement": measure(agree / n if n else None, "share of checkpoints"),
        "missed_openings": measure(missed if n else None, "checkpoints"),
        "premature_turns": measure(premature if n else None, "checkpoints"),
    }


def supporter_measures(
    turns: Sequence[TurnRef], supporter: str, trajectory: Trajectory
) -> SupporterMeasures:
    """Every measure of ``supporter`` over the session's ``turns``, from its ``trajectory``."""
    series = _series(trajectory.members)
    member = most_distressed(trajectory.members)
    levels = [p.level for ps in series.values() for p in ps]
    return SupporterMeasures(
        supporter=supporter,
        most_distressed=member,
        barrel={} if member is None else _barrel(turns, supporter, member, levels),
        ripple=_ripple(turns, supporter, series),
        timing=_timing(trajectory),
    )
