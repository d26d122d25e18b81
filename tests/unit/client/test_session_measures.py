"""The trajectory, the supporter's barrel/ripple/timing measures and the timeline, on
constructed sessions whose answers are worked out by hand in the comments."""

from __future__ import annotations

from typing import Any

import pytest

from empathy_judge_client.calibration_report import RubricRef
from empathy_judge_client.session_view import (
    Checkpoint,
    CheckpointDimension,
    Level,
    SessionView,
    TurnRef,
    Window,
)
from empathy_judge_client.supporter_measures import most_distressed, supporter_measures
from empathy_judge_client.timeline import WIDTH, timeline
from empathy_judge_client.trajectory import relation_transitions, trajectory

T = "therapist"


def dim(score: Any, level: Level = "trusted") -> CheckpointDimension:
    return CheckpointDimension(score=score, level=level)


def point(
    index: int,
    speaker: str,
    intensity: float | None,
    *,
    pattern: str | None = None,
    now: bool | None = None,
    nxt: bool | None = None,
    level: Level = "trusted",
) -> Checkpoint:
    dims = {"focus_intensity": dim(intensity, level), "focus_emotion": dim(f"feels {index}")}
    if pattern is not None:
        dims["relation_pattern"] = dim(pattern)
    if now is not None:
        dims["intervene_now"] = dim(now, level)
        dims["support_target"] = dim([speaker, "Couple"])
    return Checkpoint(
        index=index,
        speaker=speaker,
        status="completed",
        windows={"recent": Window(start=max(0, index - 3), end=index + 1)},
        dimensions=dims,
        supporter_next=nxt,
    )


def turns(spec: str, to: dict[int, list[str]] | None = None) -> list[TurnRef]:
    """``spec``: one letter per turn, A/B the clients, T the therapist."""
    names = {"A": "A", "B": "B", "T": T}
    given = to or {}
    return [TurnRef(index=i, speaker=names[c], to=given.get(i, [])) for i, c in enumerate(spec)]


def test_transitions_count_stays_and_list_changes() -> None:
    # pw, pw, (none), aa, rs: pw->pw stays, pw->aa and aa->rs change; None is skipped
    changes, counts = relation_transitions([(0, "pw"), (2, "pw"), (3, None), (5, "aa"), (7, "rs")])
    assert [(t.at, t.source, t.target) for t in changes] == [(5, "pw", "aa"), (7, "aa", "rs")]
    assert counts == {"pw": {"pw": 1, "aa": 1}, "aa": {"rs": 1}}


def test_trajectory_per_member_and_per_checkpoint() -> None:
    cps = [
        point(0, "A", 3, pattern="pw", now=False, nxt=False),
        point(1, "B", 5, pattern="aa", now=True, nxt=True),
        point(3, "A", 7, pattern="aa"),
    ]
    got = trajectory(cps)
    assert [(p.index, p.intensity) for p in got.members["A"]] == [(0, 3.0), (3, 7.0)]
    assert [(p.index, p.emotion) for p in got.members["B"]] == [(1, "feels 1")]
    assert [p.pattern for p in got.relation] == ["pw", "aa", "aa"]
    assert [(t.source, t.target) for t in got.transitions] == [("pw", "aa")]
    assert [(s.index, s.intervene_now, s.support_target) for s in got.support] == [
        (0, False, "A"),
        (1, True, "B"),
    ]


def test_barrel_on_a_known_session() -> None:
    # turns: 0 A, 1 B, 2 T->A, 3 B, 4 T->B, 5 B, 6 A, 7 T->B; B peaks at 8: most distressed.
    # B first speaks at 1; supporter turns after 1: 2, 4, 7; those addressing B: 4 and 7.
    # first_address_delay = 4 - 1 = 3; address_share = 2/3; stretches 1->4, 4->7, 7->8
    # (session end): longest_unaddressed = 3
    ts = turns("ABTBTBAT", {2: ["A"], 4: ["B"], 7: ["B"]})
    cps = [point(0, "A", 4), point(1, "B", 6), point(3, "B", 8), point(5, "B", 5), point(6, "A", 4)]
    got = supporter_measures(ts, T, trajectory(cps))
    assert got.most_distressed == "B"
    barrel = {k: m.value for k, m in got.barrel.items()}
    assert barrel == {
        "first_address_delay": 3,
        "address_share": pytest.approx(2 / 3),
        "longest_unaddressed": 3,
    }
    assert all(m.flag.level == "trusted" for m in got.barrel.values())


