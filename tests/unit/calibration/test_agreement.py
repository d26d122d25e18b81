"""``judge agreement`` on small synthetic files: joining, missing ratings, output, bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sklearn.metrics import cohen_kappa_score

from judge.cli import main
from judge.reliability import kappa_result, krippendorff_alpha, median_rater


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
    words = write(tmp_path / "erin.csv", "item,note\ni1,hello\n")  # a label column alice lacks
    assert "no rating column in common with" in error_of(run(words, raters[0]))
    prose = write(tmp_path / "fay.csv", "item,note\ni1,I liked it a lot\ni2,not my thing at all\n")
    assert "fay.csv: no rating columns" in error_of(run(prose, raters[0]))


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


# -- nominal (text-label) columns and full-scale categories ----------------------------------

CODES = ["reflection", "question", "advice", "affirm"]


@pytest.fixture
def coders(tmp_path: Path) -> tuple[list[Path], dict[str, list[str | None]]]:
    """Three coders' behaviour codes (text labels) and a yes/no column, some cells empty."""
    rng = random.Random(5)
    columns: dict[str, list[str | None]] = {}
    paths = []
    truth = [rng.choice(CODES) for _ in range(40)]
    for name in ("ann", "ben", "cy"):
        codes = [t if rng.random() < 0.7 else rng.choice(CODES) for t in truth]
        codes[rng.randrange(40)] = None
        yes = ["yes" if c in ("reflection", "affirm") else "no" for c in codes]
        columns[name] = codes
        lines = ["id,code,reflective"] + [
            f"u{i},{c or ''},{y}" for i, (c, y) in enumerate(zip(codes, yes, strict=True))
        ]
        paths.append(write(tmp_path / f"{name}_ratings.csv", "\n".join(lines) + "\n"))
    return paths, columns


def test_text_labels_are_nominal_with_cohens_kappa_equal_to_scikit_learn(
    coders: tuple[list[Path], dict[str, list[str | None]]],
) -> None:
    paths, columns = coders
    rows = as_json(run(*paths, "--format", "json"))
    assert {r["dimension"] for r in rows} == {"code", "reflective"}
    for row in rows:
        assert (row["statistic"], row["categories"]) == ("cohens_kappa", "nominal")
    for row in (r for r in rows if r["dimension"] == "code"):
        a, b = columns[str(row["rater_a"])], columns[str(row["rater_b"])]
        both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
        expected = cohen_kappa_score([x for x, _ in both], [y for _, y in both])
        assert row["kappa"] == pytest.approx(expected, abs=1e-12)
        assert row["n"] == len(both)
    alpha = krippendorff_alpha([columns[n] for n in ("ann", "ben", "cy")], "nominal")
    for row in (r for r in rows if r["dimension"] == "code"):
        assert row["alpha_nominal_all_files"] == pytest.approx(alpha)
    table = run(*paths)
    assert table.exit_code == 0
    assert "Krippendorff's alpha (nominal)" in table.stdout


def test_combining_text_labels_takes_the_majority(
    coders: tuple[list[Path], dict[str, list[str | None]]],
) -> None:
    paths, _columns = coders
    rows = as_json(
        run(*paths, "--combine", "all=ann,ben,cy", "--dimensions", "code", "--format", "json")
    )
    combined = [r for r in rows if r["rater_b"] == "all"]
    assert [r["rater_a"] for r in combined] == ["ann", "ben", "cy"]
    assert all(r["kappa"] is not None for r in combined)


def test_categories_scale_weighs_every_level_like_scikit_learn(tmp_path: Path) -> None:
    # nobody used 3 or 4: observed categories make 2-vs-5 as close as 1-vs-2
    a = [1, 2, 5, 1, 2, 5, 2, 1, 5, 5]
    b = [2, 2, 5, 1, 5, 5, 1, 1, 2, 5]
    files = [
        write(tmp_path / f"{name}_ratings.csv",
              "id,empathy\n" + "".join(f"u{i},{v}\n" for i, v in enumerate(values)))
        for name, values in (("p", a), ("q", b))
    ]  # fmt: skip
    (observed,) = as_json(run(*files, "--format", "json"))
    (scale,) = as_json(run(*files, "--categories", "scale", "--scale", "1..5", "--format", "json"))
    assert (observed["categories"], scale["categories"]) == ("observed", "scale")
    assert scale["kappa"] == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5]), abs=1e-12
    )
    assert observed["kappa"] == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic"), abs=1e-12
    )
    assert abs(observed["kappa"] - scale["kappa"]) > 0.01


def test_categories_scale_from_a_rubric_and_its_errors(raters: list[Path], tmp_path: Path) -> None:
    epitome = write(tmp_path / "x_ratings.csv", "id,level_explorations\na,0\nb,2\nc,1\n")
    other = write(tmp_path / "y_ratings.csv", "id,level_explorations\na,0\nb,1\nc,1\n")
    rows = as_json(
        run(epitome, other, "--categories", "scale", "--rubric", "epitome", "--format", "json")
    )
    assert rows[0]["kappa"] == pytest.approx(
        cohen_kappa_score([0, 2, 1], [0, 1, 1], weights="quadratic", labels=[0, 1, 2])
    )
    assert "needs --rubric or --scale" in error_of(run(*raters, "--categories", "scale"))
    assert "'empathy' is not a dimension of rubric 'epitome'" in error_of(
        run(*raters, "--categories", "scale", "--rubric", "epitome")
    )
    assert "expected LO..HI" in error_of(run(*raters, "--categories", "scale", "--scale", "5"))
    assert "is not a level of the scale 1..3" in error_of(
        run(*raters, "--categories", "scale", "--scale", "1..3", "--dimensions", "empathy")
    )
