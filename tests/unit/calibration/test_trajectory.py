"""Trajectory calibration (issue 31): transition matrices, their distance and the accuracy by
checkpoint and by tenth of the session, against values worked out by hand."""

from __future__ import annotations

import pytest

from judge.calibration import TrajectoryPoint, trajectory_calibration
from judge.calibration._trajectory import segment_of, transition_counts, transition_distance

PW, AA, RS = "pursue_withdraw", "attack_attack", "repair_softening"


def test_segments_split_a_session_in_tenths() -> None:
    # 20 rows: rows 1-2 are the first tenth, 19-20 the last
    assert [segment_of(r, 20) for r in (1, 2, 3, 19, 20)] == [0, 0, 1, 9, 9]
    # 7 rows: row r falls in floor((r - 1) * 10 / 7)
    assert [segment_of(r, 7) for r in range(1, 8)] == [0, 1, 2, 4, 5, 7, 8]


def test_transition_counts_and_distance_by_hand() -> None:
    experts = transition_counts([[PW, PW, AA, RS], [AA, RS]])
    assert experts == {PW: {PW: 1, AA: 1}, AA: {RS: 2}}
    judges = transition_counts([[PW, AA, AA, RS], [AA, AA]])
    assert judges == {PW: {AA: 1}, AA: {AA: 2, RS: 1}}
    # row PW: experts (1/2 PW, 1/2 AA), judges (0, 1): TV = 0.5 * (0.5 + 0.5) = 0.5
    # row AA: experts (RS 1), judges (AA 2/3, RS 1/3): TV = 0.5 * (2/3 + 2/3) = 2/3
    assert transition_distance(experts, judges) == pytest.approx((0.5 + 2 / 3) / 2)
    # a source the judges never leave counts 1; identical matrices are 0
    assert transition_distance(experts, {AA: {RS: 5}}) == pytest.approx((1 + 0) / 2)
    assert transition_distance(experts, experts) == 0.0
    assert transition_distance({}, judges) is None


def point(session: str, row: int, length: int, gold: str | None, pred: str | None):  # type: ignore[no-untyped-def]
    return TrajectoryPoint(session=session, row=row, length=length, gold=gold, pred=pred)


def test_accuracy_by_checkpoint_and_segment_by_hand() -> None:
    points = [
        # session a, 10 rows: right, wrong, right (rows 1, 5, 10 -> segments 0, 4, 9)
        point("a", 1, 10, PW, PW),
        point("a", 5, 10, AA, PW),
        point("a", 10, 10, RS, RS),
        # session b, 4 rows: right, right (rows 1, 4 -> segments 0, 7); a row without a
        # panel label is left out
        point("b", 1, 4, PW, PW),
        point("b", 3, 4, PW, None),
        point("b", 4, 4, AA, AA),
    ]
    got = trajectory_calibration("relation_pattern", points, resamples=100)
    assert (got.n, got.units, got.accuracy) == (5, 2, pytest.approx(0.8))
    # two sessions are too few for an interval
    assert got.accuracy_ci95 is None
    by_k = {a.key: (a.n, a.units, a.accuracy) for a in got.by_checkpoint}
    assert by_k == {1: (2, 2, 1.0), 2: (2, 2, 0.5), 3: (1, 1, 1.0)}
    by_segment = {a.key: (a.n, a.accuracy) for a in got.segments}
    assert by_segment == {0: (2, 1.0), 4: (1, 0.0), 7: (1, 1.0), 9: (1, 1.0)}
    # experts: a PW->AA->RS, b PW->AA; judges: a PW->PW->RS, b PW->AA
    assert got.expert_transitions == {PW: {AA: 2}, AA: {RS: 1}}
    assert got.judge_transitions == {PW: {PW: 1, RS: 1, AA: 1}}
    # row PW: experts (AA 1), judges (1/3 each of PW, RS, AA): 0.5 * (1/3 + 1/3 + 2/3) = 2/3;
    # row AA: the judges never left AA -> 1. Mean 5/6
    assert got.distance == pytest.approx(round(5 / 6, 4))
    assert got.distance_ci95 is None


def test_distance_interval_over_sessions() -> None:
    points = []
    for s in range(8):
        # experts: PW, AA, RS in every session; judges miss the middle step in half of them
        middle = AA if s % 2 else PW
        for row, (gold, pred) in enumerate(((PW, PW), (AA, middle), (RS, RS)), start=1):
            points.append(point(f"s{s}", row, 3, gold, pred))
    got = trajectory_calibration("relation_pattern", points, resamples=200)
    assert got.units == 8
    # experts: PW->AA x8, AA->RS x8. judges: odd sessions PW->AA, AA->RS (x4); even ones
    # PW->PW, PW->RS (x4). Row PW: judges PW 4/12, AA 4/12, RS 4/12 vs experts AA 1:
    # TV = 0.5 * (1/3 + 2/3 + 1/3) = 2/3. Row AA: judges RS 1 -> 0. Mean 1/3.
    assert got.distance == pytest.approx(round(1 / 3, 4))
    assert got.distance_ci95 is not None
    low, high = got.distance_ci95
    assert low is not None
    assert high is not None
    assert low <= 1 / 3 <= high
    assert got.accuracy == pytest.approx(round(20 / 24, 4))
    assert got.accuracy_ci95 is not None
