"""One reader for annotator CSV files, shared by ``judge agreement`` and calibration.

A file holds one annotator's ratings (the annotator is the file stem without a trailing
``_ratings``) or, in long form, an ``annotator`` column. UTF-8 with or without a BOM; unnamed
index columns (pandas' ``Unnamed: 0``) are dropped; blank lines are skipped. One definition of
a missing cell: empty, ``na``, ``n/a``, ``nan``, ``null`` or ``none`` (any case).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from judge.errors import AnnotatorFileError

Key = tuple[str, ...]
MISSING_CELLS = frozenset({"", "na", "n/a", "nan", "null", "none"})
_UNNAMED = re.compile(r"^Unnamed: \d+(_level_\d+)?$")


def is_missing(cell: str) -> bool:
    return cell.strip().lower() in MISSING_CELLS


@dataclass
class AnnotatorFile:
    """One annotator's CSV: named columns (unnamed index columns dropped) and raw cells."""

    name: str
    path: Path
    columns: list[str]
    rows: list[tuple[int, dict[str, str]]] = field(default_factory=list)  # (line, cells)
    keys: list[Key] = field(default_factory=list)

    @property
    def records(self) -> list[dict[str, str]]:
        return [cells for _, cells in self.rows]


def annotator_name(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_ratings")] if stem.endswith("_ratings") and stem != "_ratings" else stem


def _is_unnamed(column: str) -> bool:
    return not column or _UNNAMED.match(column) is not None


def read_annotator_file(path: Path) -> AnnotatorFile:
    """Read one annotator CSV; cells are stripped of surrounding blanks."""
    if not path.exists():
        raise AnnotatorFileError(f"{path}: no such file")
    if not path.is_file():
        raise AnnotatorFileError(f"{path}: not a file")
    # conversation columns can be long; the csv module refuses fields over 128 KiB by default
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 24))
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise AnnotatorFileError(f"{path}: empty file (no header row)")
            header = [h.strip() for h in header]
            keep = [(i, h) for i, h in enumerate(header) if not _is_unnamed(h)]
            names = [h for _, h in keep]
            dupes = sorted({h for h in names if names.count(h) > 1})
            if dupes:
                raise AnnotatorFileError(f"{path}: column {dupes[0]!r} appears more than once")
            result = AnnotatorFile(annotator_name(path), path, names)
            for row in reader:
                if not any(cell.strip() for cell in row):
                    continue
                if len(row) != len(header):
                    raise AnnotatorFileError(
                        f"{path}:{reader.line_num}: {len(row)} fields, the header has {len(header)}"
                    )
                result.rows.append((reader.line_num, {h: row[i].strip() for i, h in keep}))
    except OSError as exc:
        raise AnnotatorFileError(f"{path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise AnnotatorFileError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    except csv.Error as exc:
        raise AnnotatorFileError(f"{path}: malformed CSV: {exc}") from exc
    return result
