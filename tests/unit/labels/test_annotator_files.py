"""Calibration and ``judge agreement`` read annotator files through one reader: the same
cells are missing for both, and the same malformed files are refused with the same message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from judge.cli.agreement import agreement
from judge.labels.annotator_files import AnnotatorFileError, is_missing
from judge.labels.label_files import read_label_files
from judge.rubrics import RubricRegistry

TEXT = "Seeker: I failed my exam. Supporter: That sounds really hard, what happened?"
MISSING = ["", "NA", "n/a", "NaN", "null", "None", "  "]


def write(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join(["id,full_conversation,explorations", *rows]) + "\n")
    return path


@pytest.mark.parametrize("cell", MISSING)
def test_one_definition_of_missing(cell: str) -> None:
    assert is_missing(cell)


def test_calibration_and_agreement_skip_the_same_cells(tmp_path: Path) -> None:
    rows_a = [f'{i},"{TEXT}",{i % 3}' for i in range(len(MISSING))]
    rows_b = [f'{i},"{TEXT}",{cell}' for i, cell in enumerate(MISSING)]
    rows_b[0] = f'0,"{TEXT}",2'  # one labelled item, so the files share a dimension
    a = write(tmp_path / "expert1_ratings.csv", rows_a)
    b = write(tmp_path / "expert2_ratings.csv", rows_b)

    items = read_label_files([a, b], RubricRegistry.from_directory().get("epitome"))
    labelled_by_b = [item["id"] for item in items if item["labels"].get("expert2")]
    assert labelled_by_b == ["0"]

    out = CliRunner().invoke(agreement, [str(a), str(b), "--id", "id", "--format", "json"])
    assert out.exit_code == 0, out.output
    (row,) = json.loads(out.stdout)
    assert (row["rater_b"], row["n"]) == ("expert2", 1)


def test_both_refuse_a_ragged_file_naming_the_line(tmp_path: Path) -> None:
    good = write(tmp_path / "expert1_ratings.csv", [f'1,"{TEXT}",1'])
    ragged = write(tmp_path / "expert2_ratings.csv", [f'1,"{TEXT}",1,extra'])
    rubric = RubricRegistry.from_directory().get("epitome")
    with pytest.raises(AnnotatorFileError, match=r":2: 4 fields"):
        read_label_files([good, ragged], rubric)
    out = CliRunner().invoke(agreement, [str(good), str(ragged), "--id", "id"])
    assert out.exit_code != 0
    assert ":2: 4 fields, the header has 3" in out.output
