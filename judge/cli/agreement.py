"""``judge agreement FILE...``: pairwise kappa between annotator CSV files.

One CSV per annotator (annotator name = file stem without a trailing ``_ratings``), rows
joined on the id column(s), one column per dimension. Numeric columns get weighted kappa over
the observed categories by default, which reproduces the kappa table of Kumar et al. (2025)
on their release (``--combine experts=expert1,expert2,expert3``), or over every level of a
scale (``--categories scale`` with ``--rubric`` or ``--scale``). Columns of text labels
(behaviour codes, yes/no, pattern names) are nominal: unweighted Cohen's kappa per pair and
Krippendorff's alpha (nominal) over all annotator files.
"""

from __future__ import annotations

import csv
import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any, Literal

import click
import numpy as np
from rich.table import Table

from judge.cli._output import console, fail
from judge.reliability import (
    KappaResult,
    kappa_from_table,
    kappa_result,
    krippendorff_alpha,
    median_rater,
    scale_kappa_result,
)
from judge.services.annotator_files import (
    AnnotatorFile,
    AnnotatorFileError,
    Key,
    is_missing,
    read_annotator_file,
)

Value = float | str | None
Kind = Literal["numeric", "labels", "text"]
Categories = Literal["observed", "scale"]

_TEXT_COLUMNS = frozenset({"full_conversation"})
_CSV_FIELDS = ("dimension", "rater_a", "rater_b", "kappa", "n")
_MAX_LABELS = 50
_MAX_LABEL_CHARS = 60
_MAX_LABEL_WORDS = 4


class AgreementInputError(AnnotatorFileError):
    """Bad input for ``judge agreement``; the message names the file and column."""


def _number(cell: str) -> float | None:
    """A cell as a rating: None if missing, NaN-free float, or raise ValueError."""
    if is_missing(cell):
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


def column_kind(f: AnnotatorFile, column: str) -> Kind:
    """``numeric`` when most filled cells are numbers; ``labels`` when the text repeats a
    small set of short values (codes, yes/no, pattern names); else free ``text`` (ids,
    comments, conversation text), which is never a rating column."""
    if column in _TEXT_COLUMNS:
        return "text"
    cells = [cells[column] for _, cells in f.rows if not is_missing(cells[column])]
    numeric = sum(_parses(c) for c in cells)
    if len(cells) - numeric <= numeric:
        return "numeric"
    distinct = set(cells)
    if (
        len(distinct) <= max(2, len(cells) // 2)
        and len(distinct) <= _MAX_LABELS
        and all(len(c) <= _MAX_LABEL_CHARS and len(c.split()) <= _MAX_LABEL_WORDS for c in distinct)
    ):
        return "labels"
    return "text"


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
) -> dict[str, Kind]:
    """The rating columns and their kind: ``requested``, or the numeric and label columns
    common to every file (a column that is numeric in one file and text in another is an
    error naming both files)."""
    if requested is not None:
        for f in files:
            for column in requested:
                if column not in f.columns:
                    raise AgreementInputError(f"{f.path}: no column {column!r} (--dimensions)")
        return {
            c: "labels" if any(column_kind(f, c) == "labels" for f in files) else "numeric"
            for c in requested
        }
    common: list[str] | None = None
    for f in files:
        own = [c for c in f.columns if c not in id_columns]
        common = own if common is None else [c for c in common if c in own]
    chosen: dict[str, Kind] = {}
    for column in common or []:
        kinds = {f.path: column_kind(f, column) for f in files}
        found = set(kinds.values())
        if found in ({"numeric"}, {"labels"}):
            chosen[column] = "numeric" if found == {"numeric"} else "labels"
        elif "numeric" in found and column not in _TEXT_COLUMNS:
            numeric_in = next(p for p, k in kinds.items() if k == "numeric")
            bad = next(p for p, k in kinds.items() if k != "numeric")
            raise AgreementInputError(
                f"{bad}: column {column!r} holds text, but it is a numeric rating "
                f"column in {numeric_in}"
            )
    if not chosen:
        running: list[str] | None = None
        for f in files:
            own = [c for c in f.columns if c not in id_columns and column_kind(f, c) != "text"]
            if not own:
                raise AgreementInputError(
                    f"{f.path}: no rating columns (numbers or a small set of text labels)"
                )
            if running is not None and not [c for c in running if c in own]:
                raise AgreementInputError(
                    f"{f.path}: no rating column in common with "
                    f"{', '.join(str(g.path) for g in files[: files.index(f)])}"
                )
            running = own if running is None else [c for c in running if c in own]
        raise AgreementInputError("the files have no rating column of the same kind in common")
    return chosen


