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
from pathlib import Path
from typing import Any, Literal

import click

from judge.calibration import (
    CSV_FIELDS,
    AgreementResult,
    AgreementRow,
    AlphaRow,
    Categories,
    compute_agreement,
)
from judge.cli._output import console, fail, wrapping_table
from judge.errors import AgreementInputError, AnnotatorFileError
from judge.labels.annotator_files import read_annotator_file


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
    table = wrapping_table("dimension", "rater a", "rater b", "kappa", "n", "p", title=title)
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
        alphas = wrapping_table(
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
        annotators = [read_annotator_file(p) for p in files]
        result = compute_agreement(annotators, id_columns, combine, wt, dims, chosen, levels)
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
        writer.writerow(CSV_FIELDS)
        for r in result.rows:
            kappa = "" if math.isnan(r.kappa) else repr(round(r.kappa, 6))
            writer.writerow([r.dimension, r.rater_a, r.rater_b, kappa, r.n])
    else:
        _print_table(result, weights, categories)
