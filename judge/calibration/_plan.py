"""Calibration planning: how many more expert labels each dimension needs, and which items
of an already-scored pool to send to the experts (statistics in
:mod:`judge.reliability._planning`).

Per dimension the applicable calibration (as the flags use it) gives the panel aggregate's
agreement, its 95% bootstrap CI and the number of independent units (items, or groups)
behind it. The plan projects the total number of labelled items for the CI's lower bound to
reach the target (``target_ci_lower``, default the rubric's line) and, separately, what the
evidence gate needs (the lower bound at the floor and ``min_items`` items). The projection
assumes more items like the calibrated ones: a stratified proposal changes the mix of
levels, and kappa depends on the mix, so the plan is a guide to re-measure against.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judge.domain.flags import Calibration
from judge.domain.rubric import Dimension, ReliabilityPolicy, Rubric
from judge.errors import ItemInvalid
from judge.reliability import level_mix, projected_lower, stratified_proposal, units_needed

ASSUMPTION = (
    "projected from the calibration's CI, which narrows like 1/sqrt(n) in independent units; "
    "assumes further items like the calibrated ones and the point estimate staying put. A "
    "stratified proposal over-represents rare levels, which changes kappa: re-calibrate and "
    "plan again after labelling."
)


def _need(estimate: float, low: float, n: int, units: int, target: float) -> dict[str, Any]:
    """Total items for the lower bound to reach ``target`` (items per unit kept as measured)."""
    total_units = units_needed(estimate, low, units, target)
    if total_units is None:
        return {
            "status": "unreachable_at_estimate",
            "why": f"the point estimate {estimate:.3f} is not above {target}: more items like "
            "these narrow the CI around it, never above it",
            "items_total": None,
            "additional_items": None,
        }
    per_unit = n / units
    total = max(n, math.ceil(total_units * per_unit - 1e-9))
    status = "cleared" if total_units == units else "reachable"
    return {
        "status": status,
        "items_total": total,
        "additional_items": total - n,
        "units_total": total_units,
        "projected_lower_at_total": round(projected_lower(estimate, low, units, total_units), 4),
    }


def plan_dimension(
    dim: Dimension, calibration: Calibration | None, policy: ReliabilityPolicy, target: float
) -> dict[str, Any]:
    """The plan of one dimension from its applicable calibration (None: uncalibrated)."""
    out: dict[str, Any] = {"target_ci_lower": target, "min_items": policy.min_items}
    if calibration is None:
        return out | {
            "status": "uncalibrated",
            "why": f"no calibration of this panel and rubric: label at least "
            f"{policy.min_items} items and calibrate",
            "additional_items": policy.min_items,
        }
    n, estimate = calibration.n, calibration.judge_kappa
    low = calibration.ci95[0] if calibration.ci95 else None
    units = calibration.units or n
    out |= {
        "calibration": f"calibration:{calibration.run_id}",
        "metric": calibration.metric,
        "n": n,
        "units": units,
        "estimate": estimate,
        "ci95": list(calibration.ci95) if calibration.ci95 else None,
        "simulated": calibration.simulated,
    }
    if estimate is None or low is None or n < 1:
        return out | {
            "status": "no_interval",
            "why": "the calibration has no CI to project from (too few independent units): "
            f"label at least {policy.min_items} items and calibrate",
            "additional_items": max(0, policy.min_items - n),
        }
    out |= _need(estimate, low, n, units, target)
    gate = _need(estimate, low, n, units, policy.floor)
    if gate["items_total"] is not None:
        gate["items_total"] = max(gate["items_total"], policy.min_items)
        gate["additional_items"] = gate["items_total"] - n
        gate["status"] = "cleared" if gate["additional_items"] == 0 else "reachable"
    out["evidence_gate"] = {"floor": policy.floor, **gate}
    return out


def predicted_level(dim: Dimension, score: Any) -> Any:
    """A pool item's stratum on ``dim``: the nearest scale level (ordinal; a .5 median rounds
    up), the label (binary, nominal) or the first choice (ranked); None without a score."""
    if score is None:
        return None
    if dim.scale.type == "ordinal":
        return math.floor(float(score) + 0.5)
    if dim.scale.type == "ranked":
        return score[0] if isinstance(score, list) and score else None
    return score


def _pool_entry(rubric: Rubric, line: Any, n: int) -> tuple[str, dict[str, Any]]:
    where = f"pool[{n}]"
    if not isinstance(line, dict):
        raise ItemInvalid(where, "must be a score result (a JSON object)")
    dims = line.get("dimensions")
    if not isinstance(dims, dict):
        raise ItemInvalid(f"{where}.dimensions", "a scored result has a dimensions object")
    rubric_id = (
        (line.get("rubric") or {}).get("id") if isinstance(line.get("rubric"), dict) else None
    )
    if rubric_id is not None and rubric_id != rubric.id:
        raise ItemInvalid(f"{where}.rubric.id", f"scored with {rubric_id!r}, not {rubric.id!r}")
    scores: dict[str, Any] = {}
    for dim in rubric.dimensions:
        value = dims.get(dim.id)
        scores[dim.id] = value.get("score") if isinstance(value, dict) else None
    name = line.get("item_id") or line.get("id") or f"line {n + 1}"
    return str(name), scores


def propose(
    rubric: Rubric,
    pool: Sequence[Any],
    dimensions: Sequence[str],
    budget: int,
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """``budget`` pool items (score results of this rubric) stratified over the predicted
    levels of ``dimensions``, with the level mix of the proposal against the pool."""
    if not pool:
        raise ItemInvalid("pool", "the pool has no scored items")
    entries = [_pool_entry(rubric, line, n) for n, line in enumerate(pool)]
    strata = {
        d: [predicted_level(rubric.dimension(d), scores[d]) for _, scores in entries]
        for d in dimensions
    }
    chosen = stratified_proposal(strata, budget, seed=seed)
    panels = sorted({str(line.get("panel_name")) for line in pool if line.get("panel_name")})
    return {
        "budget": budget,
        "pool_size": len(entries),
        "pool_panels": panels,
        "stratified_on": list(dimensions),
        "seed": seed,
        "items": [
            {
                "id": entries[i][0],
                "pool_index": i,
                "predicted": {d: strata[d][i] for d in dimensions},
            }
            for i in chosen
        ],
        "mix": {
            d: {"pool": level_mix(strata[d]), "proposal": level_mix([strata[d][i] for i in chosen])}
            for d in dimensions
        },
    }


def calibration_plan(
    rubric: Rubric,
    panel_name: str,
    calibrations: Mapping[str, Calibration],
    policy: ReliabilityPolicy,
    *,
    target: float | None = None,
    dimensions: Sequence[str] = (),
    pool: Sequence[Any] | None = None,
    budget: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The whole plan: per dimension the projection, and the proposal when a pool is given."""
    names = rubric.dimension_names()
    chosen: list[str] = []
    for n, name in enumerate(dimensions):
        if name not in names:
            raise ItemInvalid(f"dimensions[{n}]", f"{name!r} is not a dimension of {rubric.id!r}")
        chosen.append(names[name])
    planned = chosen or [d.id for d in rubric.dimensions if d.scale.type != "free_text"]
    line = policy.line if target is None else target
    plans = {
        d: plan_dimension(rubric.dimension(d), calibrations.get(d), policy, line) for d in planned
    }
    out: dict[str, Any] = {
        "rubric": {"id": rubric.id, "version": rubric.version, "hash": rubric.content_hash},
        "panel": panel_name,
        "target_ci_lower": line,
        "floor": policy.floor,
        "min_items": policy.min_items,
        "assumption": ASSUMPTION,
        "simulated": any(p.get("simulated") for p in plans.values()),
        "dimensions": plans,
    }
    if pool is not None:
        if budget is None:
            raise ItemInvalid("budget", "a pool needs a budget: how many items to propose")
        open_dims = [d for d, p in plans.items() if p["status"] != "cleared"]
        out["proposal"] = propose(rubric, pool, open_dims or planned, budget, seed=seed)
    elif budget is not None:
        raise ItemInvalid("pool", "a budget needs a pool of scored items to choose from")
    return out
