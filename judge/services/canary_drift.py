"""A canary run's drift: every judge and dimension compared with the canary's baseline run
(change in agreement with the experts, shift of the mean rating on a 0..1 scale, change in
abstention rate). Calibration runs call :meth:`CanaryDrift.added` before storing a report."""

from __future__ import annotations

from dataclasses import dataclass

from judge.calibration import compare_reports
from judge.domain.calibration_report import CalibrationReport, CanaryRef
from judge.persistence import canaries as store
from judge.persistence import runs
from judge.persistence.database import Database
from judge.persistence.tables import CalibrationRun


@dataclass
class CanaryDrift:
    database: Database

    async def added(self, run: CalibrationRun, report: CalibrationReport) -> CalibrationReport:
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
        drift = compare_reports(report, CalibrationReport.model_validate_json(baseline.report_json))
        return report.model_copy(
            update={"drift": drift, "canary": CanaryRef(id=canary.id, name=canary.name)}
        )
