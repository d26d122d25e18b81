"""Canaries: a completed calibration run re-scored on a schedule to detect judge drift.

Each canary run repeats its baseline run's items and expert labels with the same panel,
bypassing the LLM call cache (a cached answer cannot reveal a changed model). When it
completes, every judge and dimension is compared with the baseline: change in kappa against
the experts, shift of the mean rating (on a 0..1 scale), change in abstention rate. The
comparison is stored with the run; :mod:`judge.services.run_gauges` exports it as gauges.
"""

from __future__ import annotations

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import false, or_, select, update
from sqlmodel import col

from judge.errors import JudgeError
from judge.persistence.tables import CalibrationRun, Canary, utcnow
from judge.services.calibration import CalibrationService

log = logging.getLogger(__name__)


#: owner filters: every row (an admin), or the rows of these owners (None: created keyless)
Owners = tuple[str | None, ...] | None
ALL: Owners = None


def _owned(column: Any, owners: tuple[str | None, ...]) -> Any:
    keyed = [o for o in owners if o is not None]
    conditions = [column.in_(keyed)] if keyed else []
    if None in owners:
        conditions.append(column.is_(None))
    return or_(*conditions) if conditions else false()


class CanaryError(JudgeError):
    pass


def _abstention_rate(rater: dict[str, Any]) -> float | None:
    total = rater["n"] + rater["abstained"]
    return rater["abstained"] / total if total else None


def _delta(now: float | None, then: float | None) -> float | None:
    return None if now is None or then is None else round(now - then, 4)


def compare_reports(current: dict[str, Any], baseline: dict[str, Any]) -> dict[str, Any]:
    """Per dimension and rater (each judge and the panel): the drift from the baseline."""
    drift: dict[str, Any] = {}
    for dim_id, dim in current["dimensions"].items():
        base_dim = baseline["dimensions"].get(dim_id) or {}
        base = {r["rater"]: r for r in base_dim.get("raters", [])}
        per_rater = {}
        for rater in dim.get("raters", []):
            before = base.get(rater["rater"])
            if before is None:
                continue
            now, then = rater.get("agreement"), before.get("agreement", before.get("kappa"))
            per_rater[rater["rater"]] = {
                "kappa": now,
                "baseline_kappa": then,
                "kappa_delta": _delta(now, then),
                "mean_shift": _delta(rater.get("mean_normalised"), before.get("mean_normalised")),
                "abstention_delta": _delta(_abstention_rate(rater), _abstention_rate(before)),
            }
        if per_rater:
            drift[dim_id] = per_rater
    return drift


