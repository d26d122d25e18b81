"""The guarantee calibration a run stores per dimension: conformal threshold (hand-computed
rank), selective threshold by fixed-sequence testing, statuses for too few units, and the
report field next to older reports."""

from __future__ import annotations

import math

from judge.calibration import (
    ScoredItem,
    add_guarantees,
    calibration_report,
    dimension_guarantee,
    render_report_html,
)
from judge.domain.calibration_report import CalibrationReport
from judge.domain.guarantees import GuaranteePolicy
from judge.rubrics import RubricRegistry

REGISTRY = RubricRegistry.from_directory()
EPITOME = REGISTRY.get("epitome")
ER = EPITOME.dimension("emotional_reactions")
RELATION = REGISTRY.get("rescue-couple").dimension("relation_pattern")
JUDGES = ["openai/a", "openai/b", "openai/c"]


def _ordinal(rows: list[tuple[list[int], int, int]]) -> list[ScoredItem]:
    """(judges' ratings, panel median, expert label) per item."""
    return [
        ScoredItem(
            labels={"e1": {ER.id: gold}},
            judges={m: {ER.id: r} for m, r in zip(JUDGES, ratings, strict=True)},
            aggregate={ER.id: panel},
        )
        for ratings, panel, gold in rows
    ]


def test_unanimous_agreeing_panel_is_guaranteed_with_a_zero_width_interval() -> None:
    items = _ordinal([([1, 1, 1], 1, 1)] * 20)
    found = dimension_guarantee(ER, items, JUDGES, GuaranteePolicy())
    assert found is not None
    assert found.n == 20
    assert found.units == 20
    # rank ceil(21 * 0.9) = 19 of 20 scores, all 0
    assert found.conformal.rank == 19
    assert found.conformal.quantile == 0
    assert found.conformal.coverage == 1.0
    assert found.conformal.mean_width == 0
    assert found.selective.status == "guaranteed"
    assert found.selective.threshold == 1.0
    assert found.selective.coverage == 1.0
    # 20 items, 0 disagreements: P(Binom(20, 0.2) <= 0) = 0.8^20
    assert math.isclose(found.selective.curve[0].p_value, 0.8**20, abs_tol=1e-6)


def test_conformal_quantile_is_the_hand_computed_order_statistic() -> None:
    # 9 items off by 1 and 1 off by 2: rank ceil(11 * 0.9) = 10 -> the largest, 2
    rows = [([1, 2, 2], 2, 1)] * 9 + [([0, 2, 2], 2, 0)]
    found = dimension_guarantee(ER, _ordinal(rows), JUDGES, GuaranteePolicy())
    assert found is not None
    assert found.conformal.rank == 10
    assert found.conformal.quantile == 2


def test_selective_stops_at_the_first_failing_threshold() -> None:
    # unanimous items agree, split items disagree: only the strictest threshold passes
    rows = [([2, 2, 2], 2, 2)] * 15 + [([0, 1, 2], 1, 2)] * 15
    found = dimension_guarantee(ER, _ordinal(rows), JUDGES, GuaranteePolicy())
    assert found is not None
    sel = found.selective
    assert sel.status == "guaranteed"
    assert sel.threshold == 1.0
    assert sel.coverage == 0.5
    assert sel.agreement == 1.0
    assert [p.passed for p in sel.curve] == [True, False]


def test_too_few_items_is_a_status_not_a_pass() -> None:
    found = dimension_guarantee(ER, _ordinal([([1, 1, 1], 1, 1)] * 5), JUDGES, GuaranteePolicy())
    assert found is not None
    assert found.conformal.status == "too_few_calibration_units"
    assert found.conformal.quantile is None
    assert found.conformal.min_units == 9
    assert found.selective.status == "too_few_calibration_units"
    assert found.selective.threshold is None
    assert found.selective.min_units == 11


def test_nominal_scores_are_the_consensus_label_vote_share() -> None:
    labels = list(RELATION.scale.label_ids)  # type: ignore[union-attr]
    a, b = labels[0], labels[1]
    items = [
        ScoredItem(
            labels={"e1": {RELATION.id: a}},
            judges={"openai/a": {RELATION.id: a}, "openai/b": {RELATION.id: a if n % 2 else b}},
            aggregate={RELATION.id: a},
        )
        for n in range(20)
    ]
    found = dimension_guarantee(RELATION, items, ["openai/a", "openai/b"], GuaranteePolicy())
    assert found is not None
    assert found.scale == "nominal"
    assert found.conformal.quantile == 0.5  # half the items give the label half the votes


def test_report_carries_guarantees_in_the_dimension_and_its_flag_inputs() -> None:
    items = _ordinal([([1, 1, 1], 1, 1)] * 20)
    report = calibration_report(EPITOME, items, JUDGES, "run-1", resamples=50)
    report = add_guarantees(report, EPITOME, items, JUDGES, None)
    dim = report.dimensions[ER.id]
    assert dim.guarantee is not None
    assert dim.guarantee.policy == GuaranteePolicy()
    assert dim.flag_inputs is not None
    assert dim.flag_inputs.guarantee == dim.guarantee
    again = CalibrationReport.model_validate_json(report.model_dump_json())
    assert again.dimensions[ER.id].guarantee == dim.guarantee
    assert report.dimensions["interpretations"].guarantee is None  # not labelled


def test_the_report_page_shows_each_dimensions_threshold_curve() -> None:
    rows = [([2, 2, 2], 2, 2)] * 15 + [([0, 1, 2], 1, 2)] * 15
    items = _ordinal(rows)
    report = calibration_report(EPITOME, items, JUDGES, "run-1", resamples=50)
    page = render_report_html(add_guarantees(report, EPITOME, items, JUDGES, None))
    assert "<h2>Item-level guarantees</h2>" in page
    assert "emotional_reactions: threshold curve" in page
    # the curve: 1.00 keeps the 15 unanimous items (passed), 0.00 all 30 (failed)
    assert "<td>1.00</td><td>15</td><td>0</td><td>1.00</td><td>0.50</td>" in page
    assert "<td>0.00</td><td>30</td><td>15</td><td>0.50</td><td>1.00</td>" in page
    assert "<td>failed</td>" in page
    plain = calibration_report(EPITOME, items, JUDGES, "run-1", resamples=50)
    assert "Item-level guarantees" not in render_report_html(plain)  # runs stored before
