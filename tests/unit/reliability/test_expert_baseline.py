"""The run's expert baseline: distinct annotators and its interval."""

from __future__ import annotations

import numpy as np
import pytest

from judge.reliability import distinct_annotators, expert_baseline, scale_kappa

LEVELS = [1, 2, 3, 4, 5]


def test_identical_and_near_identical_columns_are_refused() -> None:
    a = [1, 2, 3, 4, 5] * 10
    same = distinct_annotators(a, list(a))
    assert not same.distinct
    assert same.reason == "identical columns on all 50 items both rated"
    near = list(a)
    near[0] = 2  # 49/50 = 0.98 is not above 0.98: allowed
    assert distinct_annotators(a, near).distinct
    longer = a * 2
    near_long = list(longer)
    near_long[0] = 2  # 99/100 = 0.99 on 100 items: near-identical
    check = distinct_annotators(longer, near_long)
    assert not check.distinct
    assert check.reason is not None
    assert check.reason.startswith("near-identical")
    # on few items only exact identity is refused
    assert distinct_annotators([1, 2, 3, 4], [1, 2, 3, 5]).distinct
    assert not distinct_annotators([1, 2], [1, None]).distinct  # one item in common


def test_baseline_interval_over_accepted_pairs_and_reasons() -> None:
    rng = np.random.default_rng(4)
    z = rng.normal(0, 1, 80)
    cuts = [-0.9, -0.3, 0.3, 0.9]
    e1 = (np.searchsorted(cuts, z + rng.normal(0, 0.5, 80)) + 1).tolist()
    e2 = (np.searchsorted(cuts, z + rng.normal(0, 0.5, 80)) + 1).tolist()
    copy = list(e1)
    baseline = expert_baseline({"e1": e1, "e2": e2, "copy": copy}, levels=LEVELS, n_resamples=300)
    assert baseline.pairs[("e1", "copy")] == 1.0
    assert not baseline.checks[("e1", "copy")].distinct
    assert baseline.accepted == [("e1", "e2"), ("e2", "copy")]
    assert baseline.interval is not None
    expected = (scale_kappa(e1, e2, LEVELS) + scale_kappa(e2, copy, LEVELS)) / 2
    assert baseline.interval.estimate == pytest.approx(expected)
    assert baseline.interval.low < expected < baseline.interval.high
    assert baseline.reasons(floor=0.40, line=0.58) == []
    assert baseline.reasons(floor=0.40, line=0.99) == ["expert_agreement_moderate"]
    between = (baseline.interval.lower + baseline.interval.high) / 2
    assert baseline.reasons(floor=between, line=0.99) == [
        "expert_agreement_uncertain",
        "expert_agreement_moderate",
    ]
    above = baseline.interval.high + 0.01
    assert baseline.reasons(floor=above, line=0.99)[0] == "low_expert_agreement"
    # a floor just under the bound but inside its Monte Carlo interval is not decided
    mc = baseline.interval.lower_mc
    assert mc is not None
    assert mc.low < baseline.interval.lower
    assert baseline.reasons(floor=mc.low, line=0.58) == [
        "expert_lower_bound_within_monte_carlo_error_of_floor"
    ]


def test_only_copies_leave_no_baseline() -> None:
    a = [1, 2, 3, 4, 5] * 6
    baseline = expert_baseline({"e1": a, "e2": list(a)}, levels=LEVELS, n_resamples=50)
    assert baseline.interval is None
    assert baseline.reasons(0.4, 0.58) == ["expert_agreement_unknown"]
