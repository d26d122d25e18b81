"""Malformed rubrics get one precise message naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.errors import RubricInvalid
from judge.rubrics import RubricRegistry, parse_rubric

VALID = """\
id: tiny
version: "1.0"
name: Tiny
framework: A tiny framework for tests.
source: Test suite.
unit: response
setting: dyadic
dimensions:
  - id: warmth
    name: Warmth
    definition: Is the reply warm?
    scale:
      type: ordinal
      min: 0
      max: 2
      anchors:
        0: cold
        1: neutral
        2: warm
expert_examples:
  - id: warm_one
    input: {seeker_post: "I had a rough day.", response: "I'm sorry, that sounds hard."}
    ratings: {warmth: 2}
    rationale: Names sympathy directly.
  - id: cold_one
    input: {seeker_post: "I had a rough day.", response: "Everyone has those."}
    ratings: {warmth: 0}
    rationale: Brushes it off.
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(RubricInvalid) as caught:
        parse_rubric(text, "x.yaml")
    return [str(p) for p in caught.value.problems]


def test_valid_rubric_parses_with_a_stable_hash() -> None:
    first = parse_rubric(VALID, "x.yaml")
    again = parse_rubric(VALID, "x.yaml")
    changed = parse_rubric(VALID.replace("Is the reply warm?", "Is it warm?"), "x.yaml")
    assert first.content_hash == again.content_hash
    assert first.content_hash != changed.content_hash
    assert first.content_hash.startswith("sha256:")


def test_bad_yaml_names_the_line() -> None:
    broken = VALID.replace("name: Tiny", "name: [Tiny")
    assert problems_of(broken)[0].startswith("x.yaml:")
    assert "invalid YAML" in problems_of(broken)[0]


def test_unknown_scale_type() -> None:
    problems = problems_of(VALID.replace("type: ordinal", "type: likert"))
    assert problems == [
        "x.yaml:13: dimensions[warmth].scale.type: unknown scale type 'likert'; "
        "expected one of 'ordinal', 'binary', 'nominal', 'ranked', 'free_text'"
    ]


def test_missing_anchor() -> None:
    problems = problems_of(VALID.replace("        1: neutral\n", ""))
    assert problems == ["x.yaml:12: dimensions[warmth].scale: missing anchors for levels [1]"]


def test_duplicate_dimension_ids() -> None:
    second = VALID.split("expert_examples:")[0].split("dimensions:\n")[1]
    text = VALID.replace("expert_examples:", second + "expert_examples:", 1)
    problems = problems_of(text)
    assert any("dimensions[warmth].id: duplicate dimension id 'warmth'" in p for p in problems)
    assert problems[0].startswith("x.yaml:20:")


def test_example_rated_off_scale() -> None:
    problems = problems_of(VALID.replace("ratings: {warmth: 2}", "ratings: {warmth: 5}"))
    assert problems == [
        "x.yaml:23: expert_examples[warm_one].ratings.warmth: expert rating 5 is outside 0..2",
        "x.yaml:9: dimensions[warmth].id: needs at least two expert examples with different "
        "ratings (has 1, 1 distinct)",
    ]


def test_unknown_key_is_an_error_not_ignored() -> None:
    problems = problems_of(VALID.replace("    name: Warmth\n", "    name: Warmth\n    weight: 2\n"))
    assert problems == [
        "x.yaml:11: dimensions[warmth].weight: unknown key (not part of the rubric schema)"
    ]


def test_missing_required_field() -> None:
    problems = problems_of(VALID.replace("unit: response\n", ""))
    assert problems == ["x.yaml:1: unit: required field is missing"]


def test_example_that_does_not_fit_the_setting() -> None:
    text = VALID.replace("setting: dyadic", "setting: couple")
    problems = problems_of(text)
    assert any("expert_examples[warm_one].input.participants" in p for p in problems)


def test_cli_validate_reports_broken_file_without_traceback(tmp_path: Path) -> None:
    good = tmp_path / "tiny.yaml"
    good.write_text(VALID)
    bad = tmp_path / "bad.yaml"
    bad.write_text(VALID.replace("type: ordinal", "type: likert").replace("id: tiny", "id: bad"))
    result = CliRunner().invoke(main, ["rubrics", "validate", str(good), str(bad)])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert f"ok     {good}" in result.output
    assert f"error  {bad}:13: dimensions[warmth].scale.type: unknown scale type" in result.output

    as_json = CliRunner().invoke(main, ["rubrics", "validate", str(bad), "--format", "json"])
    report = json.loads(as_json.output)
    assert report[0]["valid"] is False
    assert report[0]["problems"][0]["line"] == 13
    assert report[0]["problems"][0]["field"] == "dimensions[warmth].scale.type"


def test_duplicate_rubric_ids_across_files(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(VALID)
    (tmp_path / "b.yaml").write_text(VALID)
    with pytest.raises(RubricInvalid, match="rubric id 'tiny' is also used by"):
        RubricRegistry.from_directory(tmp_path)
    result = CliRunner().invoke(main, ["rubrics", "validate", str(tmp_path)])
    assert result.exit_code == 1
    assert "rubric id 'tiny' is also used by" in result.output


def test_all_shipped_rubrics_validate() -> None:
    result = CliRunner().invoke(main, ["rubrics", "validate"])
    assert result.exit_code == 0, result.output
    ids = {r.id for r in RubricRegistry.from_directory().all()}
    expected = {
        "empathetic-dialogues",
        "epitome",
        "perceived-empathy",
        "lend-an-ear",
        "rescue-couple",
        "rescue-family",
        "rescue-response",
    }
    assert expected <= ids


def test_show_json_gives_the_normalised_rubric() -> None:
    result = CliRunner().invoke(main, ["rubrics", "show", "epitome", "--format", "json"])
    data = json.loads(result.output)
    dims = {d["id"]: d for d in data["dimensions"]}
    assert dims["explorations"]["scale"]["type"] == "ordinal"
    assert dims["explorations"]["polarity"] == "prescriptive"
    assert dims["explorations"]["prior"]["expert_kappa"] == 0.76
    assert data["reliability"]["line"] == 0.58
    assert data["hash"].startswith("sha256:")


def test_show_unknown_rubric_is_a_clear_error() -> None:
    result = CliRunner().invoke(main, ["rubrics", "show", "nope"])
    assert result.exit_code == 2
    assert "unknown rubric 'nope'" in result.output
