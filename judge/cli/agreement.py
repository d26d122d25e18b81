"""``judge agreement FILE...``: pairwise weighted kappa between annotator CSV files.

One CSV per annotator (annotator name = file stem without a trailing ``_ratings``), rows
joined on the id column(s), one numeric column per dimension. Reproduces the kappa table of
Kumar et al. (2025) on their release (``--combine experts=expert1,expert2,expert3``).
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import click
from rich.table import Table

from judge.cli._output import console, fail
from judge.reliability import kappa_result, median_rater

Key = tuple[str, ...]
Value = float | None

_UNNAMED = re.compile(r"^Unnamed: \d+(_level_\d+)?$")
_MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})
_TEXT_COLUMNS = frozenset({"full_conversation"})
_CSV_FIELDS = ("dimension", "rater_a", "rater_b", "kappa", "n")


class AgreementInputError(Exception):
    """Bad input for ``judge agreement``; the message names the file and column."""


@dataclass
class AnnotatorFile:
    """One annotator's CSV: named columns (unnamed index columns dropped) and raw cells."""

    name: str
    path: Path
    columns: list[str]
    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)  # (line, cells)
    keys: list[Key] = field(default_factory=list)


def annotator_name(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_ratings")] if stem.endswith("_ratings") and stem != "_ratings" else stem


def _is_unnamed(column: str) -> bool:
    return not column or _UNNAMED.match(column) is not None


def read_annotator_file(path: Path) -> AnnotatorFile:
    """Read one annotator CSV (UTF-8, optional BOM); unnamed index columns are ignored."""
    if not path.exists():
        raise AgreementInputError(f"{path}: no such file")
    if not path.is_file():
        raise AgreementInputError(f"{path}: not a file")
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 24))
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise AgreementInputError(f"{path}: empty file (no header row)")
            header = [h.strip() for h in header]
            keep = [(i, h) for i, h in enumerate(header) if not _is_unnamed(h)]
            names = [h for _, h in keep]
            dupes = sorted({h for h in names if names.count(h) > 1})
            if dupes:
                raise AgreementInputError(f"{path}: column {dupes[0]!r} appears more than once")
            result = AnnotatorFile(annotator_name(path), path, names)
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise AgreementInputError(
                        f"{path}:{reader.line_num}: {len(row)} fields, the header has {len(header)}"
                    )
                result.rows.append((reader.line_num, {h: row[i].strip() for i, h in keep}))
    except OSError as exc:
        raise AgreementInputError(f"{path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise AgreementInputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except csv.Error as exc:
        raise AgreementInputError(f"{path}: malformed CSV: {exc}") from exc
    return result


def _number(cell: str) -> float | None:
    """A cell as a rating: None if missing, NaN-free float, or raise ValueError."""
    if cell.lower() in _MISSING:
        return None
    value = float(cell)
    if not math.isfinite(value):
        raise ValueError(cell)
    return value


def _parses(cell: str) -> bool:
    try:
        _number(cell)
    except ValueError:
        return False
    return True


def _is_text_column(f: AnnotatorFile, column: str) -> bool:
    """A column whose filled cells are mostly not numbers (ids, conversation text)."""
    if column in _TEXT_COLUMNS:
        return True
    cells = [cells[column] for _, cells in f.rows if cells[column].lower() not in _MISSING]
    numeric = sum(_parses(c) for c in cells)
    return len(cells) - numeric > numeric


def _keys(f: AnnotatorFile, id_columns: Sequence[str]) -> None:
    for column in id_columns:
        if column not in f.columns:
            raise AgreementInputError(
                f"{f.path}: no id column {column!r} (columns: {', '.join(f.columns)}); "
                "choose it with --id"
            )
    seen: dict[Key, int] = {}
    for line, cells in f.rows:
        key = tuple(cells[c] for c in id_columns)
        if not all(key):
            raise AgreementInputError(f"{f.path}:{line}: empty id in column(s) {id_columns}")
        if key in seen:
            shown = ",".join(key)
            raise AgreementInputError(
                f"{f.path}:{line}: duplicate id {shown!r} (also on line {seen[key]})"
            )
        seen[key] = line
        f.keys.append(key)


def choose_dimensions(
    files: Sequence[AnnotatorFile], id_columns: Sequence[str], requested: Sequence[str] | None
) -> list[str]:
    """The rating columns: ``requested``, or the numeric columns common to every file."""
    if requested is not None:
        for f in files:
            for column in requested:
                if column not in f.columns:
                    raise AgreementInputError(f"{f.path}: no column {column!r} (--dimensions)")
        return list(requested)
    common: list[str] | None = None
    for f in files:
        own = [c for c in f.columns if c not in id_columns]
        common = own if common is None else [c for c in common if c in own]
    candidates = common or []
    text = {c for c in candidates for f in files if _is_text_column(f, c)}
    for column in candidates:
        if column in text and column not in _TEXT_COLUMNS:
            numeric_in = [f for f in files if not _is_text_column(f, column)]
            if numeric_in:
                bad = next(f for f in files if _is_text_column(f, column))
                raise AgreementInputError(
                    f"{bad.path}: column {column!r} holds text, but it is a numeric rating "
                    f"column in {numeric_in[0].path}"
                )
    dimensions = [c for c in candidates if c not in text]
    if not dimensions:
        running: list[str] | None = None
        for f in files:
            own = [c for c in f.columns if c not in id_columns and not _is_text_column(f, c)]
            if not own:
                raise AgreementInputError(f"{f.path}: no numeric rating columns")
            if running is not None and not [c for c in running if c in own]:
                raise AgreementInputError(
                    f"{f.path}: no numeric rating column in common with "
                    f"{', '.join(str(g.path) for g in files[: files.index(f)])}"
                )
            running = own if running is None else [c for c in running if c in own]
        raise AgreementInputError("the files have no numeric rating column in common")
    return dimensions


def _ratings(f: AnnotatorFile, dimension: str) -> dict[Key, Value]:
    values: dict[Key, Value] = {}
    for key, (line, cells) in zip(f.keys, f.rows, strict=True):
        cell = cells[dimension]
        try:
            values[key] = _number(cell)
        except ValueError:
            raise AgreementInputError(
                f"{f.path}:{line}: column {dimension!r}: non-numeric rating {cell!r}"
            ) from None
    return values


def parse_combine(spec: str) -> tuple[str, list[str]]:
    name, sep, members = spec.partition("=")
    parts = [m.strip() for m in members.split(",") if m.strip()]
    if not sep or not name.strip() or not parts:
        raise AgreementInputError(f"--combine {spec!r}: expected NAME=A,B,C")
    return name.strip(), parts


@dataclass(frozen=True)
class AgreementRow:
    dimension: str
    rater_a: str
    rater_b: str
    kappa: float
    n: int
    p_value: float
    p_value_wald: float
    std_err: float


@dataclass
class AgreementResult:
    rows: list[AgreementRow]
    notes: list[str]


def compute_agreement(
    paths: Sequence[Path],
    id_columns: Sequence[str] | None = None,
    combine: Sequence[str] = (),
    weights: Literal["quadratic", "linear"] | None = "quadratic",
    dimensions: Sequence[str] | None = None,
) -> AgreementResult:
    """Read the annotator files, join on ids, and compute kappa for every pair and dimension."""
    if not paths:
        raise AgreementInputError("no annotator files given")
    files = [read_annotator_file(p) for p in paths]
    names: dict[str, Path] = {}
    for f in files:
        if f.name in names:
            raise AgreementInputError(
                f"{f.path}: annotator name {f.name!r} is also used by {names[f.name]}"
            )
        names[f.name] = f.path
    if not id_columns:
        if not files[0].columns:
            raise AgreementInputError(f"{files[0].path}: no named columns")
        id_columns = [files[0].columns[0]]
    for f in files:
        _keys(f, id_columns)
    dims = choose_dimensions(files, id_columns, dimensions)

    all_keys = list(dict.fromkeys(k for f in files for k in f.keys))
    notes: list[str] = []
    for f in files:
        absent = len(all_keys) - len(f.keys)
        if absent:
            notes.append(f"{f.path}: {absent} of {len(all_keys)} ids are not in this file")
    ratings: dict[str, dict[str, list[Value]]] = {}
    for f in files:
        by_dim = {d: _ratings(f, d) for d in dims}
        ratings[f.name] = {d: [by_dim[d].get(k) for k in all_keys] for d in dims}
    for spec in combine:
        name, members = parse_combine(spec)
        if name in ratings:
            raise AgreementInputError(f"--combine {spec!r}: the name {name!r} is already used")
        unknown = [m for m in members if m not in ratings]
        if unknown:
            raise AgreementInputError(
                f"--combine {spec!r}: unknown annotator {unknown[0]!r} "
                f"(known: {', '.join(ratings)})"
            )
        ratings[name] = {d: median_rater(*(ratings[m][d] for m in members)) for d in dims}

    # Pairs among the files first, then each combined annotator with every earlier one.
    names_in_order = list(ratings)
    n_files = len(files)
    pairs = list(combinations(names_in_order[:n_files], 2)) + [
        (earlier, combined)
        for i, combined in enumerate(names_in_order[n_files:], start=n_files)
        for earlier in names_in_order[:i]
    ]
    rows: list[AgreementRow] = []
    for dim in dims:
        for a, b in pairs:
            r = kappa_result(ratings[a][dim], ratings[b][dim], weights)
            rows.append(AgreementRow(dim, a, b, r.kappa, r.n, r.p_value, r.p_value_wald, r.std_err))
    return AgreementResult(rows, notes)


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _row_json(row: AgreementRow) -> dict[str, Any]:
    return {
        "dimension": row.dimension,
        "rater_a": row.rater_a,
        "rater_b": row.rater_b,
        "kappa": _json_float(row.kappa),
        "n": row.n,
        "p_value": _json_float(row.p_value),
        "p_value_wald": _json_float(row.p_value_wald),
        "std_err": _json_float(row.std_err),
    }


def _fmt(value: float, digits: int) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


@click.command("agreement")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--id",
    "id_spec",
    default=None,
    metavar="COL[,COL]",
    help="id column(s) to join rows on (default: the first named column of the first file)",
)
@click.option(
    "--combine",
    "combine",
    multiple=True,
    metavar="NAME=A,B,C",
    help="add an annotator NAME = per-item median of A, B, C (repeatable)",
)
@click.option(
    "--weights",
    type=click.Choice(["quadratic", "linear", "none"]),
    default="quadratic",
    show_default=True,
    help="kappa weights (statsmodels' index-distance weights; none = Cohen's kappa)",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="readable table, CSV (dimension,rater_a,rater_b,kappa,n) or JSON",
)
@click.option(
    "--dimensions",
    default=None,
    metavar="A,B",
    help="rating columns to use (default: the numeric columns common to all files)",
)
def agreement(
    files: tuple[Path, ...],
    id_spec: str | None,
    combine: tuple[str, ...],
    weights: str,
    fmt: str,
    dimensions: str | None,
) -> None:
    """Pairwise weighted Cohen's kappa between annotators, one CSV file per annotator.

    The annotator name is the file stem without a trailing "_ratings". Rows are joined on
    the id column(s); a pair uses the items both annotators rated (n). Ratings are scaled by
    100 and rounded, so fractional means (e.g. crowd averages) are categories of their own,
    as in Kumar et al. (2025). JSON adds p_value (statsmodels' test of kappa = 0) and
    p_value_wald (kappa / its standard error: the "Kappa P-value" of Kumar et al.).
    """
    id_columns = [c.strip() for c in id_spec.split(",") if c.strip()] if id_spec else None
    if id_spec is not None and not id_columns:
        fail("--id: no column given")
    dims = [d.strip() for d in dimensions.split(",") if d.strip()] if dimensions else None
    if dimensions is not None and not dims:
        fail("--dimensions: no column given")
    wt: Literal["quadratic", "linear"] | None = (
        None if weights == "none" else "linear" if weights == "linear" else "quadratic"
    )
    try:
        result = compute_agreement(files, id_columns, combine, wt, dims)
    except AgreementInputError as exc:
        fail(str(exc))
        return
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if fmt == "json":
        json.dump([_row_json(r) for r in result.rows], sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(_CSV_FIELDS)
        for r in result.rows:
            kappa = "" if math.isnan(r.kappa) else repr(round(r.kappa, 6))
            writer.writerow([r.dimension, r.rater_a, r.rater_b, kappa, r.n])
    else:
        kind = {"quadratic": "quadratic-weighted", "linear": "linear-weighted"}.get(
            weights, "unweighted"
        )
        table = Table(
            "dimension", "rater a", "rater b", "kappa", "n", "p", title=f"{kind} Cohen's kappa"
        )
        previous = None
        for r in result.rows:
            if previous is not None and r.dimension != previous:
                table.add_section()
            table.add_row(
                r.dimension if r.dimension != previous else "",
                r.rater_a,
                r.rater_b,
                _fmt(r.kappa, 2),
                str(r.n),
                _fmt(r.p_value, 3),
            )
            previous = r.dimension
        console().print(table)
