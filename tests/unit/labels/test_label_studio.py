"""The Label Studio labelling config generated from a rubric, and its exported annotations
read back as expert labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from judge.labels.label_studio import (
    labelling_config,
    pseudonym,
    read_annotations,
    studio_tasks,
)
from judge.labels.tasks import LabelSink, tasks_from_file
from judge.rubrics import RubricRegistry
from judge.sample_conversations import load_sample
from tests.fixtures.label_studio import choice

REGISTRY = RubricRegistry.from_directory()
COUPLE = REGISTRY.get("rescue-couple")


def _tasks(tmp_path: Path) -> list[Any]:
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(load_sample("couple_session.json")) + "\n", encoding="utf-8")
    return tasks_from_file(path, COUPLE)


def test_config_has_a_control_per_scale_type() -> None:
    view = ET.fromstring(labelling_config(COUPLE))
    controls = {el.get("name"): el for el in view if el.tag in ("Choices", "TextArea")}
    intensity = controls["focus_intensity"]
    assert [c.get("value") for c in intensity] == [str(v) for v in range(11)]
    assert all(c.get("hint") for c in intensity)  # the anchors
    assert [c.get("value") for c in controls["intervene_now"]] == ["yes", "no"]
    relation = [c.get("value") for c in controls["relation_pattern"]]
    assert relation == [label.id for label in COUPLE.dimension("relation_pattern").scale.labels]
    assert controls["focus_emotion"].tag == "TextArea"
    strategy_k = COUPLE.dimension("support_strategy").scale.k  # type: ignore[union-attr]
    ranks = [n for n in controls if n.startswith("support_strategy__")]
    assert ranks == [f"support_strategy__{r}" for r in range(1, strategy_k + 1)]
    # the support target's options are the session's participants: given per task
    assert controls["support_target__1"].get("value") == "$support_target_options"
    assert all(el.get("toName") == "conversation" for el in controls.values())


def test_tasks_carry_the_conversation_and_the_participant_options(tmp_path: Path) -> None:
    (task,) = studio_tasks(COUPLE, _tasks(tmp_path))
    data = task["data"]
    assert data["task_id"] == "sample-couple-1"
    assert data["conversation"].startswith("<conversation>\n[0] therapist (therapist):")
    assert [o["value"] for o in data["support_target_options"]] == ["dana", "lee", "Couple"]
    assert set(data) == {"task_id", "conversation", "support_target_options"}


def test_annotations_become_labels_per_user(tmp_path: Path) -> None:
    tasks = _tasks(tmp_path)
    exported = [
        {
            "id": 7,
            "data": {"task_id": "sample-couple-1"},
            "annotations": [
                {
                    "id": 1,
                    "completed_by": 1,
                    "result": [
                        choice("focus_intensity", "6"),
                        choice("intervene_now", "yes"),
                        choice("support_strategy__2", "reframe"),
                        choice("support_strategy__1", "track"),
                        choice("support_target__1", "dana"),
                        {
                            "from_name": "focus_emotion",
                            "to_name": "conversation",
                            "type": "textarea",
                            "value": {"text": ["feels unheard"]},
                        },
                    ],
                },
                {
                    "id": 2,
                    "completed_by": 2,
                    "result": [
                        choice("focus_intensity", "4"),
                        choice("support_target__1", "zoe"),
                    ],
                },
                {
                    "id": 3,
                    "completed_by": 3,
                    "was_cancelled": True,
                    "result": [choice("focus_intensity", "1")],
                },
            ],
        }
    ]
    sink = LabelSink(COUPLE, {t.task_id: t for t in tasks})
    read_annotations(exported, COUPLE, sink, "project 1", {1: "ana@example.org"})
    (item,) = sink.result(tasks).items
    assert item["labels"] == {
        "ana@example.org": {
            "focus_intensity": 6,
            "intervene_now": True,
            "focus_emotion": "feels unheard",
            "support_strategy": ["track", "reframe"],
            "support_target": ["dana"],
        },
        "label-studio-user-2": {"focus_intensity": 4},
    }
    assert sink.problems == [
        "project 1: task 7 annotation 2: support_target: ['zoe']: 'zoe' is not one of "
        "dana, lee, Couple"
    ]


def test_a_pseudonym_is_stable_and_hides_the_email() -> None:
    assert pseudonym("Ana@Example.org") == pseudonym("ana@example.org")
    assert pseudonym("ana@example.org") != pseudonym("ben@example.org")
    assert "ana" not in pseudonym("ana@example.org")
