"""A batch's results as a table: one row per item and dimension (CSV, or a pandas DataFrame
with the ``pandas`` extra). Items that did not complete keep one row with their status and
error, so the table counts every submitted item."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:  # pandas is the optional ``pandas`` extra
    import pandas

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


def to_pandas(results: Iterable[Any]) -> pandas.DataFrame:
    """:func:`rows` as a DataFrame (columns :data:`COLUMNS`).

    Raises:
        ImportError: pandas is not installed (``pip install 'empathy-judge-client[pandas]'``).
    """
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            "to_pandas() needs pandas: pip install 'empathy-judge-client[pandas]'"
        ) from exc
    return pandas.DataFrame(list(rows(results)), columns=list(COLUMNS))
