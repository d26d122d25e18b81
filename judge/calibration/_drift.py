"""Drift between two calibration reports of the same canary set: per dimension and rater, the
change in agreement with the experts, the shift of the mean rating on a 0..1 scale and the
change in abstention rate."""

from __future__ import annotations

from typing import Any


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
