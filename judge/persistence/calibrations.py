"""Which calibration run feeds the flags of a rubric and panel (docs/DESIGN.md section 2).

Only runs the scored item's owner may rely on count: its own (keyless items: keyless runs)
and those an admin published as shared. Runs match on the rubric's *content hash* (not its
version string) and the panel's signature (models, parameters and endpoints). Per dimension,
the applicable run is the latest completed one whose independent units reach the policy's
``min_items``; a later, smaller run is stored and reported but does not displace it. Only when
no run has enough units does the latest run apply (its flags then say
``insufficient_calibration``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

from pydantic import TypeAdapter
from sqlalchemy import select, true, update
from sqlalchemy.sql.elements import ColumnElement
from sqlmodel import col

from judge.domain.flags import Calibration, FlagEvidence
from judge.domain.rubric import Rubric
from judge.persistence.database import Database
from judge.persistence.memo import TtlMemo
from judge.persistence.tables import CalibrationRun, CalibrationShare, utcnow

COMPLETED = "completed"
_PAGE = 25


class _Panel(Protocol):
    def signature(self) -> str: ...


#: a run's ``dimensions_json``: per dimension, the evidence its flags weigh
STORED_EVIDENCE: TypeAdapter[dict[str, FlagEvidence]] = TypeAdapter(dict[str, FlagEvidence])


def evidence_json(evidence: Mapping[str, FlagEvidence]) -> str:
    """A run's ``dimensions_json`` (what :func:`applicable_calibrations` reads)."""
    return json.dumps(STORED_EVIDENCE.dump_python(dict(evidence), mode="json"))


def relied_on_by(owner: str | None) -> ColumnElement[bool]:
    """The runs whose evidence may decide the flags of ``owner``'s items (None: keyless)."""
    mine = col(CalibrationRun.owner_key_id)
    return (mine.is_(None) if owner is None else mine == owner) | (
        col(CalibrationRun.shared) == true()
    )


async def applicable_calibrations(
    database: Database,
    *,
    owner: str | None,
    rubric_hash: str,
    panel_signature: str,
    min_items: int,
    dimensions: frozenset[str],
) -> dict[str, Calibration]:
    """Per dimension, of the runs ``owner`` may rely on (:func:`relied_on_by`): the latest
    run with units >= ``min_items``, else the latest run at all.

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
                    relied_on_by(owner),
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
        self._memo: TtlMemo[tuple[str | None, str, str, int], dict[str, Calibration]] = TtlMemo(
            ttl_s
        )

    def forget(self) -> None:
        self._memo.forget()

    async def latest(
        self, rubric: Rubric, panel: _Panel, min_items: int, *, owner: str | None
    ) -> Mapping[str, Calibration]:
        key = (owner, rubric.content_hash, panel.signature(), min_items)
        dimensions = frozenset(d.id for d in rubric.dimensions if d.scale.type != "free_text")
        return await self._memo.get(
            key,
            lambda: applicable_calibrations(
                self._db,
                owner=owner,
                rubric_hash=key[1],
                panel_signature=key[2],
                min_items=min_items,
                dimensions=dimensions,
            ),
        )


async def visibility(database: Database, run_id: str) -> tuple[bool, str | None, bool]:
    """Whether the run exists, the key that started it (None: keyless) and whether it is
    shared (then every key may read it)."""
    async with database.session() as session:
        rows = await session.execute(
            select(col(CalibrationRun.owner_key_id), col(CalibrationRun.shared)).where(
                col(CalibrationRun.id) == run_id
            )
        )
        found = rows.first()
    if found is None:
        return False, None, False
    return True, found[0], bool(found[1])


async def set_shared(database: Database, run_id: str, *, shared: bool, by: str | None) -> bool:
    """Publish the run for every key (or withdraw it) and record the decision; False when
    there is no such run."""
    now = utcnow()
    async with database.session() as session:
        done = await session.execute(
            update(CalibrationRun)
            .where(col(CalibrationRun.id) == run_id)
            .values(shared=shared, shared_by=by, shared_at=now)
        )
        if not getattr(done, "rowcount", 0):
            return False
        session.add(CalibrationShare(run_id=run_id, shared=shared, by_key_id=by, at=now))
        await session.commit()
    return True
