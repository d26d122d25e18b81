"""Path and query parameters, and texts, that several resources share."""

from __future__ import annotations

from typing import Annotated

from litestar.params import Parameter

from judge.api.idempotency import HEADER as IDEMPOTENCY_KEY

#: ids the service hands out (uuid4 hex); any other path id is refused before a query
ID_PATTERN = r"^[0-9a-f]{32}$"


JobId = Annotated[str, Parameter(pattern=ID_PATTERN, description="an id the service returned")]


#: bounds of the columns these names are stored in (judge/persistence/tables.py)
RUBRIC_ID_MAX, RUBRIC_VERSION_MAX, PANEL_MAX = 100, 20, 100


IDEMPOTENCY_DOC = (
    f"Send an `{IDEMPOTENCY_KEY}` header (any 1-255 visible ASCII characters) to make a "
    "retry safe: the same key with the same request returns the first submission (for 24 h)."
)
