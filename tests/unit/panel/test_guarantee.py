"""One scored dimension's interval, prediction set and guarantee, with each reason."""

from __future__ import annotations

from judge.domain.flags import Calibration
from judge.domain.guarantees import (
    ConformalCalibration,
    DimensionGuarantee,
    GuaranteePolicy,
    SelectiveCalibration,
)
from judge.domain.rubric import ReliabilityPolicy
from judge.panel.guarantee import item_guarantee, panel_confidence
from judge.panel.run import Panel
from judge.rubrics import RubricRegistry

REGISTRY = RubricRegistry.from_directory()
ER = REGISTRY.get("epitome").dimension("emotional_reactions")
RELATION = REGISTRY.get("rescue-couple").dimension("relation_pattern")
POLICY = ReliabilityPolicy(min_items=10, guarantee=GuaranteePolicy())


def _stored(quantile: float | None, threshold: float | None) -> DimensionGuarantee:
    return DimensionGuarantee(
        policy=GuaranteePolicy(),
        scale="ordinal",
        n=30,
        units=30,
        confidence="test",
        conformal=ConformalCalibration(
            level=0.9,
            n=30,
            rank=28,
            quantile=quantile,
            status="ok",
            min_units=9,
            nonconformity="test",
        ),
        selective=SelectiveCalibration(
            status="guaranteed" if threshold is not None else "no_threshold_passes",
            threshold=threshold,
            coverage=0.5,
            agreement=0.9,
            n=30,
            min_units=11,
            curve=[],
        ),
    )


def _calibration(stored: DimensionGuarantee | None, n: int = 30) -> Calibration:
    return Calibration(
        run_id="cal-1", judge_kappa=0.8, n=n, ci95=(0.7, 0.9), coverage=1.0, guarantee=stored
    )


def test_confident_panel_is_guaranteed_and_carries_its_interval() -> None:
    interval, labels, g = item_guarantee(ER, [1, 1, 1], 1, _calibration(_stored(1, 0.9)), POLICY)
    assert labels is None
    assert interval is not None
    assert (interval.low, interval.high) == (0, 2)
    assert interval.level == 0.9
    assert interval.calibration_id == "cal-1"
    assert g is not None
    assert g.guaranteed
    assert g.reason is None
    assert g.confidence == 1.0


def test_interval_is_clipped_to_the_scale_and_whole_scale_when_too_few() -> None:
    interval, _, _ = item_guarantee(ER, [0, 0], 0, _calibration(_stored(0.5, 0.9)), POLICY)
    assert interval is not None
    assert (interval.low, interval.high) == (0, 0)
    interval, _, _ = item_guarantee(ER, [0, 0], 0, _calibration(_stored(None, 0.9)), POLICY)
    assert interval is not None
    assert (interval.low, interval.high) == (0, 2)


def test_each_reason_for_no_guarantee() -> None:
    split = [0, 2, 1]
    assert panel_confidence(ER, [split], 0)[0] < 0.9
    cases = {
        "below_confidence_threshold": item_guarantee(
            ER, split, 1, _calibration(_stored(1, 0.9)), POLICY
        ),
        "no_guarantee_available": item_guarantee(
            ER, [1, 1], 1, _calibration(_stored(1, None)), POLICY
        ),
        "not_calibrated": item_guarantee(ER, [1, 1], 1, None, POLICY),
        "evidence_gate": item_guarantee(ER, [1, 1], 1, _calibration(_stored(1, 0.9), n=3), POLICY),
        "no_score": item_guarantee(ER, [1], None, _calibration(_stored(1, 0.9)), POLICY),
        "policy_changed": item_guarantee(
            ER,
            [1, 1],
            1,
            _calibration(_stored(1, 0.9)),
            ReliabilityPolicy(min_items=10, guarantee=GuaranteePolicy(agreement=0.9)),
        ),
    }
    for reason, (_, _, g) in cases.items():
        assert g is not None, reason
        assert not g.guaranteed, reason
        assert g.reason == reason, reason
    _, _, g = cases["no_guarantee_available"]
    assert g is not None
    assert g.status == "no_threshold_passes"


def test_no_policy_no_guarantee_fields() -> None:
    assert item_guarantee(ER, [1, 1], 1, _calibration(_stored(1, 0.9)), ReliabilityPolicy()) == (
        None,
        None,
        None,
    )


def test_nominal_prediction_set_holds_labels_within_the_vote_share_threshold() -> None:
    labels = list(RELATION.scale.label_ids)  # type: ignore[union-attr]
    votes = [labels[0], labels[0], labels[1]]
    stored = _stored(0.7, 0.9).model_copy(update={"scale": "nominal"})
    _, pset, _ = item_guarantee(RELATION, votes, labels[0], _calibration(stored), POLICY)
    # scores: labels[0] 1/3, labels[1] 2/3, others 1
    assert pset is not None
    assert pset.labels == labels[:2]


def test_a_panels_guarantee_policy_wins_over_the_rubrics() -> None:
    own = GuaranteePolicy(agreement=0.7, agree_within=1)
    assert Panel(name="p", judges=(), guarantee=own).policy(POLICY).guarantee == own
    assert Panel(name="p", judges=()).policy(POLICY) is POLICY


COUPLE = REGISTRY.get("rescue-couple")


def test_ranked_prediction_set_is_for_the_first_choice_among_the_items_candidates() -> None:
    target = COUPLE.dimension("support_target")
    votes = [["Couple", "tom"], ["Couple", "maya"], ["tom", "Couple"]]
    stored = _stored(0.7, 0.9).model_copy(update={"scale": "ranked"})
    _, pset, g = item_guarantee(
        target, votes, ["Couple", "tom"], _calibration(stored), POLICY, ("tom", "maya")
    )
    # first choices: Couple 2/3 (score 1/3), tom 1/3 (2/3), maya none (1)
    assert pset is not None
    assert pset.labels == ["tom", "Couple"]
    assert g is not None
    assert g.confidence == 0.5  # modal agreement of the first choices: (2/3 - 1/3) / (2/3)


def test_binary_prediction_set_and_confidence() -> None:
    intervene = COUPLE.dimension("intervene_now")
    stored = _stored(0.0, 1.0).model_copy(update={"scale": "binary"})
    _, pset, g = item_guarantee(intervene, [True, True], True, _calibration(stored), POLICY)
    assert pset is not None
    assert pset.labels == [True]
    assert g is not None
    assert g.guaranteed


def test_self_consistency_across_samples_lowers_the_confidence_of_unstable_judges() -> None:
    steady = panel_confidence(ER, [[1, 1]], 0, [[[1, 1, 1], [1, 1, 1]]])[0]
    shaky = panel_confidence(ER, [[1, 1]], 0, [[[1, 0, 2], [1, 1, 1]]])[0]
    assert steady == 1.0
    # judges agree (range 1, modal 1); one judge's samples span the scale: its range 0 and
    # modal 0, the other's 1 and 1 -> self-consistency 0.5; mean of (1, 1, 0.5)
    assert abs(shaky - 2.5 / 3) < 1e-9
    votes = panel_confidence(RELATION, [["a", "a"]], 0, [[["a", "b"], ["a", "a"]]])[0]
    assert abs(votes - 0.75) < 1e-9  # modal 1; self-consistency (0 + 1) / 2
