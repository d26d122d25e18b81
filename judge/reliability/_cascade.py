"""Cascaded selective evaluation: cheap stages first, a person last, one guarantee overall.

Stages are ordered cheapest first (a judge or a sub-panel each; a later stage may reuse the
earlier stages' ratings, e.g. two judges, then those two plus a third). An item's answer is
the first stage's whose confidence clears that stage's threshold; an item no stage keeps
escalates to a person. Each stage's calls are made only for the items that reach it.

Joint calibration: the thresholds of all stages are chosen together on one fixed path of
threshold vectors, strictest first (by default one common threshold for every stage, over
the distinct confidences), by fixed-sequence testing of the *cascade's* disagreement rate on
the items it keeps (binomial p-value, as in :mod:`._selective`). So the guarantee is for the
cascade as a whole: with probability at least ``1 - delta`` over the calibration, agreement
with the experts on the items any stage keeps is at least ``1 - alpha``. Testing each stage
on its own, on the items the earlier stages passed on, would let the calibration data choose
which items each test sees; one path over the whole cascade avoids that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judge.reliability._selective import (
    SelectiveStatus,
    binomial_p_value,
    selective_min_units,
)

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
_EPS = 1e-9


@dataclass(frozen=True)
class CascadeStep:
    """One point of the path: the stage thresholds, the items kept and their errors."""

    thresholds: tuple[float, ...]
    kept: int
    errors: int
    agreement: float
    coverage: float
    p_value: float
    tested: bool
    passed: bool


@dataclass(frozen=True)
class CascadeThreshold:
    """The chosen thresholds (None unless guaranteed); ``stage_shares`` has one share per
    stage (items it answers) and a last one for the items escalated to a person."""

    status: SelectiveStatus
    thresholds: tuple[float, ...] | None
    coverage: float
    agreement: float
    stage_shares: tuple[float, ...]
    n: int
    alpha: float
    delta: float
    min_units: int
    curve: tuple[CascadeStep, ...]


@dataclass(frozen=True)
class CascadeCost:
    """Per item: mean calls and cost of the cascade; the share of items reaching each stage;
    the same for calling every stage on every item (the full panel)."""

    calls_per_item: float
    cost_per_item: float
    reached: tuple[float, ...]
    full_calls_per_item: float
    full_cost_per_item: float


def route(confidences: FloatArray, thresholds: Sequence[float] | None) -> IntArray:
    """The stage (0-based) answering each item; ``n_stages`` = escalated to a person.
    ``confidences`` is (items, stages); NaN (no answer from the stage) never clears."""
    conf = np.asarray(confidences, dtype=np.float64)
    if conf.ndim != 2:
        raise ValueError("confidences must be (items, stages)")
    n, stages = conf.shape
    out = np.full(n, stages, dtype=np.int64)
    if thresholds is None:
        return out
    if len(thresholds) != stages:
        raise ValueError("one threshold per stage")
    for s in reversed(range(stages)):
        with np.errstate(invalid="ignore"):
            clears = conf[:, s] >= thresholds[s] - _EPS
        out[clears] = s
    return out


def _default_path(conf: FloatArray) -> list[tuple[float, ...]]:
    values = np.unique(conf[~np.isnan(conf)])
    return [tuple([float(t)] * conf.shape[1]) for t in sorted(values.tolist(), reverse=True)]


def cascade_threshold(
    confidences: FloatArray,
    agreed: BoolArray,
    alpha: float,
    delta: float,
    path: Sequence[Sequence[float]] | None = None,
) -> CascadeThreshold:
    """Calibrate the cascade's thresholds jointly (see the module docstring).

    ``confidences`` and ``agreed`` are (items, stages): each stage's confidence on each
    calibration item and whether that stage's answer agrees with the experts (every stage is
    run on every calibration item). ``path`` is a sequence of threshold vectors, strictest
    first, fixed without looking at ``agreed``."""
    conf = np.asarray(confidences, dtype=np.float64)
    ok = np.asarray(agreed, dtype=np.bool_)
    if conf.shape != ok.shape or conf.ndim != 2:
        raise ValueError("confidences and agreed must both be (items, stages)")
    n, stages = conf.shape
    need = selective_min_units(alpha, delta)
    vectors = _default_path(conf) if path is None else [tuple(map(float, p)) for p in path]
    steps: list[CascadeStep] = []
    going = True
    chosen: CascadeStep | None = None
    rows = np.arange(n)
    for vector in vectors:
        stage = route(conf, vector)
        answered = stage < stages
        m = int(answered.sum())
        errors = int((~ok[rows[answered], stage[answered]]).sum())
        p = binomial_p_value(errors, m, alpha)
        tested = going
        passed = tested and (m == 0 or p <= delta)
        going = passed
        step = CascadeStep(
            vector,
            m,
            errors,
            1 - errors / m if m else math.nan,
            m / n if n else 0.0,
            p,
            tested,
            passed,
        )
        steps.append(step)
        if passed and m > 0:
            chosen = step
    if chosen is None:
        status: SelectiveStatus = "too_few_calibration_units" if n < need else "no_threshold_passes"
        shares = tuple([0.0] * stages + [1.0])
        return CascadeThreshold(
            status, None, 0.0, math.nan, shares, n, alpha, delta, need, tuple(steps)
        )
    final = route(conf, chosen.thresholds)
    shares = tuple(float(np.mean(final == s)) if n else 0.0 for s in range(stages + 1))
    return CascadeThreshold(
        "guaranteed",
        chosen.thresholds,
        chosen.coverage,
        chosen.agreement,
        shares,
        n,
        alpha,
        delta,
        need,
        tuple(steps),
    )


def cascade_cost(
    stage_of_item: Sequence[int] | IntArray,
    stage_calls: Sequence[float],
    stage_costs: Sequence[float],
) -> CascadeCost:
    """Calls and cost per item. ``stage_calls``/``stage_costs`` are what running each stage
    adds on an item (e.g. 2 calls, then 1 more); an item answered at stage s paid for
    stages 0..s, an escalated item for all of them."""
    stage = np.asarray(stage_of_item, dtype=np.int64)
    calls = np.asarray(stage_calls, dtype=np.float64)
    costs = np.asarray(stage_costs, dtype=np.float64)
    if calls.shape != costs.shape:
        raise ValueError("one call count and one cost per stage")
    stages = len(calls)
    last = np.minimum(stage, stages - 1)
    reached = tuple(float(np.mean(last >= s)) if len(stage) else 0.0 for s in range(stages))
    cum_calls = np.cumsum(calls)
    cum_costs = np.cumsum(costs)
    return CascadeCost(
        calls_per_item=float(np.mean(cum_calls[last])) if len(stage) else 0.0,
        cost_per_item=float(np.mean(cum_costs[last])) if len(stage) else 0.0,
        reached=reached,
        full_calls_per_item=float(cum_calls[-1]),
        full_cost_per_item=float(cum_costs[-1]),
    )
