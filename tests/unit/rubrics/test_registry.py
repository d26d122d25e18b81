"""A rubric directory (``JUDGE_RUBRICS_DIR``) adds to the bundled rubrics, and ``judge rubrics
list`` shows both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.rubrics import RubricRegistry
from tests.unit.rubrics.test_loader import VALID


def test_a_directory_adds_to_the_bundled_rubrics(tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(VALID)
    ids = set(RubricRegistry.from_directory(tmp_path).ids())
    assert ids == {*RubricRegistry.from_directory().ids(), "tiny"}
    assert "epitome" in ids


def test_a_rubric_with_a_bundled_id_replaces_it(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(VALID.replace("id: tiny", "id: epitome", 1))
    replaced = RubricRegistry.from_directory(tmp_path).get("epitome")
    assert (replaced.name, [d.id for d in replaced.dimensions]) == ("Tiny", ["warmth"])
    assert "explorations" in [
        d.id for d in RubricRegistry.from_directory().get("epitome").dimensions
    ]


def test_rubrics_list_reads_the_configured_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tiny.yaml").write_text(VALID)
    monkeypatch.setenv("JUDGE_RUBRICS_DIR", str(tmp_path))
    done = CliRunner().invoke(main, ["rubrics", "list", "--format", "json"])
    assert done.exit_code == 0, done.output
    listed = {row["id"] for row in json.loads(done.output)}
    assert "tiny" in listed
    assert "epitome" in listed