@dataclass
class CanaryService:
    calibrations: CalibrationService

    def __post_init__(self) -> None:
        self.calibrations.finalize_hooks.append(self._after_run)

    @property
    def _db(self) -> Any:
        return self.calibrations.jobs.database

    async def register(
        self,
        *,
        baseline_run_id: str,
        interval_s: float,
        name: str | None,
        owner: str | None = None,
    ) -> Canary:
        async with self._db.session() as session:
            baseline = await session.get(CalibrationRun, baseline_run_id)
            if baseline is None or baseline.status != "completed":
                raise CanaryError(
                    f"calibration run {baseline_run_id!r} does not exist or has not completed"
                )
            canary = Canary(
                id=uuid.uuid4().hex,
                name=name or f"{baseline.rubric_id}-{baseline.panel_name}",
                rubric_id=baseline.rubric_id,
                panel_name=baseline.panel_name,
                baseline_run_id=baseline.id,
                interval_s=interval_s,
                owner_key_id=owner,
            )
            session.add(canary)
            await session.commit()
        return canary

    async def all(self, rubric_id: str | None = None, *, owners: Owners = ALL) -> list[Canary]:
        async with self._db.session() as session:
            query = select(Canary).order_by(col(Canary.created_at))
            if rubric_id:
                query = query.where(col(Canary.rubric_id) == rubric_id)
            if owners is not None:  # None: ALL
                query = query.where(_owned(col(Canary.owner_key_id), owners))
            rows = await session.execute(query)
            return list(rows.scalars().all())

    async def due(self) -> list[Canary]:
        now = utcnow()
        return [
            c
            for c in await self.all()
            if c.enabled
            and (
                c.last_run_at is None
                or _aware(c.last_run_at) + timedelta(seconds=c.interval_s) <= now
            )
        ]

    async def start(self, canary_id: str) -> tuple[CalibrationRun, list[str]]:
        """Submit a canary run now (the caller dispatches the job ids)."""
        async with self._db.session() as session:
            canary = await session.get(Canary, canary_id)
            if canary is None:
                raise CanaryError(f"no canary with id {canary_id!r}")
            await session.execute(
                update(Canary).where(col(Canary.id) == canary_id).values(last_run_at=utcnow())
            )
            await session.commit()
        return await self.calibrations.repeat(
            canary.baseline_run_id, canary_id=canary.id, label=f"canary:{canary.name}"
        )

    async def _after_run(self, run: CalibrationRun, report: dict[str, Any]) -> dict[str, Any]:
        """Finalize hook: add the drift section to a canary run's report."""
        if run.canary_id is None:
            return report
        async with self._db.session() as session:
            canary = await session.get(Canary, run.canary_id)
            baseline = await session.get(CalibrationRun, canary.baseline_run_id) if canary else None
        if canary is None or baseline is None or not baseline.report_json:
            return report
        drift = compare_reports(report, json.loads(baseline.report_json))
        return report | {"drift": drift, "canary": {"id": canary.id, "name": canary.name}}

    async def history(
        self, rubric_id: str, *, owners: Owners = ALL, offset: int = 0, limit: int = 50
    ) -> dict[str, Any]:
        """What GET /v1/reliability/{rubric_id} shows: calibrations and every canary's runs,
        ``limit`` runs from ``offset`` (oldest first), of the given owners only."""
        async with self._db.session() as session:
            query = select(CalibrationRun).where(col(CalibrationRun.rubric_id) == rubric_id)
            if owners is not None:  # None: ALL
                query = query.where(_owned(col(CalibrationRun.owner_key_id), owners))
            rows = await session.execute(
                query.order_by(col(CalibrationRun.created_at), col(CalibrationRun.id))
                .offset(offset)
                .limit(limit + 1)
            )
            runs = list(rows.scalars().all())
        more, runs = len(runs) > limit, runs[:limit]
        canaries = await self.all(rubric_id, owners=owners)
        return {
            "rubric_id": rubric_id,
            "offset": offset,
            "limit": limit,
            "next_offset": offset + limit if more else None,
            "calibrations": [_run_summary(r) for r in runs if r.canary_id is None],
            "canaries": [
                {
                    "id": c.id,
                    "name": c.name,
                    "panel_name": c.panel_name,
                    "baseline_run_id": c.baseline_run_id,
                    "interval_s": c.interval_s,
                    "enabled": c.enabled,
                    "last_run_at": c.last_run_at.isoformat() if c.last_run_at else None,
                    "runs": [_run_summary(r) for r in runs if r.canary_id == c.id],
                }
                for c in canaries
            ],
        }


def _aware(moment: Any) -> Any:
    """SQLite returns naive datetimes; treat them as UTC."""
    from datetime import UTC

    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _run_summary(run: CalibrationRun) -> dict[str, Any]:
    report = json.loads(run.report_json) if run.report_json else {}
    summary: dict[str, Any] = {
        "id": run.id,
        "status": run.status,
        "label": run.label,
        "panel_name": run.panel_name,
        "rubric_version": run.rubric_version,
        "simulated": run.simulated,
        "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "dimensions": {
            dim_id: {
                "flag": (dim.get("flag") or {}).get("level"),
                "metric": dim.get("metric"),
                "kappa": {
                    r["rater"]: r.get("agreement", r["kappa"]) for r in dim.get("raters", [])
                },
            }
            for dim_id, dim in report.get("dimensions", {}).items()
            if dim.get("raters")
        },
    }
    if "drift" in report:
        summary["drift"] = report["drift"]
    return summary