def _ratings(f: AnnotatorFile, dimension: str, kind: Kind) -> dict[Key, Value]:
    values: dict[Key, Value] = {}
    for key, (line, cells) in zip(f.keys, f.rows, strict=True):
        cell = cells[dimension]
        if kind == "labels":
            values[key] = None if is_missing(cell) else cell
            continue
        try:
            values[key] = _number(cell)
        except ValueError:
            raise AgreementInputError(
                f"{f.path}:{line}: column {dimension!r}: non-numeric rating {cell!r}"
            ) from None
    return values


def majority_rater(*raters: Sequence[Value]) -> list[Value]:
    """Per-item majority label of nominal raters; a tie or no label at all is missing."""
    out: list[Value] = []
    for values in zip(*raters, strict=True):
        present = [v for v in values if v is not None]
        counts = {v: present.count(v) for v in present}
        best = max(counts.values(), default=0)
        winners = [v for v, c in counts.items() if c == best]
        out.append(winners[0] if len(winners) == 1 else None)
    return out


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
    statistic: str = "weighted_kappa_quadratic"
    categories: str = "observed"


@dataclass(frozen=True)
class AlphaRow:
    """Krippendorff's alpha (nominal) of a label dimension over every annotator file."""

    dimension: str
    alpha: float
    raters: int
    items: int


@dataclass
class AgreementResult:
    rows: list[AgreementRow]
    notes: list[str]
    alphas: list[AlphaRow] = field(default_factory=list)


def _label_kappa(a: Sequence[Value], b: Sequence[Value]) -> KappaResult:
    """Unweighted Cohen's kappa of two nominal raters (items both labelled), with the
    statsmodels standard errors and p-values (as scikit-learn's ``cohen_kappa_score``)."""
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    index = {v: i for i, v in enumerate(dict.fromkeys(v for pair in pairs for v in pair))}
    table = np.zeros((len(index), len(index)), dtype=np.float64)
    for x, y in pairs:
        table[index[x], index[y]] += 1
    return kappa_from_table(table, None)


def _weights_name(weights: Literal["quadratic", "linear"] | None) -> str:
    return f"weighted_kappa_{weights}" if weights else "cohens_kappa"


def _pair_result(
    kind: Kind,
    a: Sequence[Value],
    b: Sequence[Value],
    weights: Literal["quadratic", "linear"] | None,
    levels: Sequence[float] | None,
) -> KappaResult:
    if kind == "labels":
        return _label_kappa(a, b)
    if levels is not None:
        return scale_kappa_result(a, b, levels, weights)
    return kappa_result(a, b, weights)


