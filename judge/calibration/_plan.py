"""Calibration planning: how many more expert labels each dimension needs, and which items
of an already-scored pool to send to the experts (statistics in
:mod:`judge.reliability._assurance` and :mod:`judge.reliability._planning`).

Per dimension the applicable calibration (as the flags use it) gives the panel aggregate's
agreement and the run's per-unit tables of the panel against the experts' consensus. The
plan is the number of independent units for which a follow-up calibration's one-sided 95%
lower bound reaches the target (``target_ci_lower``, default the rubric's line) with
probability ``assurance`` (default 0.8) if the true kappa is at least the calibration's
lower bound at that same confidence (:func:`judge.reliability.units_for_assurance`,
evidence/TRUST.md section 9c); when that bound is below the target, or no number up to
``MAX_UNITS`` gets there, the dimension is ``unreachable_at_assurance`` (no point projection
is given). The evidence gate is planned the same way at the floor, with
``min_items`` units, and is ``cleared`` only when coverage passes too
(``coverage_below_minimum`` otherwise: more items do not fix abstentions).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from judge.calibration._rater_stats import levels, participant_labels, top1
from judge.calibration._report import labelled_with_consensus, with_units
from judge.calibration._scored import ScoredItem
from judge.domain.flags import Calibration
from judge.domain.rubric import Dimension, ReliabilityPolicy, Rubric
from judge.errors import ItemInvalid
from judge.reliability import (
    DEFAULT_ASSURANCE,
    ClusterKappa,
    kappa_engine,
    level_mix,
    stratified_proposal,
    units_for_assurance,
)

#: the largest follow-up calibration a plan searches (units)
MAX_UNITS = 20_000
#: simulated follow-ups per candidate size
SIMULATIONS = 2000
ASSUMPTION = (
    "items for the gate's one-sided 95% lower bound, on this calibration's items plus the "
    "additional ones, to reach the target with the stated assurance if the true kappa is at "
    "least `planning_kappa`, this calibration's lower bound at the same confidence (a truth "
    "the calibration supports; no prior assumed); assumes further items like the calibrated "
    "ones. Measured (evidence/TRUST.md section 9c): an 80% plan reaches its target in 96-100% "
    "of follow-ups 0.07-0.12 above it, 79-83% over truths spread around the target; none can "
    "plan for a truth just above it. A stratified proposal over-represents rare levels, which "
    "changes kappa: re-calibrate and plan again after labelling."
)


def panel_engines(
    rubric: Rubric, items: Sequence[ScoredItem], dimensions: Sequence[str]
) -> dict[str, ClusterKappa]:
    """Per dimension, the run's per-unit tables of the panel aggregate against the experts'
    consensus (the flag's kappa; chance-corrected Recall@1 has none)."""
    items = with_units([it for it in items if not it.given])
    out: dict[str, ClusterKappa] = {}
    for dim_id in dimensions:
        dim = rubric.dimension(dim_id)
        if dim.scale.type == "free_text" or participant_labels(dim):
            continue
        _, labelled, gold = labelled_with_consensus(dim, items)
        pred = [it.aggregate.get(dim.id) for it in labelled]
        groups = [it.resampling_group for it in labelled]
        if dim.scale.type == "ordinal":
            engine = kappa_engine(pred, gold, "quadratic", levels=levels(dim), groups=groups)
        else:
            engine = kappa_engine(
                [top1(p) for p in pred], [top1(g) for g in gold], None, numeric=False,
                groups=groups,
            )  # fmt: skip
        if isinstance(engine, ClusterKappa):
            out[dim_id] = engine
    return out


def _need(
    engine: ClusterKappa, n: int, target: float, assurance: float, seed: int
) -> dict[str, Any]:
    """Total items for the lower bound to reach ``target`` with probability ``assurance``
    (items per unit kept as measured)."""
    plan = units_for_assurance(
        engine, target, assurance=assurance, simulations=SIMULATIONS, max_units=MAX_UNITS,
        seed=seed,
    )  # fmt: skip
    kappa_l = plan.planning_kappa
    figures = {
        "assurance": assurance,
        "probability": round(plan.probability, 4),
        "planning_kappa": round(kappa_l, 4) if math.isfinite(kappa_l) else None,
        "planning_confidence": plan.planning_confidence,
    }
    if plan.units is None:
        if not (math.isfinite(kappa_l) and kappa_l >= target):
            shown = f"{kappa_l:.3f}" if math.isfinite(kappa_l) else "undefined"
            why = (
                f"the calibration's one-sided {plan.planning_confidence:.0%} lower bound of "
                f"kappa ({shown}) is below {target}: it does not support a truth at the "
                "target, so no size is planned at this assurance"
            )
        else:
            why = (
                f"no calibration up to {MAX_UNITS:,} units reaches {target} with probability "
                f"{assurance} at a true kappa of {kappa_l:.3f} (the planning kappa)"
            )
        return figures | {
            "status": "unreachable_at_assurance",
            "why": why,
            "items_total": None,
            "additional_items": None,
        }
    units = engine.units
    total = max(n, math.ceil(plan.units * n / units - 1e-9))
    out = figures | {
        "status": "reachable",
        "items_total": total,
        "additional_items": total - n,
        "units_total": max(units, plan.units),
    }
    out["why"] = (
        f"this calibration's {n} items and {total - n} more reach {target} with probability "
        f"{assurance} if the true kappa is at least {kappa_l:.3f}"
    )
    return out


def plan_dimension(
    dim: Dimension,
    calibration: Calibration | None,
    policy: ReliabilityPolicy,
    target: float,
    engine: ClusterKappa | None = None,
    *,
    assurance: float = DEFAULT_ASSURANCE,
    seed: int = 0,
) -> dict[str, Any]:
    """The plan of one dimension from its applicable calibration (None: uncalibrated) and
    that run's per-unit tables (``engine``; None: no assurance plan)."""
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
    coverage_ok = calibration.coverage is not None and calibration.coverage >= policy.min_coverage
    out |= {
        "calibration": f"calibration:{calibration.run_id}",
        "metric": calibration.metric,
        "n": n,
        "units": units,
        "estimate": estimate,
        "ci95": list(calibration.ci95) if calibration.ci95 else None,
        "coverage": calibration.coverage,
        "simulated": calibration.simulated,
    }
    if estimate is None or low is None or n < 1:
        return out | {
            "status": "no_interval",
            "why": "the calibration has no CI to plan from (too few independent units): "
            f"label at least {policy.min_items} items and calibrate",
            "additional_items": max(0, policy.min_items - n),
        }
    if low >= target and coverage_ok:
        out |= {"status": "cleared", "items_total": n, "additional_items": 0}
    elif engine is None:
        out |= _no_engine()
    else:
        out |= _need(engine, n, target, assurance, seed)
    if not coverage_ok:
        out |= _coverage_blocks(calibration, policy)
    gate = _gate(calibration, engine, policy, assurance, seed, coverage_ok)
    out["evidence_gate"] = {"floor": policy.floor, "min_coverage": policy.min_coverage, **gate}
    return out


def _no_engine() -> dict[str, Any]:
    return {
        "status": "no_assurance_plan",
        "why": "no per-unit kappa tables to simulate from (chance-corrected Recall@1, or the "
        "run's items are gone): no items-needed figure is given",
        "items_total": None,
        "additional_items": None,
    }


def _coverage_blocks(calibration: Calibration, policy: ReliabilityPolicy) -> dict[str, Any]:
    return {
        "status": "coverage_below_minimum",
        "why": f"the panel answered {calibration.coverage or 0:.0%} of the labelled items, "
        f"below {policy.min_coverage:.0%}: the gate fails whatever the number of items "
        "(fix the abstentions, then re-calibrate)",
    }


def _gate(
    calibration: Calibration,
    engine: ClusterKappa | None,
    policy: ReliabilityPolicy,
    assurance: float,
    seed: int,
    coverage_ok: bool,
) -> dict[str, Any]:
    """What the evidence gate needs: the lower bound at the floor (with ``assurance``),
    ``min_items`` units, and coverage."""
    n = calibration.n
    units = calibration.units or n
    low = calibration.ci95[0] if calibration.ci95 else None
    if low is not None and low >= policy.floor and units >= policy.min_items:
        gate: dict[str, Any] = {"status": "cleared", "items_total": n, "additional_items": 0}
    elif engine is None:
        gate = _no_engine()
    else:
        gate = _need(engine, n, policy.floor, assurance, seed)
        if gate["items_total"] is not None:
            per_unit = n / units
            gate["items_total"] = max(gate["items_total"], math.ceil(policy.min_items * per_unit))
            gate["additional_items"] = gate["items_total"] - n
    if not coverage_ok:
        gate |= _coverage_blocks(calibration, policy)
    return gate


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
    engines: Mapping[str, ClusterKappa] | None = None,
    assurance: float = DEFAULT_ASSURANCE,
) -> dict[str, Any]:
    """The whole plan: per dimension the items needed at ``assurance`` (from ``engines``,
    the applicable runs' per-unit tables), and the proposal when a pool is given."""
    if not 0.5 <= assurance <= 0.99:
        raise ItemInvalid("assurance", f"must be between 0.5 and 0.99, got {assurance}")
    names = rubric.dimension_names()
    chosen: list[str] = []
    for n, name in enumerate(dimensions):
        if name not in names:
            raise ItemInvalid(f"dimensions[{n}]", f"{name!r} is not a dimension of {rubric.id!r}")
        chosen.append(names[name])
    planned = chosen or [d.id for d in rubric.dimensions if d.scale.type != "free_text"]
    line = policy.line if target is None else target
    engines = engines or {}
    plans = {
        d: plan_dimension(
            rubric.dimension(d),
            calibrations.get(d),
            policy,
            line,
            engines.get(d),
            assurance=assurance,
            seed=seed,
        )
        for d in planned
    }
    out: dict[str, Any] = {
        "rubric": {"id": rubric.id, "version": rubric.version, "hash": rubric.content_hash},
        "panel": panel_name,
        "target_ci_lower": line,
        "assurance": assurance,
        "floor": policy.floor,
        "min_coverage": policy.min_coverage,
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
