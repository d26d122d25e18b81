"""Reliability flags (DESIGN.md section 2) and per-scale aggregation."""

from __future__ import annotations

import pytest

from judge.domain.flags import Calibration, reliability_flag
from judge.domain.rubric import Dimension, Prior, ReliabilityPolicy, Tolerance
from judge.panel.aggregate import aggregate

POLICY = ReliabilityPolicy()


def prior(expert: float | None, judge: float | None) -> Prior:
    return Prior(expert_kappa=expert, judge_kappa=judge, citation="test")


def flag(**kw: object):  # type: ignore[no-untyped-def]
    args = {
        "policy": POLICY,
        "calibration": None,
        "valid_judges": 3,
        "quorum": 2,
        "disagreement": False,
    }
    args.update(kw)
    return reliability_flag(**args)  # type: ignore[arg-type]


def test_uncalibrated_is_caution_even_when_priors_are_high() -> None:
    result = flag(prior=prior(0.76, 0.76))
    assert result.level == "caution"
    assert result.reasons == ["uncalibrated"]
    assert result.source == "rubric-prior"


def test_calibration_that_clears_the_line_is_trusted() -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=Calibration("run1", judge_kappa=0.7))
    assert result.level == "trusted"
    assert result.reasons == []
    assert result.source == "calibration:run1"
    assert result.judge_kappa == 0.7


def test_low_expert_agreement_is_untrusted() -> None:
    result = flag(prior=prior(0.28, 0.27))
    assert result.level == "untrusted"
    assert result.reasons[0] == "low_expert_agreement"


def test_moderate_expert_agreement_and_judges_below_line() -> None:
    result = flag(prior=prior(0.49, 0.23))
    assert result.level == "caution"
    assert result.reasons == ["expert_agreement_moderate", "uncalibrated", "judges_below_line"]


def test_calibrated_judges_below_floor_are_untrusted() -> None:
    result = flag(prior=prior(0.7, 0.7), calibration=Calibration("r", judge_kappa=0.2))
    assert (result.level, result.reasons) == ("untrusted", ["judges_below_floor"])


def test_calibrated_expert_baseline_overrides_the_prior() -> None:
    result = flag(
        prior=prior(0.7, 0.7), calibration=Calibration("r", judge_kappa=0.8, expert_kappa=0.3)
    )
    assert result.reasons == ["low_expert_agreement"]
    assert result.expert_kappa == 0.3


def test_below_quorum_and_disagreement() -> None:
    assert "insufficient_judges" in flag(prior=prior(0.7, 0.7), valid_judges=1).reasons
    assert flag(prior=prior(0.7, 0.7), valid_judges=1).level == "untrusted"
    split = flag(prior=prior(0.7, 0.7), calibration=Calibration("r", 0.8), disagreement=True)
    assert (split.level, split.reasons) == ("caution", ["panel_disagreement"])


def test_no_published_expert_agreement_is_a_caution() -> None:
    assert flag(prior=None).reasons == ["expert_agreement_unknown", "uncalibrated"]


def dim(scale: dict[str, object]) -> Dimension:
    return Dimension.model_validate({"id": "d", "name": "D", "definition": "x", "scale": scale})


ORDINAL = dim({"type": "ordinal", "min": 1, "max": 5, "anchors": {i: str(i) for i in range(1, 6)}})
NOMINAL = dim(
    {"type": "nominal", "labels": [{"id": "a", "definition": "A"}, {"id": "b", "definition": "B"}]}
)
BINARY = dim({"type": "binary", "yes": "y", "no": "n"})
RANKED = dim(
    {"type": "ranked", "k": 3, "labels": [{"id": x, "definition": x} for x in ("p", "q", "r", "s")]}
)


def test_ordinal_median_spread_and_tolerance() -> None:
    agg = aggregate(ORDINAL, [4, 5, 4], Tolerance())
    assert (agg.score, agg.spread, agg.disagreement) == (4, 1.0, False)
    split = aggregate(ORDINAL, [1, 5, 3], Tolerance())
    assert (split.score, split.spread, split.disagreement) == (3, 4.0, True)
    assert aggregate(ORDINAL, [2, 3], Tolerance()).score == 2.5


def test_nominal_majority_and_reported_tie() -> None:
    agg = aggregate(NOMINAL, ["b", "b", "a"], Tolerance())
    assert (agg.score, agg.modal_share, agg.tie) == ("b", pytest.approx(0.6667), False)
    tie = aggregate(NOMINAL, ["b", "a"], Tolerance())
    assert (tie.score, tie.tie, tie.tied_labels, tie.disagreement) == ("a", True, ["a", "b"], True)


def test_binary_tie_resolves_to_false() -> None:
    agg = aggregate(BINARY, [True, False], Tolerance())
    assert (agg.score, agg.tie) == (False, True)


def test_ranked_borda() -> None:
    agg = aggregate(RANKED, [["p", "q", "r"], ["q", "p", "s"], ["p", "s"]], Tolerance())
    assert agg.score == ["p", "q", "s"]
    assert agg.top1_agreement == pytest.approx(0.6667)
    assert not agg.disagreement


def test_no_valid_ratings_no_score() -> None:
    assert aggregate(ORDINAL, [], Tolerance()).score is None