def compute_agreement(
    paths: Sequence[Path],
    id_columns: Sequence[str] | None = None,
    combine: Sequence[str] = (),
    weights: Literal["quadratic", "linear"] | None = "quadratic",
    dimensions: Sequence[str] | None = None,
    categories: Categories = "observed",
    scale_levels: Callable[[str], Sequence[float]] | None = None,
) -> AgreementResult:
    """Read the annotator files, join on ids, and compute kappa for every pair and dimension.

    Numeric dimensions: weighted kappa over the observed categories (``categories="observed"``,
    Kumar et al.'s computation) or over every level ``scale_levels(dimension)`` returns
    (``"scale"``). Label dimensions: unweighted Cohen's kappa, and Krippendorff's alpha
    (nominal) over the annotator files; a ``--combine`` annotator is then the majority label.
    """
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
    levels: dict[str, Sequence[float] | None] = {}
    for dim, kind in dims.items():
        if kind == "numeric" and categories == "scale":
            if scale_levels is None:
                raise AgreementInputError("--categories scale needs --rubric or --scale")
            levels[dim] = scale_levels(dim)
        else:
            levels[dim] = None

    all_keys = list(dict.fromkeys(k for f in files for k in f.keys))
    notes: list[str] = []
    for f in files:
        absent = len(all_keys) - len(f.keys)
        if absent:
            notes.append(f"{f.path}: {absent} of {len(all_keys)} ids are not in this file")
    ratings: dict[str, dict[str, list[Value]]] = {}
    for f in files:
        by_dim = {d: _ratings(f, d, kind) for d, kind in dims.items()}
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
        ratings[name] = {
            d: (
                majority_rater(*(ratings[m][d] for m in members))
                if kind == "labels"
                else list(median_rater(*(ratings[m][d] for m in members)))
            )
            for d, kind in dims.items()
        }

    # Pairs among the files first, then each combined annotator with every earlier one.
    names_in_order = list(ratings)
    n_files = len(files)
    pairs = list(combinations(names_in_order[:n_files], 2)) + [
        (earlier, combined)
        for i, combined in enumerate(names_in_order[n_files:], start=n_files)
        for earlier in names_in_order[:i]
    ]
    rows: list[AgreementRow] = []
    alphas: list[AlphaRow] = []
    for dim, kind in dims.items():
        statistic = "cohens_kappa" if kind == "labels" else _weights_name(weights)
        used = "nominal" if kind == "labels" else categories
        for a, b in pairs:
            try:
                r = _pair_result(kind, ratings[a][dim], ratings[b][dim], weights, levels[dim])
            except ValueError as exc:
                raise AgreementInputError(f"column {dim!r}, {a} vs {b}: {exc}") from None
            rows.append(
                AgreementRow(
                    dim, a, b, r.kappa, r.n, r.p_value, r.p_value_wald, r.std_err, statistic, used
                )
            )
        if kind == "labels":
            data = [ratings[f.name][dim] for f in files]
            rated = sum(1 for i in range(len(all_keys)) if sum(d[i] is not None for d in data) >= 2)
            alphas.append(AlphaRow(dim, krippendorff_alpha(data, "nominal"), len(files), rated))
    return AgreementResult(rows, notes, alphas)


def _json_float(value: float) -> float | None:
    return None if math.isnan(value) else value


def _row_json(row: AgreementRow, alphas: dict[str, AlphaRow]) -> dict[str, Any]:
    out = {
        "dimension": row.dimension,
        "rater_a": row.rater_a,
        "rater_b": row.rater_b,
        "kappa": _json_float(row.kappa),
        "n": row.n,
        "p_value": _json_float(row.p_value),
        "p_value_wald": _json_float(row.p_value_wald),
        "std_err": _json_float(row.std_err),
        "statistic": row.statistic,
        "categories": row.categories,
    }
    alpha = alphas.get(row.dimension)
    if alpha is not None:
        out["alpha_nominal_all_files"] = _json_float(alpha.alpha)
    return out


def _fmt(value: float, digits: int) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def parse_scale(spec: str) -> list[float]:
    """``LO..HI`` (integers) as the list of levels."""
    low, sep, high = spec.partition("..")
    try:
        lo, hi = int(low), int(high)
    except ValueError:
        lo = hi = 0
    if not sep or hi <= lo:
        raise AgreementInputError(f"--scale {spec!r}: expected LO..HI with integers LO < HI")
    return [float(v) for v in range(lo, hi + 1)]


def rubric_levels(rubric_id: str) -> Callable[[str], Sequence[float]]:
    """Levels of the ordinal dimension a column names (id or alias) in rubric ``rubric_id``."""
    from judge.errors import JudgeError
    from judge.rubrics import RubricRegistry
    from judge.settings import load_settings

    try:
        rubric = RubricRegistry.from_directory(load_settings().rubrics_dir).get(rubric_id)
    except JudgeError as exc:
        raise AgreementInputError(f"--rubric: {exc}") from None
    names = rubric.dimension_names()

    def levels(column: str) -> Sequence[float]:
        if column not in names:
            raise AgreementInputError(
                f"--categories scale: column {column!r} is not a dimension of rubric "
                f"{rubric.id!r} (nor an alias)"
            )
        scale = rubric.dimension(names[column]).scale
        if scale.type != "ordinal":
            raise AgreementInputError(
                f"--categories scale: {column!r} is a {scale.type} dimension of {rubric.id!r}"
            )
        return [float(v) for v in range(scale.min, scale.max + 1)]

    return levels


