"""Pairwise agreement between annotator files (``judge agreement``): weighted kappa per pair of
annotators and dimension over the items both rated, Krippendorff's alpha (nominal) over every
file for text-label columns, and optional per-item majority/median annotators (``--combine``).

Numeric columns are weighed over the categories either rater used by default (that reproduces
the kappa table of Kumar et al. on their release), or over every level of a scale. Columns of
text labels are nominal: unweighted Cohen's kappa per pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Literal

import numpy as np

from judge.errors import AgreementInputError
from judge.labels.annotator_files import (
    AnnotatorFile,
    Key,
    is_missing,
)
from judge.reliability import (
    KappaResult,
    kappa_from_table,
    kappa_result,
    krippendorff_alpha,
    median_rater,
    scale_kappa_result,
)

Value = float | str | None
Kind = Literal["numeric", "labels", "text"]
Categories = Literal["observed", "scale"]

_TEXT_COLUMNS = frozenset({"full_conversation"})
CSV_FIELDS = ("dimension", "rater_a", "rater_b", "kappa", "n")
_MAX_LABELS = 50
_MAX_LABEL_CHARS = 60
_MAX_LABEL_WORDS = 4


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
    files: Sequence[AnnotatorFile],
    id_columns: Sequence[str] | None = None,
    combine: Sequence[str] = (),
    weights: Literal["quadratic", "linear"] | None = "quadratic",
    dimensions: Sequence[str] | None = None,
    categories: Categories = "observed",
    scale_levels: Callable[[str], Sequence[float]] | None = None,
) -> AgreementResult:
    """Join the annotator files on ids and compute kappa for every pair and dimension.

    Numeric dimensions: weighted kappa over the observed categories (``categories="observed"``,
    Kumar et al.'s computation) or over every level ``scale_levels(dimension)`` returns
    (``"scale"``). Label dimensions: unweighted Cohen's kappa, and Krippendorff's alpha
    (nominal) over the annotator files; a ``--combine`` annotator is then the majority label.
    """
    if not files:
        raise AgreementInputError("no annotator files given")
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
