"""Canaries: a completed calibration run re-scored on a schedule to detect judge drift.

Each canary run repeats its baseline run's items and expert labels with the same panel,
bypassing the LLM call cache (a cached answer cannot reveal a changed model). When it
completes, every judge and dimension is compared with the baseline: change in kappa against
the experts, shift of the mean rating (on a 0..1 scale), change in abstention rate (see
:mod:`judge.services.canary_drift`). The comparison is stored with the run;
:mod:`judge.runtime.run_gauges` exports it as gauges.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from judge.domain.calibration_report import CalibrationReport
from judge.domain.principal import Principal
from judge.domain.wire import CanaryView, ReliabilityHistory
from judge.errors import BaselineNotCompleted, CanaryNotFound
from judge.persistence import canaries as store
from judge.persistence import runs
from judge.persistence.canaries import ALL, Owners
from judge.persistence.tables import CalibrationRun, Canary, utcnow
from judge.services.access import can_read, readable_owners
from judge.services.calibrations import CalibrationService

__all__ = ["ALL", "CanaryService", "Owners"]


@dataclass
class CanaryService:
    calibrations: CalibrationService

    @property
    def _db(self) -> Any:
        return self.calibrations.jobs.database

    async def register(
        self, who: Principal, *, baseline_run_id: str, interval_s: float, name: str | None
    ) -> CanaryView:
        """A canary of ``who`` on a completed calibration run ``who`` may read."""
        baseline = await runs.get_run(self._db, CalibrationRun, baseline_run_id)
        if (
            baseline is None
            or baseline.status != "completed"
            or not can_read(who, baseline.owner_key_id)
        ):
            raise BaselineNotCompleted(baseline_run_id)
        canary = Canary(
            id=uuid.uuid4().hex,
            name=name or f"{baseline.rubric_id}-{baseline.panel_name}",
            rubric_id=baseline.rubric_id,
            panel_name=baseline.panel_name,
            baseline_run_id=baseline.id,
            interval_s=interval_s,
            owner_key_id=who.owner,
        )
        await store.add(self._db, canary)
        return canary_view(canary)

    async def listed(self, who: Principal) -> list[CanaryView]:
        """The canaries ``who`` may see: its own (admin: all)."""
        return [canary_view(c) for c in await self.all(owners=readable_owners(who))]

    async def all(self, rubric_id: str | None = None, *, owners: Owners = ALL) -> list[Canary]:
        return await store.listed(self._db, rubric_id, owners=owners)

    async def due(self) -> list[Canary]:
        now = utcnow()
        return [
            c
            for c in await self.all()
            if c.enabled
            and (c.last_run_at is None or c.last_run_at + timedelta(seconds=c.interval_s) <= now)
        ]

    async def start(self, canary_id: str) -> tuple[CalibrationRun, list[str]]:
        """Submit a canary run now (the caller dispatches the job ids)."""
        canary = await store.get(self._db, canary_id)
        if canary is None:
            raise CanaryNotFound(canary_id)
        await store.mark_started(self._db, canary_id)
        return await self.calibrations.repeat(
            canary.baseline_run_id, canary_id=canary.id, label=f"canary:{canary.name}"
        )

    async def history(
        self, who: Principal, rubric_id: str, *, offset: int = 0, limit: int = 50
    ) -> ReliabilityHistory:
        """What GET /v1/reliability/{rubric_id} shows: calibrations and every canary's runs,
        ``limit`` runs from ``offset`` (oldest first), of those ``who`` may read."""
        self.calibrations.jobs.registry.get(rubric_id, field="rubric_id")
        owners = readable_owners(who)
        found = await store.calibration_runs(
            self._db, rubric_id, owners=owners, offset=offset, limit=limit + 1
        )
        more, found = len(found) > limit, found[:limit]
        canaries = await self.all(rubric_id, owners=owners)
        history = {
            "rubric_id": rubric_id,
            "offset": offset,
            "limit": limit,
            "next_offset": offset + limit if more else None,
            "calibrations": [_run_summary(r) for r in found if r.canary_id is None],
            "canaries": [
                {
                    "id": c.id,
                    "name": c.name,
                    "panel_name": c.panel_name,
                    "baseline_run_id": c.baseline_run_id,
                    "interval_s": c.interval_s,
                    "enabled": c.enabled,
                    "last_run_at": c.last_run_at.isoformat() if c.last_run_at else None,
                    "runs": [_run_summary(r) for r in found if r.canary_id == c.id],
                }
                for c in canaries
            ],
        }
        return ReliabilityHistory.model_validate(history)


def canary_view(canary: Canary) -> CanaryView:
    return CanaryView.model_validate(canary.model_dump(mode="json"))


def _run_summary(run: CalibrationRun) -> dict[str, Any]:
    report = CalibrationReport.model_validate_json(run.report_json) if run.report_json else None
    summary: dict[str, Any] = {
        "id": run.id,
        "status": run.status,
        "label": run.label,
        "panel_name": run.panel_name,
        "rubric_version": run.rubric_version,
        "simulated": run.simulated,
        "shared": run.shared,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "dimensions": {
            dim_id: {
                "flag": dim.flag.level if dim.flag else None,
                "metric": dim.metric,
                "kappa": {r.rater: r.agreement for r in dim.raters},
            }
            for dim_id, dim in (report.calibrated() if report else {}).items()
        },
    }
    if report and report.drift is not None:
        summary["drift"] = {
            dim_id: {rater: drift.model_dump(mode="json") for rater, drift in raters.items()}
            for dim_id, raters in report.drift.items()
        }
    return summary
