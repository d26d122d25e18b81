"""Which calibration run feeds the flags of a rubric and panel (docs/DESIGN.md section 2).

Runs match on the rubric's *content hash* (not its version string) and the panel's signature
(models and parameters). Per dimension, the applicable run is the latest completed one whose
independent units reach the policy's ``min_items``; a later, smaller run is stored and reported
but does not displace it. Only when no run has enough items does the latest run apply (its
flags then say ``insufficient_calibration``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Protocol

from pydantic import TypeAdapter
from sqlalchemy import select
from sqlmodel import col

from judge.domain.flags import Calibration, FlagEvidence
from judge.domain.rubric import Rubric
from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun

COMPLETED = "completed"
_PAGE = 25


class _Panel(Protocol):
    def signature(self) -> str: ...


#: a run's ``dimensions_json``: per dimension, the evidence its flags weigh
STORED_EVIDENCE: TypeAdapter[dict[str, FlagEvidence]] = TypeAdapter(dict[str, FlagEvidence])


def evidence_json(evidence: Mapping[str, FlagEvidence]) -> str:
    """A run's ``dimensions_json`` (what :func:`applicable_calibrations` reads)."""
    return json.dumps(STORED_EVIDENCE.dump_python(dict(evidence), mode="json"))


async def applicable_calibrations(
    database: Database,
    *,
    rubric_hash: str,
    panel_signature: str,
    min_items: int,
    dimensions: frozenset[str],
) -> dict[str, Calibration]:
    """Per dimension: the latest run with units >= ``min_items``, else the latest run at all.

    Reads runs newest first, a page at a time, and stops once every dimension in
    ``dimensions`` has a run with enough items.
    """
    latest: dict[str, Calibration] = {}
    enough: dict[str, Calibration] = {}
    offset = 0
    async with database.session() as session:
        while True:
            rows = await session.execute(
                select(
                    col(CalibrationRun.id),
                    col(CalibrationRun.dimensions_json),
                    col(CalibrationRun.simulated),
                )
                .where(
                    col(CalibrationRun.rubric_hash) == rubric_hash,
                    col(CalibrationRun.status) == COMPLETED,
                    col(CalibrationRun.panel_signature) == panel_signature,
                )
                .order_by(col(CalibrationRun.finished_at).desc(), col(CalibrationRun.id))
                .offset(offset)
                .limit(_PAGE)
            )
            page = rows.all()
            for run_id, dimensions_json, simulated in page:
                for dim, evidence in STORED_EVIDENCE.validate_json(dimensions_json).items():
                    found = Calibration.of(run_id, evidence, simulated=bool(simulated))
                    latest.setdefault(dim, found)
                    if found.independent_units >= min_items:
                        enough.setdefault(dim, found)
            if len(page) < _PAGE or dimensions <= enough.keys():
                break
            offset += _PAGE
    return latest | enough


class SqlCalibrations:
    """Looks up the applicable runs, remembering answers for a few seconds."""

    def __init__(self, database: Database, *, ttl_s: float = 5.0) -> None:
        self._db = database
        self._ttl = ttl_s
        self._memo: dict[tuple[str, str, int], tuple[float, dict[str, Calibration]]] = {}

    def forget(self) -> None:
        self._memo.clear()

    async def latest(
        self, rubric: Rubric, panel: _Panel, min_items: int
    ) -> Mapping[str, Calibration]:
        key = (rubric.content_hash, panel.signature(), min_items)
        hit = self._memo.get(key)
        now = time.monotonic()
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        found = await applicable_calibrations(
            self._db,
            rubric_hash=key[0],
            panel_signature=key[1],
            min_items=min_items,
            dimensions=frozenset(d.id for d in rubric.dimensions if d.scale.type != "free_text"),
        )
        self._memo[key] = (now, found)
        return found
