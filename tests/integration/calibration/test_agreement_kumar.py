"""``judge agreement`` reproduces the kappa table of Kumar et al. (2025) from their release.

``annotations/table_kappa.csv`` has 126 rows: 21 dimensions x 6 annotator pairs, the
quadratic-weighted kappa rounded to 2 decimals and its p-value (kappa / its standard error)
rounded to 3. ``all_annotator_pairs_spearman_kappa.csv`` adds that z statistic to 3 decimals,
a much tighter check of the kappa itself. "llm" in their tables is ``gemini_ratings.csv``;
"experts" is the per-item median of the three experts.
"""

from __future__ import annotations

import ast
import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from judge.cli import main
from judge.reliability import kappa_result, median_rater
from tests.conftest import require_data

pytestmark = pytest.mark.data

KUMAR = "kumar2025-empathic-communication-judging/annotations"
# folder -> (--id columns, the column the notebook sorts each file by)
FOLDERS = {
    "empatheticdialogues": ("conv_id", "conv_id"),
    "epitome": ("sp_id,rp_id", "sp_id"),
    "perceived_empathy": ("id", "id"),
    "lend_an_ear": ("conversation_id", "conversation_id"),
}
FILES = ("expert1", "expert2", "expert3", "gemini", "crowd")
NAMES = {"gemini": "llm"}  # our annotator names -> the paper's
COMBINE = "experts=expert1,expert2,expert3"


def kumar_dir(shared_data: Path) -> Path:
    return require_data(shared_data / KUMAR)


