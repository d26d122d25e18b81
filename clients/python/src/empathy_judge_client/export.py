"""A batch's results as a table: one row per item and dimension (CSV; a pandas DataFrame
with the ``pandas`` extra; Parquet with the ``parquet`` extra). Items that did not complete
keep one row with their status and error, so the table counts every submitted item."""

from __future__ import annotations

import csv
import importlib
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:  # pandas is the optional ``pandas`` extra
    import pandas
    import pyarrow

#: the columns, in order; ``simulated``: the LLM simulator gave the item's replies
COLUMNS = (
    "batch_id",
    "line",
    "item_id",
    "score_id",
    "status",
    "dimension",
    "score",
    "flag",
    "reasons",
    "judge_kappa",
    "n",
    "interval_low",
    "interval_high",
    "prediction_set",
    "guaranteed",
    "valid_judges",
    "escalate",
    "cost_usd",
    "simulated",
    "error",
)


def _as_dict(result: Any) -> dict[str, Any]:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    return dict(result)


def rows(results: Iterable[Any]) -> Iterator[dict[str, Any]]:
    """One dict per item and dimension (keys: :data:`COLUMNS`), from result lines (wire
    models or their JSON objects). ``reasons`` and ``prediction_set`` are joined with ``;``;
    ``cost_usd`` is the item's (repeated on each of its dimensions)."""
    for result in results:
        data = _as_dict(result)
        base = dict.fromkeys(COLUMNS) | {
            "batch_id": data.get("batch_id"),
            "line": data.get("line"),
            "item_id": data.get("item_id"),
            "score_id": data.get("id"),
            "status": data.get("status"),
            "error": data.get("error"),
        }
        dimensions = data.get("dimensions") or {}
        if data.get("status") != "completed" or not dimensions:
            yield base
            continue
        item = {
            "escalate": data.get("escalate"),
            "cost_usd": (data.get("usage") or {}).get("cost_usd"),
            "simulated": bool(data.get("simulated")),
        }
        for name, dim in dimensions.items():
            flag = dim.get("reliability") or {}
            interval = dim.get("interval") or {}
            labels = (dim.get("prediction_set") or {}).get("labels")
            guarantee = dim.get("guarantee") or {}
            yield (
                base
                | item
                | {
                    "dimension": name,
                    "score": dim.get("score"),
                    "flag": flag.get("level"),
                    "reasons": ";".join(flag.get("reasons") or []),
                    "judge_kappa": flag.get("judge_kappa"),
                    "n": flag.get("n"),
                    "interval_low": interval.get("low"),
                    "interval_high": interval.get("high"),
                    "prediction_set": None if labels is None else ";".join(map(str, labels)),
                    "guaranteed": guarantee.get("guaranteed"),
                    "valid_judges": (dim.get("agreement") or {}).get("valid"),
                }
            )


def write_csv(results: Iterable[Any], stream: IO[str]) -> int:
    """Write :func:`rows` as CSV with a header; returns the number of rows written."""
    writer = csv.DictWriter(stream, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for row in rows(results):
        writer.writerow(row)
        count += 1
    return count


def _optional(module: str, *, extra: str, caller: str) -> Any:
    """Import an optional extra's module, or say which extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{caller} needs {module}: pip install 'empathy-judge-client[{extra}]'"
        ) from exc


def to_pandas(results: Iterable[Any]) -> pandas.DataFrame:
    """:func:`rows` as a DataFrame (columns :data:`COLUMNS`).

    Raises:
        ImportError: pandas is not installed (``pip install 'empathy-judge-client[pandas]'``).
    """
    pandas = _optional("pandas", extra="pandas", caller="to_pandas()")
    return pandas.DataFrame(list(rows(results)), columns=list(COLUMNS))


#: Parquet column types. ``score`` holds numeric scores; a nominal or ranked dimension's answer
#: (a label, or labels joined with ``;``) goes to ``score_label`` instead, so that each column
#: keeps one type whatever mix of dimensions a rubric has.
_PARQUET_TYPES = {
    "line": "int64",
    "score": "float64",
    "judge_kappa": "float64",
    "n": "int64",
    "interval_low": "float64",
    "interval_high": "float64",
    "guaranteed": "bool",
    "valid_judges": "int64",
    "cost_usd": "float64",
    "simulated": "bool",
}
PARQUET_COLUMNS = (
    *COLUMNS[: COLUMNS.index("score") + 1],
    "score_label",
    *COLUMNS[COLUMNS.index("score") + 1 :],
)


def _parquet_row(row: dict[str, Any]) -> dict[str, Any]:
    score = row["score"]
    numeric = isinstance(score, int | float) and not isinstance(score, bool)
    label = None
    if score is not None and not numeric:
        label = ";".join(map(str, score)) if isinstance(score, list) else str(score)
    return row | {"score": score if numeric else None, "score_label": label}


def parquet_schema() -> pyarrow.Schema:
    """The Parquet file's schema: :data:`PARQUET_COLUMNS`, strings unless typed above."""
    import pyarrow

    return pyarrow.schema([(name, _PARQUET_TYPES.get(name, "string")) for name in PARQUET_COLUMNS])


def write_parquet(results: Iterable[Any], target: Any) -> int:
    """Write :func:`rows` as a Parquet file (a path or a binary file object); returns the number
    of rows written. Same rows as :func:`write_csv`, typed columns (:func:`parquet_schema`).

    Raises:
        ImportError: pyarrow is not installed (``pip install 'empathy-judge-client[parquet]'``).
    """
    pyarrow = _optional("pyarrow", extra="parquet", caller="write_parquet()")
    parquet = importlib.import_module("pyarrow.parquet")
    table = pyarrow.Table.from_pylist(
        [_parquet_row(row) for row in rows(results)], schema=parquet_schema()
    )
    parquet.write_table(table, target)
    return int(table.num_rows)
