"""What the service refuses to store: characters no database or provider takes, and JSON
shaped to exhaust a parser.

The rules (docs/DESIGN.md section 3, "Hostile input"):

- Ids, names, labels, metadata keys and metadata string values are stored as given, so a NUL
  character (PostgreSQL text cannot hold one) or a lone UTF-16 surrogate (not encodable as
  UTF-8) is refused with the field that carries it. Ids and names also refuse every other
  control character.
- Turn text is kept verbatim, with one exception: NUL characters are removed (they carry no
  meaning; they appear when UTF-16 text is read as UTF-8). A lone surrogate in turn text is
  refused like anywhere else: replacing it would change what the judges read, silently.
- Metadata is any JSON, at most :data:`METADATA_MAX_DEPTH` levels deep and
  :data:`METADATA_MAX_BYTES` bytes, numbers finite and integers within 64 bits.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

METADATA_MAX_DEPTH = 16
METADATA_MAX_BYTES = 65_536
MAX_KEY_CHARS = 200
_INT_LIMIT = 2**63 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _describe(char: str) -> str:
    return f"U+{ord(char):04X}"


def text_problem(text: str, *, controls: bool = False) -> str | None:
    """Why ``text`` cannot be stored as given (None when it can). With ``controls``, any
    control character is refused, not only NUL."""
    if "\x00" in text:
        return "contains a NUL character (U+0000)"
    found = _SURROGATE.search(text)
    if found:
        return (
            f"contains a lone UTF-16 surrogate ({_describe(found.group())}) at position "
            f"{found.start()}: not valid Unicode text"
        )
    if controls:
        found = _CONTROL.search(text)
        if found:
            return f"contains a control character ({_describe(found.group())})"
    return None


def strip_nul(text: str) -> str:
    return text.replace("\x00", "") if "\x00" in text else text


def storable_text(text: str, max_chars: int | None = None) -> str:
    """Text a judge or provider produced (rationales, raw replies, model names), made storable:
    NUL removed, lone surrogates replaced by U+FFFD, cut to ``max_chars``. Callers' input is
    refused instead (see above); a judge's reply is recorded as faithfully as storage allows."""
    text = _SURROGATE.sub("\ufffd", strip_nul(text))
    return text if max_chars is None or len(text) <= max_chars else text[:max_chars]


def json_problem(
    value: Any, *, max_depth: int = METADATA_MAX_DEPTH, max_bytes: int = METADATA_MAX_BYTES
) -> tuple[str, str] | None:
    """The first reason a decoded JSON value cannot be stored, as (path inside it, message),
    or None. Walks iteratively, so no nesting depth can exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict | list) and depth > max_depth:
            return path, f"is nested more than {max_depth} levels deep"
        if isinstance(node, dict):
            for key, child in node.items():
                where = f"{path}.{key}" if isinstance(key, str) and path else str(key)
                if not isinstance(key, str):
                    return path, "object keys must be strings"
                problem = text_problem(key, controls=True)
                if problem or len(key) > MAX_KEY_CHARS:
                    shown = f"{path}.<key>" if path else "<key>"
                    return shown, problem or f"a key is longer than {MAX_KEY_CHARS} characters"
                stack.append((child, where, depth + 1))
        elif isinstance(node, list):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(node))
        elif isinstance(node, str):
            problem = text_problem(node)
            if problem:
                return path, problem
        elif isinstance(node, bool) or node is None:
            continue
        elif isinstance(node, int):
            if abs(node) > _INT_LIMIT:
                return path, "integer out of range (at most 64 bits)"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return path, "numbers must be finite (no NaN or Infinity)"
        else:
            return path, f"is not a JSON value ({type(node).__name__})"
    size = len(json.dumps(value, ensure_ascii=False).encode())
    if size > max_bytes:
        return "", f"is {size} bytes as JSON; at most {max_bytes}"
    return None


def reject_constant(name: str) -> Any:
    """``parse_constant`` for :func:`json.loads`: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not a JSON number")