def test_never_addressed_and_inferred_addressing_are_flagged() -> None:
    ts = turns("ABTAT", {2: ["A"], 4: ["A"]})
    ts[4] = TurnRef(index=4, speaker=T, to=["A"], to_inferred=True)
    got = supporter_measures(ts, T, trajectory([point(0, "A", 2), point(1, "B", 9)]))
    delay = got.barrel["first_address_delay"]
    assert delay.value is None
    assert "never_addressed" in delay.flag.reasons
    assert delay.flag.level == "caution"
    assert "addressing_inferred" in delay.flag.reasons
    # B first speaks at 1 and is never addressed: one stretch to the end, 5 - 1
    assert got.barrel["longest_unaddressed"].value == 4


def test_most_distressed_ties_go_to_the_higher_mean() -> None:
    got = trajectory([point(0, "A", 8), point(1, "B", 8), point(2, "A", 2), point(3, "B", 6)])
    assert most_distressed(got.members) == "B"


def test_ripple_rises_followed_and_falls_preceded() -> None:
    # A rises 2 -> 6 at turn 2; B rises 3 -> 7 at turn 5 (within 6 turns): followed.
    # B's rise at 5 is followed by no rise of A: 1 of 2 rises followed.
    # A falls 6 -> 3 between turns 2 and 8 with the supporter addressing A at 6: preceded.
    # B falls 7 -> 4 between 5 and 9 with no supporter turn to B between: not preceded.
    ts = turns("ABABTBTTAB", {4: ["B"], 6: ["A"], 7: ["A"]})
    ts[4] = TurnRef(index=4, speaker=T, to=["B"])  # before B's rise: does not count for the fall
    cps = [
        point(0, "A", 2),
        point(1, "B", 3),
        point(2, "A", 6),
        point(5, "B", 7),
        point(8, "A", 3, level="caution"),
        point(9, "B", 4),
    ]
    got = supporter_measures(ts, T, trajectory(cps))
    assert got.ripple["rise_followed_share"].value == pytest.approx(0.5)
    assert got.ripple["rise_followed_share"].n == 2
    fall = got.ripple["intervention_before_fall_share"]
    assert fall.value == pytest.approx(0.5)
    assert fall.n == 2
    # one of the falls rests on a caution intensity judgment
    assert fall.flag.level == "caution"
    assert fall.flag.reasons[0] == "focus_intensity_caution"


def test_timing_against_intervene_now() -> None:
    # judged yes/spoke, yes/silent (missed), no/spoke (premature), no/silent
    cps = [
        point(0, "A", 3, now=True, nxt=True),
        point(2, "A", 3, now=True, nxt=False),
        point(3, "B", 3, now=False, nxt=True),
        point(5, "B", 3, now=False, nxt=False, level="untrusted"),
    ]
    got = supporter_measures(turns("ATABTB"), T, trajectory(cps))
    assert got.timing["timing_agreement"].value == pytest.approx(0.5)
    assert got.timing["missed_openings"].value == 1
    assert got.timing["premature_turns"].value == 1
    assert got.timing["timing_agreement"].flag.level == "untrusted"


def test_no_data_is_not_a_measure() -> None:
    got = supporter_measures(turns("AT"), T, trajectory([]))
    assert got.most_distressed is None
    assert got.barrel == {}
    assert got.timing["timing_agreement"].value is None
    assert got.timing["timing_agreement"].flag.reasons == ["insufficient_data"]


def test_timeline_fits_80_columns_and_says_simulated() -> None:
    cps = [
        point(0, "A_very_long_participant_name", 4, pattern="pursue_withdraw", now=True, nxt=True),
        point(2, "B", 9, pattern="mixed_transition_and_something_long", now=False, nxt=False),
    ]
    cps.append(
        Checkpoint(
            index=3, speaker="A", status="queued", windows={"recent": Window(start=0, end=4)}
        )
    )
    ts = turns("ATBA", {1: ["A"]})
    traj = trajectory(cps)
    view = SessionView(
        id="s" * 32,
        batch_id="b" * 32,
        status="running",
        rubric=RubricRef(id="rescue-couple", version="1.0.0", hash="h"),
        panel_name="default",
        supporter=T,
        created_at="2026-01-01T00:00:00",
        total=6,
        completed=4,
        failed=0,
        simulated=True,
        turns=ts,
        checkpoints=cps,
        trajectory=traj,
        measures=supporter_measures(ts, T, traj),
    )
    lines = timeline(view)
    assert "SIMULATED JUDGES" in lines[0]
    assert all(len(line) <= WIDTH for line in lines), [ln for ln in lines if len(ln) > WIDTH]
    assert any("pursue_withdraw -> mixed_transition" in line for line in lines)
    assert any("(queued)" in line for line in lines)
    assert any(line.strip().startswith("barrel") for line in lines)
