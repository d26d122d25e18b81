"""Log lines that a caller cannot forge: control characters in a record's message (a request
path decoded from ``%0A``, a header value echoed in a detail) are written as escapes, so one
record is always one line and cannot move the terminal's cursor or colours. Tracebacks, which
the formatter appends after the message, keep their lines."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

#: C0 and C1 controls, DEL, and the Unicode line and paragraph separators
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_controls(text: str) -> str:
    """``text`` with every control character as ``\\xNN`` or ``\\uNNNN``."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def install() -> None:
    """Make every log record of this process escape its message (idempotent)."""
    current: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()
    if getattr(current, "escapes_controls", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        message = record.getMessage
        record.getMessage = lambda: escape_controls(message())  # type: ignore[method-assign]
        return record

    factory.escapes_controls = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
