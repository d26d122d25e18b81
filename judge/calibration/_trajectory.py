"""Trajectory calibration (pure; issue 31): how the panel follows a nominal dimension (the
relation pattern) across whole sessions, against the experts. RESCUE-BENCH's analysis is
about time: patterns change non-linearly and accuracy rises and falls across the ten segments
of a session, so a label judged once is a snapshot. Units = sessions: every interval
resamples whole sessions.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from empathy_judge_client.trajectory_calibration import Accuracy, TrajectoryCalibration
from judge.calibration._rater_stats import MIN_RESAMPLING_UNITS, RESAMPLE_SEED, ci, finite
from judge.reliability import bootstrap_ratio_ci

__all__ = [
    "SEGMENTS",
    "TrajectoryPoint",
    "segment_of",
    "trajectory_calibration",
    "transition_counts",
    "transition_distance",
]

SEGMENTS = 10
Counts = dict[str, dict[str, int]]


@dataclass(frozen=True)
class TrajectoryPoint:
    """One checkpoint: its session, its row (1-based) among the session's ``length`` rows,
    the experts' label and the panel's (None: none)."""

    session: str
    row: int
    length: int
    gold: str | None
    pred: str | None


def segment_of(row: int, length: int) -> int:
    """The tenth (0-9) of a ``length``-row session that 1-based ``row`` falls in."""
    return min(SEGMENTS - 1, (row - 1) * SEGMENTS // max(1, length))


def transition_counts(sequences: Sequence[Sequence[str]]) -> Counts:
    """counts[a][b]: how often label b follows label a in a sequence (a == b: staying)."""
    out: Counts = {}
    for seq in sequences:
        for a, b in itertools.pairwise(seq):
            row = out.setdefault(a, {})
            row[b] = row.get(b, 0) + 1
    return out


def transition_distance(experts: Counts, judges: Counts) -> float | None:
    """Mean over the experts' source labels of the total variation distance between the two
    row-normalised transition distributions; a source the judges never left counts 1."""
    rows = [a for a, row in experts.items() if sum(row.values())]
    if not rows:
        return None
    total = 0.0
    for a in rows:
        e, j = experts[a], judges.get(a, {})
        e_n, j_n = sum(e.values()), sum(j.values())
        if not j_n:
            total += 1.0
            continue
        labels = set(e) | set(j)
        total += 0.5 * sum(abs(e.get(b, 0) / e_n - j.get(b, 0) / j_n) for b in labels)
    return total / len(rows)


def _accuracy(key: int, points: Sequence[TrajectoryPoint], resamples: int) -> Accuracy:
    hits = [float(p.pred == p.gold) for p in points]
    groups = [p.session for p in points]
    units = len(set(groups))
    value = finite(sum(hits) / len(hits)) if hits else None
    interval = None
    if hits and units >= MIN_RESAMPLING_UNITS:
        low, high = ci(
            bootstrap_ratio_ci(
                hits, [1.0] * len(hits), groups=groups, n_resamples=resamples, seed=RESAMPLE_SEED
            )
        )
        interval = (low, high)
    return Accuracy(key=key, n=len(hits), units=units, accuracy=value, ci95=interval)


def _sequences(by_session: dict[str, list[TrajectoryPoint]]) -> tuple[list[list[str]], ...]:
    gold = [[p.gold for p in ps if p.gold is not None] for ps in by_session.values()]
    pred = [[p.pred for p in ps if p.pred is not None] for ps in by_session.values()]
    return gold, pred


def _distance_interval(
    sessions: list[list[TrajectoryPoint]], resamples: int
) -> tuple[float | None, float | None] | None:
    """Percentile interval of the distance over sessions drawn with replacement. (The
    distance is not a ratio of per-item sums, so ``bootstrap_ratio_ci`` does not apply; the
    draws are numpy's, seeded like every other interval.)"""
    if len(sessions) < MIN_RESAMPLING_UNITS:
        return None
    rng = np.random.default_rng(RESAMPLE_SEED)
    values = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(sessions), len(sessions))
        picked = {str(i): sessions[k] for i, k in enumerate(drawn)}
        gold, pred = _sequences(picked)
        value = transition_distance(transition_counts(gold), transition_counts(pred))
        if value is not None:
            values.append(value)
    if not values:
        return None
    low, high = np.percentile(values, [2.5, 97.5])
    return finite(float(low)), finite(float(high))


def trajectory_calibration(
    dimension: str, points: Sequence[TrajectoryPoint], *, resamples: int = 500
) -> TrajectoryCalibration:
    """The trajectory figures over the checkpoints where both the experts and the panel gave
    a label (transitions run over those checkpoints, in row order, in each session)."""
    both = sorted(
        (p for p in points if p.gold is not None and p.pred is not None),
        key=lambda p: (p.session, p.row),
    )
    by_session: dict[str, list[TrajectoryPoint]] = {}
    for p in both:
        by_session.setdefault(p.session, []).append(p)
    overall = _accuracy(0, both, resamples)
    ordinals: dict[int, list[TrajectoryPoint]] = {}
    for ps in by_session.values():
        for k, p in enumerate(ps, start=1):
            ordinals.setdefault(k, []).append(p)
    segments: dict[int, list[TrajectoryPoint]] = {}
    for p in both:
        segments.setdefault(segment_of(p.row, p.length), []).append(p)
    gold, pred = _sequences(by_session)
    experts, judges = transition_counts(gold), transition_counts(pred)
    return TrajectoryCalibration(
        dimension=dimension,
        n=overall.n,
        units=overall.units,
        accuracy=overall.accuracy,
        accuracy_ci95=overall.ci95,
        by_checkpoint=[_accuracy(k, ps, resamples) for k, ps in sorted(ordinals.items())],
        segments=[_accuracy(s, ps, resamples) for s, ps in sorted(segments.items())],
        expert_transitions=experts,
        judge_transitions=judges,
        distance=finite(transition_distance(experts, judges)),
        distance_ci95=_distance_interval(list(by_session.values()), resamples),
    )