def _print_table(result: AgreementResult, weights: str, categories: str) -> None:
    kind = {"quadratic": "quadratic-weighted", "linear": "linear-weighted"}.get(
        weights, "unweighted"
    )
    where = "every level of the scale" if categories == "scale" else "the observed categories"
    title = f"{kind} Cohen's kappa over {where}"
    if result.alphas:
        title += "; text-label columns: unweighted Cohen's kappa"
    table = Table("dimension", "rater a", "rater b", "kappa", "n", "p", title=title)
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
    if result.alphas:
        alphas = Table(
            "dimension", "alpha", "annotators", "items", title="Krippendorff's alpha (nominal)"
        )
        for a in result.alphas:
            alphas.add_row(a.dimension, _fmt(a.alpha, 3), str(a.raters), str(a.items))
        console().print(alphas)


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
    help="add an annotator NAME = per-item median of A, B, C (majority for text labels)",
)
@click.option(
    "--weights",
    type=click.Choice(["quadratic", "linear", "none"]),
    default="quadratic",
    show_default=True,
    help="kappa weights of numeric columns (none = Cohen's kappa)",
)
@click.option(
    "--categories",
    type=click.Choice(["observed", "scale"]),
    default="observed",
    show_default=True,
    help="numeric columns: weigh over the categories either rater used (Kumar et al.) or "
    "over every level of the scale (needs --rubric or --scale)",
)
@click.option("--rubric", "rubric_id", default=None, help="--categories scale: the rubric's scales")
@click.option("--scale", "scale_spec", default=None, metavar="LO..HI", help="--categories scale")
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
    help="rating columns to use (default: the numeric and label columns common to all files)",
)
def agreement(
    files: tuple[Path, ...],
    id_spec: str | None,
    combine: tuple[str, ...],
    weights: str,
    categories: str,
    rubric_id: str | None,
    scale_spec: str | None,
    fmt: str,
    dimensions: str | None,
) -> None:
    """Pairwise Cohen's kappa between annotators, one CSV file per annotator.

    The annotator name is the file stem without a trailing "_ratings". Rows are joined on
    the id column(s); a pair uses the items both annotators rated (n). Numeric ratings: by
    default scaled by 100 and rounded, so fractional means (e.g. crowd averages) are
    categories of their own, and weighted over the observed categories, as in Kumar et al.
    (2025); --categories scale weighs over every level of the scale instead (scikit-learn's
    labels=<all levels>). Text-label columns are nominal: unweighted Cohen's kappa per pair
    plus Krippendorff's alpha over all files. JSON adds p_value (statsmodels' test of
    kappa = 0), p_value_wald (the "Kappa P-value" of Kumar et al.), statistic and categories.
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
        levels: Callable[[str], Sequence[float]] | None = None
        if scale_spec is not None:
            fixed = parse_scale(scale_spec)
            levels = lambda _column: fixed  # noqa: E731
        elif rubric_id is not None:
            levels = rubric_levels(rubric_id)
        chosen: Categories = "scale" if categories == "scale" else "observed"
        result = compute_agreement(files, id_columns, combine, wt, dims, chosen, levels)
    except AnnotatorFileError as exc:
        fail(str(exc))
        return
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    alphas = {a.dimension: a for a in result.alphas}
    if fmt == "json":
        rows = [_row_json(r, alphas) for r in result.rows]
        json.dump(rows, sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(_CSV_FIELDS)
        for r in result.rows:
            kappa = "" if math.isnan(r.kappa) else repr(round(r.kappa, 6))
            writer.writerow([r.dimension, r.rater_a, r.rater_b, kappa, r.n])
    else:
        _print_table(result, weights, categories)