def run_agreement(files: list[Path], *args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(
        main, ["agreement", *map(str, files), *args, "--format", "json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    rows: list[dict[str, Any]] = json.loads(result.stdout)
    return rows


def folder_rows(root: Path, folder: str) -> list[dict[str, Any]]:
    ids, _ = FOLDERS[folder]
    files = [root / folder / f"{name}_ratings.csv" for name in FILES]
    return run_agreement(files, "--id", ids, "--combine", COMBINE)


def by_pair(rows: list[dict[str, Any]]) -> dict[tuple[str, frozenset[str]], dict[str, Any]]:
    """Rows keyed by (dimension, unordered pair of paper names); kappa is symmetric."""
    out = {}
    for row in rows:
        pair = frozenset(NAMES.get(r, r) for r in (row["rater_a"], row["rater_b"]))
        out[(row["dimension"], pair)] = row
    return out


@pytest.fixture(scope="module")
def ours(shared_data: Path) -> dict[tuple[str, frozenset[str]], dict[str, Any]]:
    root = kumar_dir(shared_data)
    rows: dict[tuple[str, frozenset[str]], dict[str, Any]] = {}
    for folder in FOLDERS:
        rows.update(by_pair(folder_rows(root, folder)))
    return rows


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_reproduces_all_126_rows_of_the_kappa_table(
    shared_data: Path, ours: dict[tuple[str, frozenset[str]], dict[str, Any]]
) -> None:
    table = read_csv(kumar_dir(shared_data) / "table_kappa.csv")
    assert len(table) == 126
    worst = 0.0
    worst_p = 0.0
    for row in table:
        pair = frozenset(ast.literal_eval(row["Annotator Pair"]))
        got = ours[(row["Dimension"], pair)]
        assert got["n"] == 50, row
        diff = abs(got["kappa"] - float(row["Weighted Cohen's Kappa"]))
        assert diff <= 0.005 + 1e-9, (row, got)
        p_diff = abs(got["p_value_wald"] - float(row["Kappa P-value"]))
        assert p_diff <= 0.0005 + 1e-9, (row, got)
        worst, worst_p = max(worst, diff), max(worst_p, p_diff)
    print(f"max |kappa diff| over 126 rows: {worst:.6f}; max |p diff|: {worst_p:.6f}")


def test_matches_the_published_z_statistics(
    shared_data: Path, ours: dict[tuple[str, frozenset[str]], dict[str, Any]]
) -> None:
    table = read_csv(kumar_dir(shared_data) / "all_annotator_pairs_spearman_kappa.csv")
    assert len(table) == 126
    for row in table:
        got = ours[(row["Dimension"], frozenset(ast.literal_eval(row["Annotator Pair"])))]
        z = got["kappa"] / got["std_err"]
        assert abs(z - float(row["Kappa Z-statistic"])) <= 0.0005 + 1e-9, (row, got)


@pytest.mark.parametrize("folder", list(FOLDERS))
def test_joining_on_ids_equals_the_notebooks_sorted_alignment(
    shared_data: Path, folder: str
) -> None:
    """Kumar et al. sort each file by its id column and align rows by position."""
    root = kumar_dir(shared_data)
    ids, sort_column = FOLDERS[folder]
    tables = {name: read_csv(root / folder / f"{name}_ratings.csv") for name in FILES}
    id_columns = ids.split(",")
    key_sets = {
        name: [tuple(r[c] for c in id_columns) for r in rows] for name, rows in tables.items()
    }
    first = key_sets["expert1"]
    for keys in key_sets.values():  # ids unique in each file and the same set everywhere
        assert len(set(keys)) == len(keys) == 50
        assert set(keys) == set(first)
    for rows in tables.values():  # the notebook's sort column alone is unique too
        assert len({r[sort_column] for r in rows}) == 50
    aligned = {name: sorted(rows, key=lambda r: r[sort_column]) for name, rows in tables.items()}
    for name, rows in aligned.items():  # positional alignment pairs the same items
        assert [r[sort_column] for r in rows] == [r[sort_column] for r in aligned["expert1"]], name

    got = by_pair(folder_rows(root, folder))
    dimensions = {dim for dim, _ in got}
    for dim in dimensions:
        series = {
            NAMES.get(name, name): [float(r[dim]) for r in rows] for name, rows in aligned.items()
        }
        series["experts"] = [
            v if v is not None else math.nan
            for v in median_rater(series["expert1"], series["expert2"], series["expert3"])
        ]
        for a, b in [
            ("expert1", "expert2"),
            ("expert2", "expert3"),
            ("expert3", "expert1"),
            ("experts", "crowd"),
            ("experts", "llm"),
            ("llm", "crowd"),
        ]:
            expected = kappa_result(series[a], series[b], "quadratic").kappa
            assert got[(dim, frozenset((a, b)))]["kappa"] == pytest.approx(expected, abs=1e-12)


def rewrite_with_index_and_shuffled_columns(src: Path, dst: Path, index_header: str) -> None:
    """Copy ``src`` with a leading unnamed index column, columns reversed and rows reversed."""
    rows = read_csv(src)
    columns = list(reversed(list(rows[0])))
    with dst.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([index_header, *columns])
        for i, row in enumerate(reversed(rows)):
            writer.writerow([i, *(row[c] for c in columns)])


@pytest.mark.parametrize(
    ("folder", "index_header"), [("lend_an_ear", ""), ("epitome", "Unnamed: 0")]
)
def test_stray_index_column_and_reordered_columns_give_the_same_numbers(
    shared_data: Path, tmp_path: Path, folder: str, index_header: str
) -> None:
    root = kumar_dir(shared_data)
    ids, _ = FOLDERS[folder]
    originals = [root / folder / f"{name}_ratings.csv" for name in FILES]
    copies = []
    for src in originals:
        dst = tmp_path / src.name
        rewrite_with_index_and_shuffled_columns(src, dst, index_header)
        copies.append(dst)
    args = ("--id", ids, "--combine", COMBINE)
    expected = by_pair(run_agreement(originals, *args))
    got = by_pair(run_agreement(copies, *args))
    assert got.keys() == expected.keys()
    for key, row in expected.items():
        assert got[key]["n"] == row["n"]
        assert got[key]["kappa"] == pytest.approx(row["kappa"], abs=1e-12)


def test_csv_output_columns(shared_data: Path) -> None:
    root = kumar_dir(shared_data)
    files = [str(root / "epitome" / f"{name}_ratings.csv") for name in FILES]
    result = CliRunner().invoke(
        main,
        ["agreement", *files, "--id", "sp_id,rp_id", "--combine", COMBINE, "--format", "csv"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "dimension,rater_a,rater_b,kappa,n"
    assert len(lines) == 1 + 3 * 15  # 3 dimensions x C(6, 2) pairs
    assert "level_emotional_reactions,expert1,expert2,0.3521,50" in lines
