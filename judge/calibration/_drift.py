"""Drift between two calibration reports of the same canary set: per dimension and rater, the
change in agreement with the experts, the shift of the mean rating on a 0..1 scale and the
change in abstention rate."""

from __future__ import annotations

from judge.domain.calibration_report import CalibrationReport, RaterDrift


def _delta(now: float | None, then: float | None) -> float | None:
    return None if now is None or then is None else round(now - then, 4)


def compare_reports(
    current: CalibrationReport, baseline: CalibrationReport
) -> dict[str, dict[str, RaterDrift]]:
    """Per dimension and rater (each judge and the panel): the drift from the baseline."""
    drift: dict[str, dict[str, RaterDrift]] = {}
    for dim_id, dim in current.dimensions.items():
        base_dim = baseline.dimensions.get(dim_id)
        base = {r.rater: r for r in base_dim.raters} if base_dim else {}
        per_rater = {}
        for rater in dim.raters:
            before = base.get(rater.rater)
            if before is None:
                continue
            now, then = rater.agreement, before.agreement
            per_rater[rater.rater] = RaterDrift(
                kappa=now,
                baseline_kappa=then,
                kappa_delta=_delta(now, then),
                mean_shift=_delta(rater.mean_normalised, before.mean_normalised),
                abstention_delta=_delta(rater.abstention_rate, before.abstention_rate),
            )
        if per_rater:
            drift[dim_id] = per_rater
    return drift
