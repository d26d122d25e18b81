"""A canary run's drift: every judge and dimension compared with the canary's baseline run
(change in agreement with the experts, shift of the mean rating on a 0..1 scale, change in
abstention rate). Calibration runs call :meth:`CanaryDrift.added` before storing a report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from judge.persistence import canaries as store
from judge.persistence import runs
from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun


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
class CanaryDrift:
    database: Database

    async def added(self, run: CalibrationRun, report: dict[str, Any]) -> dict[str, Any]:
        """``report`` with the drift section when ``run`` is a canary's run (else as is)."""
        if run.canary_id is None:
            return report
        canary = await store.get(self.database, run.canary_id)
        baseline = (
            await runs.get_run(self.database, CalibrationRun, canary.baseline_run_id)
            if canary
            else None
        )
        if canary is None or baseline is None or not baseline.report_json:
            return report
        drift = compare_reports(report, json.loads(baseline.report_json))
        return report | {"drift": drift, "canary": {"id": canary.id, "name": canary.name}}
