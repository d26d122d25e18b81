"""The one JSON Lines reader: the API's batches, ``judge score`` and the label readers use it.

Lines are split on ``\\n`` only (a trailing ``\\r`` is JSON whitespace): ``str.splitlines()``
also splits on U+2028, U+2029 and U+0085, which JSON allows unescaped inside strings, and
would break such a line and the numbering. Each line is decoded on its own, so one line's bad
bytes or bad JSON reject that line only. A UTF-8 byte order mark at the start is skipped.
"""

from __future__ import annotations

import json
from typing import Any

from judge.domain.text_safety import reject_constant
from judge.domain.wire import Rejection
from judge.errors import JsonLinesInvalid

_BOM = b"\xef\xbb\xbf"


def _decode_line(number: int, raw: bytes) -> Any:
    """One line's JSON value; None for a blank line; or the :class:`Rejection` saying why the
    line cannot be read."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _rejected(number, f"not UTF-8 (invalid byte at offset {exc.start})")
    if not text.strip():
        return None
    try:
        return json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        return _rejected(number, f"invalid JSON ({exc.msg})")
    except RecursionError:
        return _rejected(number, "invalid JSON (nested too deeply to read)")
    except ValueError as exc:  # NaN/Infinity, or an integer of thousands of digits
        return _rejected(number, f"invalid JSON ({str(exc).split(':')[0]})")


def _rejected(number: int, message: str) -> Rejection:
    return Rejection(line=number, field="line", message=message)


def parse_jsonl(data: bytes | str) -> list[tuple[int, Any]]:
    """Every non-blank line, numbered from 1: its decoded value, or a :class:`Rejection`."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    lines: list[tuple[int, Any]] = []
    for number, line in enumerate(raw.removeprefix(_BOM).split(b"\n"), start=1):
        value = _decode_line(number, line)
        if value is not None:
            lines.append((number, value))
    return lines


def read_jsonl_strict(data: bytes | str) -> list[tuple[int, Any]]:
    """Every non-blank line's value, numbered from 1; the first line that cannot be read
    raises :class:`~judge.errors.JsonLinesInvalid` naming it (for files that must be whole)."""
    lines = parse_jsonl(data)
    for number, value in lines:
        if isinstance(value, Rejection):
            raise JsonLinesInvalid(number, value.message)
    return lines
