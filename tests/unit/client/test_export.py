"""The table exports: one row per item and dimension, the same rows in CSV and Parquet, and
Parquet's columns typed whatever mix of numeric and nominal dimensions a batch holds."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pyarrow.parquet
import pytest

from empathy_judge_client.export import (
    COLUMNS,
    PARQUET_COLUMNS,
    rows,
    write_csv,
    write_parquet,
)


def _dimension(score: Any, level: str, reasons: list[str]) -> dict[str, Any]:
    return {
        "score": score,
        "reliability": {"level": level, "reasons": reasons, "judge_kappa": 0.61, "n": 80},
        "agreement": {"valid": 3},
    }


RESULTS: list[dict[str, Any]] = [
    {
        "id": "s1",
        "batch_id": "b1",
        "line": 1,
        "item_id": "couple-1",
        "status": "completed",
        "simulated": True,
        "usage": {"cost_usd": 0.0125},
        "dimensions": {
            "intensity": _dimension(3, "trusted", []),
            "relation_pattern": _dimension("pursue-withdraw", "caution", ["label_unreliable"]),
            "support_target": _dimension(["A", "B"], "untrusted", ["below_line", "few_units"]),
        },
    },
    {
        "id": None,
        "batch_id": "b1",
        "line": 2,
        "item_id": "couple-2",
        "status": "failed",
        "error": "every judge abstained",
        "dimensions": {},
    },
]


def test_rows_are_one_per_item_and_dimension_and_failed_items_keep_one_row() -> None:
    table = list(rows(RESULTS))
    assert [(row["item_id"], row["dimension"]) for row in table] == [
        ("couple-1", "intensity"),
        ("couple-1", "relation_pattern"),
        ("couple-1", "support_target"),
        ("couple-2", None),
    ]
    assert table[2]["reasons"] == "below_line;few_units"
    assert table[3]["error"] == "every judge abstained"


def test_parquet_holds_the_csv_rows_with_typed_columns(tmp_path: Path) -> None:
    buffer = io.StringIO()
    assert write_csv(RESULTS, buffer) == 4
    as_csv = list(csv.DictReader(io.StringIO(buffer.getvalue())))

    target = tmp_path / "results.parquet"
    assert write_parquet(RESULTS, target) == 4
    table = pyarrow.parquet.read_table(target)

    assert table.column_names == list(PARQUET_COLUMNS)
    assert set(PARQUET_COLUMNS) == {*COLUMNS, "score_label"}
    types = {field.name: str(field.type) for field in table.schema}
    assert types["score"] == "double"
    assert types["line"] == types["n"] == types["valid_judges"] == "int64"
    assert types["simulated"] == "bool"
    assert types["score_label"] == types["flag"] == "string"

    read = table.to_pylist()
    assert [row["score"] for row in read] == [3.0, None, None, None]
    assert [row["score_label"] for row in read] == [None, "pursue-withdraw", "A;B", None]
    for csv_row, parquet_row in zip(as_csv, read, strict=True):
        for name in ("item_id", "dimension", "flag", "reasons", "status", "error"):
            assert csv_row[name] == (parquet_row[name] or "")
    assert read[0]["cost_usd"] == pytest.approx(0.0125)


def test_parquet_of_no_results_is_an_empty_table_with_the_schema(tmp_path: Path) -> None:
    target = tmp_path / "empty.parquet"
    assert write_parquet([], target) == 0
    table = pyarrow.parquet.read_table(target)
    assert table.num_rows == 0
    assert table.column_names == list(PARQUET_COLUMNS)
