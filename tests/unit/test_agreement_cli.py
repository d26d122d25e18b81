"""``judge agreement`` on small synthetic files: joining, missing ratings, output, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from judge.cli import main
from judge.reliability import kappa_result, median_rater


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["agreement", *map(str, args)], catch_exceptions=False)


@pytest.fixture
def raters(tmp_path: Path) -> list[Path]:
    a = write(
        tmp_path / "alice_ratings.csv",
        "item,empathy,clarity,comment\n"
        "i1,1,2,fine\ni2,2,2,ok\ni3,3,4,good\ni4,4,5,nice\ni5,5,,great\ni6,2,3,so so\n",
    )
    # other column order, a stray index column, one id alice lacks, a missing rating
    b = write(
        tmp_path / "bob_ratings.csv",
        ",clarity,comment,item,empathy\n"
        "0,3,x,i6,2\n1,2,y,i1,2\n2,2,z,i2,2\n3,,w,i3,3\n4,5,v,i4,5\n5,4,u,i5,4\n6,1,t,i7,1\n",
    )
    c = write(
        tmp_path / "carol.csv",
        "item,empathy,clarity\ni1,1,1\ni2,3,2\ni3,3,4\ni4,4,4\ni5,5,5\ni6,1,3\n",
    )
    return [a, b, c]


def as_json(result: Result) -> list[dict[str, object]]:
    assert result.exit_code == 0, result.stderr
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def test_pairs_dimensions_and_join(raters: list[Path]) -> None:
    rows = as_json(run(*raters, "--id", "item", "--format", "json"))
    assert [(r["dimension"], r["rater_a"], r["rater_b"]) for r in rows] == [
        ("empathy", "alice", "bob"),
        ("empathy", "alice", "carol"),
        ("empathy", "bob", "carol"),
        ("clarity", "alice", "bob"),
        ("clarity", "alice", "carol"),
        ("clarity", "bob", "carol"),
    ]
    alice_bob = rows[0]
    # joined on ids, not on row position: i1..i6 in common, i7 only in bob
    expected = kappa_result([1, 2, 3, 4, 5, 2], [2, 2, 3, 5, 4, 2])
    assert alice_bob["kappa"] == pytest.approx(expected.kappa)
    assert alice_bob["n"] == 6
    assert alice_bob["p_value"] == pytest.approx(expected.p_value)
    assert alice_bob["p_value_wald"] == pytest.approx(expected.p_value_wald)
    clarity_alice_bob = rows[3]
    assert clarity_alice_bob["n"] == 4  # i5 missing in alice, i3 missing in bob


def test_note_for_ids_missing_from_a_file(raters: list[Path]) -> None:
    result = run(*raters, "--id", "item", "--format", "csv")
    assert result.exit_code == 0
    assert "note:" in result.stderr
    assert "alice_ratings.csv: 1 of 7 ids" in result.stderr
    assert "note" not in result.stdout


def test_default_id_is_the_first_named_column(raters: list[Path]) -> None:
    assert (
        run(*raters, "--format", "csv").stdout
        == run(*raters, "--id", "item", "--format", "csv").stdout
    )


def test_combine_adds_a_median_annotator(raters: list[Path]) -> None:
    rows = as_json(
        run(
            *raters,
            "--combine",
            "panel=alice,bob,carol",
            "--dimensions",
            "empathy",
            "--format",
            "json",
        )
    )
    pairs = [(r["rater_a"], r["rater_b"]) for r in rows]
    assert pairs == [
        ("alice", "bob"),
        ("alice", "carol"),
        ("bob", "carol"),
        ("alice", "panel"),
        ("bob", "panel"),
        ("carol", "panel"),
    ]
    panel = median_rater([1, 2, 3, 4, 5, 2, None], [2, 2, 3, 5, 4, 2, 1], [1, 3, 3, 4, 5, 1, None])
    carol = [1, 3, 3, 4, 5, 1, None]
    assert rows[-1]["kappa"] == pytest.approx(kappa_result(carol, panel).kappa)
    assert rows[-1]["n"] == 6


@pytest.mark.parametrize("weights", ["linear", "none"])
def test_weights_option(raters: list[Path], weights: str) -> None:
    rows = as_json(
        run(*raters, "--weights", weights, "--dimensions", "empathy", "--format", "json")
    )
    wt = None if weights == "none" else "linear"
    expected = kappa_result([1, 2, 3, 4, 5, 2], [2, 2, 3, 5, 4, 2], wt)  # type: ignore[arg-type]
    assert rows[0]["kappa"] == pytest.approx(expected.kappa)


def test_csv_and_table_formats(raters: list[Path]) -> None:
    lines = run(*raters, "--format", "csv").stdout.splitlines()
    assert lines[0] == "dimension,rater_a,rater_b,kappa,n"
    assert len(lines) == 7
    table = run(*raters)
    assert table.exit_code == 0
    assert "quadratic-weighted Cohen's kappa" in table.stdout
    assert "alice" in table.stdout


def test_undefined_kappa_is_null_in_json_and_empty_in_csv(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", "id,x\n1,3\n2,3\n")
    b = write(tmp_path / "b.csv", "id,x\n1,3\n2,3\n")
    rows = as_json(run(a, b, "--format", "json"))
    assert rows[0]["kappa"] is None
    assert rows[0]["n"] == 2
    assert run(a, b, "--format", "csv").stdout.splitlines()[1] == "x,a,b,,2"
    assert "-" in run(a, b).stdout


def error_of(result: Result) -> str:
    assert result.exit_code == 2, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_error_missing_file(raters: list[Path], tmp_path: Path) -> None:
    message = error_of(run(raters[0], tmp_path / "nope_ratings.csv"))
    assert "nope_ratings.csv" in message
    assert "no such file" in message


def test_error_missing_id_column(raters: list[Path]) -> None:
    message = error_of(run(*raters, "--id", "conv_id"))
    assert "alice_ratings.csv" in message
    assert "'conv_id'" in message


def test_error_no_common_dimensions(raters: list[Path], tmp_path: Path) -> None:
    other = write(tmp_path / "dave.csv", "item,warmth\ni1,3\n")
    message = error_of(run(raters[0], other, "--id", "item"))
    assert "dave.csv" in message
    assert "in common" in message
    words = write(tmp_path / "erin.csv", "item,note\ni1,hello\n")
    assert "erin.csv: no numeric rating columns" in error_of(run(words, raters[0]))


def test_error_non_numeric_rating(raters: list[Path], tmp_path: Path) -> None:
    bad = write(tmp_path / "frank.csv", "item,empathy,clarity\ni1,1,2\ni2,3?,2\ni3,2,2\n")
    message = error_of(run(raters[0], bad))
    assert "frank.csv:3" in message
    assert "'empathy'" in message
    assert "'3?'" in message
    # a rating column that is text throughout one file
    text = write(tmp_path / "gina.csv", "item,empathy,clarity\ni1,high,2\ni2,low,2\n")
    message = error_of(run(raters[0], text))
    assert "gina.csv" in message
    assert "'empathy'" in message


def test_error_non_numeric_requested_dimension(raters: list[Path]) -> None:
    message = error_of(run(*raters, "--dimensions", "comment"))
    assert "'comment'" in message
    assert "carol.csv" in message


def test_error_duplicate_id(raters: list[Path], tmp_path: Path) -> None:
    dup = write(tmp_path / "hal.csv", "item,empathy\ni1,1\ni1,2\n")
    message = error_of(run(raters[0], dup))
    assert "hal.csv:3" in message
    assert "duplicate id 'i1'" in message


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("panel", "expected NAME=A,B,C"),
        ("panel=alice,zed", "unknown annotator 'zed'"),
        ("bob=alice,carol", "already used"),
    ],
)
def test_error_bad_combine(raters: list[Path], spec: str, fragment: str) -> None:
    assert fragment in error_of(run(*raters, "--combine", spec))


def test_error_other_bad_input(raters: list[Path], tmp_path: Path) -> None:
    assert "no annotator files" in error_of(run())
    assert "also used by" in error_of(run(raters[0], raters[0]))
    assert "no column 'warmth'" in error_of(run(*raters, "--dimensions", "warmth"))
    ragged = write(tmp_path / "ivy.csv", "item,empathy\ni1,1,7\n")
    assert "ivy.csv:2" in error_of(run(raters[0], ragged))
    empty = write(tmp_path / "jo.csv", "")
    assert "jo.csv: empty file" in error_of(run(raters[0], empty))
    assert "not a file" in error_of(run(raters[0], tmp_path))
    binary = tmp_path / "kim.csv"
    binary.write_bytes(b"item,empathy\n\xff\xfe,1\n")
    assert "kim.csv: not UTF-8" in error_of(run(raters[0], binary))
