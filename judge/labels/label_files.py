"""Read expert-labelled items for calibration from files.

- JSON Lines: one ``{"id"?, "item": {...}, "labels": {expert: {dimension: value}}}`` per line.
- One CSV in long form: an ``annotator`` column, id column(s), the conversation text
  (``full_conversation``, or ``seeker_post`` + ``response_post``) and one column per dimension
  (dimension id or alias); one row per item and annotator.
- Several CSVs, one per annotator (the name is the file stem without ``_ratings``), joined on
  the id column(s); the text comes from whichever file (or ``text_file``) carries it.

Values: numbers, ``true``/``false``, ranked lists as ``a|b|c``; a missing cell (empty, ``na``,
``n/a``, ...: :mod:`judge.labels.annotator_files`) is no label.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from judge.domain.jsonl import read_jsonl_strict
from judge.domain.rubric import Rubric
from judge.domain.transcript import TEXT_COLUMNS, item_from_row
from judge.errors import JsonLinesInvalid, LabelFileError
from judge.labels.annotator_files import is_missing, read_annotator_file

_TRUE, _FALSE = {"true", "yes", "y", "t"}, {"false", "no", "n", "f"}


def parse_cell(raw: str) -> Any:
    """A label cell's value: None when missing, a bool, a ranked list, a number or text."""
    text = raw.strip()
    if is_missing(text):
        return None
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    if "|" in text:
        return [p.strip() for p in text.split("|") if p.strip()]
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() else number


def _read_csv(path: Path) -> list[dict[str, str]]:
    return read_annotator_file(path).records


def _dimension_columns(rubric: Rubric, columns: Sequence[str]) -> dict[str, str]:
    names = rubric.dimension_names()
    return {c: names[c] for c in columns if c in names}


def _key(row: dict[str, str], id_cols: Sequence[str], path: Path) -> str:
    missing = [c for c in id_cols if c not in row]
    if missing:
        raise LabelFileError(f"{path}: no id column {missing[0]!r}")
    return "|".join(row[c] for c in id_cols)


def read_jsonl(path: Path) -> list[Any]:
    """Every line's JSON value; a line that cannot be read names the file and line."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LabelFileError(f"{path}: cannot read: {exc}") from None
    try:
        return [value for _, value in read_jsonl_strict(data)]
    except JsonLinesInvalid as exc:
        raise LabelFileError(f"{path}: {exc.message}") from None


def read_label_files(
    paths: Sequence[Path],
    rubric: Rubric,
    *,
    id_cols: Sequence[str] = (),
    text_file: Path | None = None,
) -> list[dict[str, Any]]:
    """Labelled items (the JSON Lines shape) from any of the supported layouts."""
    if len(paths) == 1 and paths[0].suffix in (".jsonl", ".ndjson", ".json"):
        return read_jsonl(paths[0])
    tables = {p: _read_csv(p) for p in paths}
    first = next(iter(tables.values()), [])
    if not first:
        raise LabelFileError(f"{paths[0]}: no rows")
    ids = list(id_cols) or [next(c for c in first[0] if c not in TEXT_COLUMNS)]
    texts: dict[str, dict[str, str]] = {}
    for path in ([text_file] if text_file else []) + list(paths):
        for row in tables.get(path) or _read_csv(path):
            if any(row.get(c, "").strip() for c in TEXT_COLUMNS):
                texts.setdefault(_key(row, ids, path), row)
    labels: dict[str, dict[str, dict[str, Any]]] = {}
    order: list[str] = []
    for path, rows in tables.items():
        long_form = rows and "annotator" in rows[0]
        for row in rows:
            key = _key(row, ids, path)
            annotator = row["annotator"] if long_form else path.stem.removesuffix("_ratings")
            dims = _dimension_columns(rubric, list(row))
            if key not in labels:
                labels[key] = {}
                order.append(key)
            values = {dim: parse_cell(row[col]) for col, dim in dims.items()}
            labels[key].setdefault(annotator, {}).update(
                {k: v for k, v in values.items() if v is not None}
            )
    items = []
    for key in order:
        text_row = texts.get(key)
        item = item_from_row(text_row, key) if text_row else None
        if item is None:
            raise LabelFileError(
                f"no conversation text for id {key!r}: give a file with full_conversation or "
                "seeker_post/response_post columns (--text)"
            )
        items.append({"id": key, "item": item, "labels": labels[key]})
    return items
