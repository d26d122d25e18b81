"""What a listing of runs (``GET /v1/batches``, ``/v1/calibrations``, ``/v1/probes``) shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ListFilter:
    """Which runs a listing shows (None: any) and which page of them."""

    rubric: str | None = None
    panel: str | None = None
    status: str | None = None
    offset: int = 0
    limit: int = 50

    def paged(self, found: list[T]) -> tuple[list[T], int | None]:
        """This page of ``found`` (read with ``limit + 1`` rows) and the next page's offset
        (None on the last page)."""
        more = len(found) > self.limit
        return found[: self.limit], self.offset + self.limit if more else None
