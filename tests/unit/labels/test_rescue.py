"""RESCUE-BENCH sessions -> labelled calibration items (``judge.labels.rescue``), on small
synthetic sessions shaped like the benchmark's rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.calibration import consensus
from judge.labels.rescue import (
    EXPERT,
    GIVEN_TARGET_SUFFIX,
    RescueFileError,
    load_rescue_items,
    read_sessions,
    rescue_items,
    scenario_of,
    support_target,
)
from judge.rubrics import RubricRegistry

REGISTRY = RubricRegistry.from_directory()
COUPLE = REGISTRY.get("rescue-couple")
FAMILY = REGISTRY.get("rescue-family")


def row(speaker: str, text: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "primary_speaker": speaker,
        "target": ["Therapist"] if speaker != "Therapist" else [],
        "dialogue_cleaned": text,
        "internal_emotion": [],
        "support_strategy": [],
        "relation_pattern": None,
    }
    if speaker == "Therapist":
        base["relation_cycle_state"] = ""
    return base | fields


def support(targets: list[str], strategy: str) -> list[dict[str, Any]]:
    return [
        {
            "provider": "Therapist",
            "target": targets,
            "strategy_type": strategy,
            "strategy_content": "",
        }
    ]


def session(rows: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    for n, r in enumerate(rows, start=1):
        r["row_index"] = n
    return {
        "sample_id": "ann_and_bo/001_s01e01",
        "scenario": "couple",
        "participants": ["Ann", "Bo Lee"],
        "rows": rows,
    } | fields


COUPLE_SESSION = session(
    [
        row("Therapist", "What brings you in?", relation_cycle_state="pursue_withdraw",
            support_strategy=support(["Ann"], "evoke")),  # opening row: no checkpoint before it
        row("Ann", "He never listens.", internal_emotion=[
            {"person": "Bo Lee", "emotion_description": "feels cornered", "intensity": 6},
            {"person": "Ann", "emotion_description": "feels unheard", "intensity": 7},
        ], relation_pattern="pursue_withdraw"),
        row("Bo Lee", "I\u00e2\u0080\u0099m listening now.", internal_emotion=[
            {"person": "Bo Lee", "emotion_description": "feels tired", "intensity": 4},
        ]),
        row("Therapist", "Bo, what happens for you when Ann says that?",
            relation_cycle_state="pursue_withdraw",
            support_strategy=support(["Bo Lee", "Therapist"], "evoke")),
        row("Therapist", "And Ann, can you tell him directly?", relation_cycle_state="",
            support_strategy=support(["Therapist"], "enact"), target=["Ann", "Bo Lee"]),
        row("Ann", "I just want you to come home.", relation_pattern=""),
        row("Therapist", "Let's slow down.", relation_cycle_state="attack_attack",
            support_strategy=support(["Ann"], "brand_new_move")),
        row("Bo Lee", "Okay."),
        row("Therapist", "Both of you, look at this together.",
            relation_cycle_state="not_a_pattern",
            support_strategy=support(["Cleo"], "detach")),
        row("Ann", "Fine."),
    ]
)  # fmt: skip


@pytest.fixture(scope="module")
def built() -> dict[int, dict[str, Any]]:
    result = rescue_items([COUPLE_SESSION], COUPLE)
    assert result.skipped == {
        "support_strategy_not_in_rubric": 1,
        "relation_pattern_not_in_rubric": 1,
        "support_target_unknown_person": 1,
    }
    # a checkpoint past the first rows has two items (its recent window, and the relation
    # pattern's whole prefix): their labels are the checkpoint's
    out: dict[int, dict[str, Any]] = {}
    for it in result.items:
        if it["item"].get("given"):
            continue
        row = it["item"]["metadata"]["row_index"]
        if row in out:
            out[row]["labels"][EXPERT] |= it["labels"][EXPERT]
        else:
            out[row] = {**it, "labels": {EXPERT: dict(it["labels"][EXPERT])}}
    return out


def test_checkpoints_carry_their_session_as_group_and_given_target_twins() -> None:
    result = rescue_items([COUPLE_SESSION], COUPLE)
    assert {it["item"]["group"] for it in result.items} == {COUPLE_SESSION["sample_id"]}
    twins = [it for it in result.items if it["item"].get("given")]
    plain = {it["id"]: it for it in result.items if not it["item"].get("given")}
    assert result.given == len(twins) > 0
    for twin in twins:
        original = plain[twin["id"].removesuffix(GIVEN_TARGET_SUFFIX)]
        gold = original["labels"][EXPERT]
        # the judges are told the gold target and asked for the strategy only
        assert twin["item"]["given"] == {"support_target": gold["support_target"]}
        assert twin["labels"] == {EXPERT: {"support_strategy": gold["support_strategy"]}}
        assert twin["item"]["turns"] == original["item"]["turns"]
    with_both = [
        i
        for i in plain.values()
        if {"support_target", "support_strategy"} <= set(i["labels"][EXPERT])
    ]
    assert len(with_both) == len(twins)


def labels(built: dict[int, dict[str, Any]], row_index: int) -> dict[str, Any]:
    out: dict[str, Any] = built[row_index]["labels"][EXPERT]
    return out


def test_a_client_row_before_the_therapist(built: dict[int, dict[str, Any]]) -> None:
    assert labels(built, 2) == {"intervene_now": False, "relation_pattern": "pursue_withdraw",
                                "focus_emotion": "feels unheard", "focus_intensity": 7}  # fmt: skip
    # row 3 is followed by the therapist's row 4: its state, target (Therapist dropped) and
    # strategy label checkpoint 3; the emotion is the speaker's own
    assert labels(built, 3) == {
        "intervene_now": True,
        "relation_pattern": "pursue_withdraw",
        "support_target": "Bo_Lee",
        "support_strategy": "evoke",
        "focus_emotion": "feels tired",
        "focus_intensity": 4,
    }


def test_the_item_is_the_conversation_up_to_the_checkpoint(
    built: dict[int, dict[str, Any]],
) -> None:
    item = built[3]["item"]
    assert item["id"] == built[3]["id"] == "ann_and_bo/001_s01e01#3"
    assert item["focus"] == 2
    assert [t["speaker"] for t in item["turns"]] == ["therapist", "Ann", "Bo_Lee"]
    assert item["turns"][2]["text"] == "I\u2019m listening now."  # mojibake repaired
    assert item["participants"] == [
        {"id": "Ann", "role": "client", "name": "Ann"},
        {"id": "Bo_Lee", "role": "client", "name": "Bo Lee"},
        {"id": "therapist", "role": "therapist"},
    ]
    assert item["metadata"] == {
        "sample_id": "ann_and_bo/001_s01e01",
        "row_index": 3,
        "scenario": "couple",
        "rows": 10,
    }


def test_a_therapist_row_before_a_therapist_row(built: dict[int, dict[str, Any]]) -> None:
    # row 5: no target on its support item, so the row target (two people) -> Couple; its
    # empty state gives no pattern; a therapist checkpoint is no intervene-now candidate
    assert labels(built, 4) == {"support_target": "Couple", "support_strategy": "enact"}


def test_empty_patterns_and_unknown_labels_are_skipped(built: dict[int, dict[str, Any]]) -> None:
    # row 6's own empty relation_pattern wins over row 7's state; row 7's strategy is unknown
    assert labels(built, 6) == {"intervene_now": True, "support_target": "Ann"}
    # row 9: a pattern outside the taxonomy and a target who is not in the session
    assert labels(built, 8) == {"intervene_now": True, "support_strategy": "detach"}
    assert 1 not in built  # the opening therapist row has no checkpoint before it
    assert 5 not in built  # a therapist row followed by a client row has nothing to label
    assert 10 not in built  # the last row has no next row and no emotion


def test_every_built_label_passes_the_calibration_checks(
    built: dict[int, dict[str, Any]],
) -> None:
    from judge.services.calibrations import normalise_labels

    for it in built.values():
        participants = tuple(p["id"] for p in it["item"]["participants"] if p["role"] == "client")
        clean = normalise_labels(COUPLE, it["labels"], "x", participants)[EXPERT]
        for dim_id, value in it["labels"][EXPERT].items():
            ranked = dim_id in ("support_target", "support_strategy")
            assert clean[dim_id] == ([value] if ranked else value)  # one gold label, ranked
            if dim_id != "focus_emotion":
                assert consensus(COUPLE.dimension(dim_id), [clean[dim_id]]) == value


def test_scenario_and_group_labels() -> None:
    family = session(
        [
            row("Mum", "They never help."),
            row("Therapist", "Let's hear from everyone.",
                relation_cycle_state="escalation_conflict",
                support_strategy=support(["Mum", "Kid"], "join")),
        ],
        sample_id="family_therapy/009/merged",
        scenario="family",
        participants=["Mum", "Kid"],
    )  # fmt: skip
    assert scenario_of(family) == "family"
    assert scenario_of(COUPLE_SESSION) == "couple"
    assert scenario_of(session([row("Ann", "x", target=["Family"])])) == "family"
    assert support_target(family["rows"][1], "Family") == "Family"
    to_couple = row("Therapist", "x", support_strategy=support(["Couple"], "track"))
    assert support_target(to_couple, "Couple") == "Couple"
    assert support_target(row("Therapist", "x"), "Couple") is None
    built = rescue_items([COUPLE_SESSION, family], FAMILY)
    assert built.skipped["couple_session"] == 1
    item, twin = built.items
    assert twin["item"]["given"] == {"support_target": "Family"}
    assert item["labels"][EXPERT] == {
        "intervene_now": True,
        "relation_pattern": "escalation_conflict",
        "support_target": "Family",
        "support_strategy": "join",
    }


def test_files_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "rescue.jsonl"
    path.write_text(json.dumps(COUPLE_SESSION) + "\n\n", encoding="utf-8")
    assert len(read_sessions(path)) == 1
    assert len(load_rescue_items(path, COUPLE)) == 5 + 2  # two given-target twins
    with pytest.raises(RescueFileError, match="no family session"):
        load_rescue_items(path, FAMILY)
    with pytest.raises(RescueFileError, match="not a RESCUE-BENCH session rubric"):
        load_rescue_items(path, REGISTRY.get("epitome"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"rows": []}\n{oops\n', encoding="utf-8")
    with pytest.raises(RescueFileError, match="line 2: invalid JSON"):
        read_sessions(bad)
    bad.write_text('{"sample_id": "x"}\n', encoding="utf-8")
    with pytest.raises(RescueFileError, match="line 1: not a RESCUE-BENCH session"):
        read_sessions(bad)
