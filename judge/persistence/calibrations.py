"""Calibration runs: the latest completed run of a panel on a rubric version feeds the flags."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Protocol

from sqlalchemy import select
from sqlmodel import col

from judge.domain.flags import Calibration
from judge.domain.rubric import Rubric
from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun

COMPLETED = "completed"


class _Panel(Protocol):
    def signature(self) -> str: ...


async def latest_run(
    database: Database, *, rubric_id: str, rubric_version: str, panel_signature: str
) -> CalibrationRun | None:
    async with database.session() as session:
        rows = await session.execute(
            select(CalibrationRun)
            .where(
                col(CalibrationRun.rubric_id) == rubric_id,
                col(CalibrationRun.rubric_version) == rubric_version,
                col(CalibrationRun.status) == COMPLETED,
                col(CalibrationRun.panel_signature) == panel_signature,
            )
            .order_by(col(CalibrationRun.finished_at).desc())
            .limit(1)
        )
        return rows.scalars().first()


def calibrations_of(run: CalibrationRun) -> dict[str, Calibration]:
    per_dim: dict[str, dict[str, float | None]] = json.loads(run.dimensions_json)
    return {
        dim: Calibration(
            run_id=run.id, judge_kappa=v.get("judge_kappa"), expert_kappa=v.get("expert_kappa")
        )
        for dim, v in per_dim.items()
    }


class SqlCalibrations:
    """Looks up the latest matching run, remembering answers for a few seconds."""

    def __init__(self, database: Database, *, ttl_s: float = 5.0) -> None:
        self._db = database
        self._ttl = ttl_s
        self._memo: dict[tuple[str, str, str], tuple[float, dict[str, Calibration]]] = {}

    def forget(self) -> None:
        self._memo.clear()

    async def latest(self, rubric: Rubric, panel: _Panel) -> Mapping[str, Calibration]:
        key = (rubric.id, rubric.version, panel.signature())
        hit = self._memo.get(key)
        now = time.monotonic()
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        run = await latest_run(
            self._db, rubric_id=rubric.id, rubric_version=rubric.version, panel_signature=key[2]
        )
        found = calibrations_of(run) if run is not None else {}
        self._memo[key] = (now, found)
        return found
