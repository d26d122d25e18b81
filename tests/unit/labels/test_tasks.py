"""Blind labelling rounds: what the task files hold, and filled files read back with
file:line:column errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from judge.errors import LabelFileError
from judge.labels.tasks import (
    read_filled,
    read_tasks,
    round_is_blind,
    round_labels,
    round_rubric_id,
    select_tasks,
    tasks_from_file,
    with_panel_answers,
    write_round,
)
from judge.rubrics import RubricRegistry
from judge.sample_conversations import load_sample

REGISTRY = RubricRegistry.from_directory()
EPITOME = REGISTRY.get("epitome")
COUPLE = REGISTRY.get("rescue-couple")


def _items(tmp_path: Path, n: int = 3) -> Path:
    path = tmp_path / "items.jsonl"
    lines = [
        {
            "id": f"p{i}",
            "item": {
                "seeker_post": f"I failed my exam again ({i}).",
                "response": "That sounds so discouraging. What happened?",
                "metadata": {"panel_score": 2, "note": "JUDGE-OUTPUT"},
            },
            "labels": {"old-expert": {"explorations": 1}},
            "dimensions": {"explorations": {"score": 2, "judges": ["JUDGE-OUTPUT"]}},
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_round_holds_no_judge_output_nor_metadata_nor_old_labels(tmp_path: Path) -> None:
    tasks = tasks_from_file(_items(tmp_path), EPITOME)
    written = write_round(tmp_path / "round", EPITOME, tasks)
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert "JUDGE-OUTPUT" not in text, path
        assert "panel_score" not in text, path
        assert "old-expert" not in text, path
    task = read_tasks(tmp_path / "round" / "tasks.jsonl")[0]
    assert task.task_id == "p0"
    assert "*[1] supporter (supporter): That sounds so discouraging." in task.conversation
    assert round_rubric_id(tmp_path / "round") == "epitome"
    template = (tmp_path / "round" / "template.csv").read_text(encoding="utf-8").splitlines()
    assert template[0] == "task_id,annotator,emotional_reactions,interpretations,explorations"
    assert template[1:] == ["p0,,,,", "p1,,,,", "p2,,,,"]
    guide = (tmp_path / "round" / "guide.md").read_text(encoding="utf-8")
    assert "Enter: an integer 0..2." in guide


def test_an_item_that_does_not_fit_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    good = {"seeker_post": "a", "response": "b"}
    path.write_text(json.dumps(good) + "\n" + json.dumps(load_sample("couple_session.json")))
    with pytest.raises(LabelFileError, match=r"items\.jsonl:2: participants: rubric 'epitome'"):
        tasks_from_file(path, EPITOME)


def _round(tmp_path: Path) -> Path:
    directory = tmp_path / "round"
    write_round(directory, EPITOME, tasks_from_file(_items(tmp_path), EPITOME))
    return directory


def test_filled_files_become_labelled_items_per_annotator(tmp_path: Path) -> None:
    directory = _round(tmp_path)
    (directory / "labels" / "ana.csv").write_text(
        "task_id,annotator,emotional_reactions,interpretations,explorations\np0,,2,1,0\np1,,1,,2\n",
        encoding="utf-8",
    )
    (directory / "labels" / "more.jsonl").write_text(
        json.dumps({"task_id": "p0", "annotator": "ben", "labels": {"explorations": 1}}) + "\n",
        encoding="utf-8",
    )
    imported = round_labels(directory, EPITOME)
    assert imported.problems == []
    by_id = {item["id"]: item for item in imported.items}
    assert by_id["p0"]["labels"] == {
        "ana": {"emotional_reactions": 2, "interpretations": 1, "explorations": 0},
        "ben": {"explorations": 1},
    }
    assert by_id["p1"]["labels"] == {"ana": {"emotional_reactions": 1, "explorations": 2}}
    assert by_id["p0"]["item"]["turns"][1]["text"].startswith("That sounds")
    assert "p2" not in by_id  # nobody labelled it


def test_every_bad_cell_is_named_by_file_line_and_column(tmp_path: Path) -> None:
    directory = _round(tmp_path)
    filled = directory / "labels" / "ana.csv"
    filled.write_text(
        "task_id,annotator,emotional_reactions,interpretations,explorations,mood\n"
        "p0,,7,1,high,x\n"
        "nope,,1,1,1,\n"
        "p1,,1,1.0,2,\n",
        encoding="utf-8",
    )
    imported = read_filled([filled], EPITOME, read_tasks(directory / "tasks.jsonl"))
    assert imported.problems == [
        f"{filled}:1:6: 'mood' is not a dimension of epitome",
        f"{filled}:2:3: emotional_reactions: 7: 7 is outside 0..2",
        f"{filled}:2:5: explorations: 'high': must be an integer from 0 to 2",
        f"{filled}:3:1: task_id 'nope' is not a task of this round",
    ]
    # the good cells of the bad rows and the good rows are kept
    by_id = {item["id"]: item["labels"] for item in imported.items}
    assert by_id == {
        "p0": {"ana": {"interpretations": 1}},
        "p1": {"ana": {"emotional_reactions": 1, "interpretations": 1, "explorations": 2}},
    }


def test_ranked_cells_are_checked_against_the_items_participants(tmp_path: Path) -> None:
    items = tmp_path / "couple.jsonl"
    items.write_text(json.dumps(load_sample("couple_session.json")) + "\n", encoding="utf-8")
    directory = tmp_path / "round"
    write_round(directory, COUPLE, tasks_from_file(items, COUPLE))
    filled = directory / "labels" / "ana.csv"
    filled.write_text(
        "task_id,support_target,intervene_now,focus_emotion\n"
        "sample-couple-1,dana|Couple,yes,feels unheard\n"
        "sample-couple-1,zoe,maybe,\n",
        encoding="utf-8",
    )
    imported = read_filled([filled], COUPLE, read_tasks(directory / "tasks.jsonl"))
    assert [p.split(": ", 1)[0] for p in imported.problems] == [
        f"{filled}:3:2",
        f"{filled}:3:3",
    ]
    labels = imported.items[0]["labels"]["ana"]
    assert labels["support_target"] == ["dana", "Couple"]
    assert labels["intervene_now"] is True
    assert labels["focus_emotion"] == "feels unheard"


def test_an_adjudication_round_shows_the_panel_and_says_so(tmp_path: Path) -> None:
    tasks = tasks_from_file(_items(tmp_path), EPITOME)
    results = tmp_path / "results.jsonl"
    results.write_text(
        "".join(
            json.dumps({"item_id": f"p{i}", "dimensions": {"explorations": {"score": 2}}}) + "\n"
            for i in range(3)
        ),
        encoding="utf-8",
    )
    shown = with_panel_answers(tasks, results)
    write_round(tmp_path / "adjudicate", EPITOME, shown)
    write_round(tmp_path / "blind", EPITOME, tasks)
    assert not round_is_blind(tmp_path / "adjudicate")
    assert round_is_blind(tmp_path / "blind")
    assert read_tasks(tmp_path / "adjudicate" / "tasks.jsonl")[0].panel == {"explorations": 2}
    assert "panel_answer" in (tmp_path / "adjudicate" / "label-studio" / "config.xml").read_text()
    assert "panel_answer" not in (tmp_path / "blind" / "label-studio" / "config.xml").read_text()
    results.write_text(json.dumps({"item_id": "p0", "dimensions": {}}) + "\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match="no result for task 'p1'"):
        with_panel_answers(tasks, results)


def _result(item_id: str, levels: list[str]) -> str:
    dims = {
        f"d{i}": {"score": 1, "reliability": {"level": level}} for i, level in enumerate(levels)
    }
    return json.dumps({"item_id": item_id, "dimensions": dims}) + "\n"


def test_a_proposal_or_the_not_trusted_results_choose_the_tasks(tmp_path: Path) -> None:
    tasks = tasks_from_file(_items(tmp_path), EPITOME)
    results = tmp_path / "proposal.jsonl"
    results.write_text(
        _result("p2", ["trusted", "caution"]) + _result("p0", ["trusted", "trusted"]),
        encoding="utf-8",
    )
    assert [t.task_id for t in select_tasks(tasks, results)] == ["p2", "p0"]
    flagged = select_tasks(tasks, results, not_trusted=True)
    assert [t.task_id for t in flagged] == ["p2"]
    assert flagged[0].panel is None  # chosen by the results, shown nothing of them
    results.write_text(_result("p9", ["caution"]), encoding="utf-8")
    with pytest.raises(LabelFileError, match="item 'p9' is not among the items given"):
        select_tasks(tasks, results)
