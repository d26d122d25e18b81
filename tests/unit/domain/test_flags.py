"""Reliability flags (docs/DESIGN.md section 2) and per-scale aggregation."""

from __future__ import annotations

import pytest

from empathy_judge_client.flag_evidence import WeightedEvidence
from judge.domain.flags import Calibration, reliability_flag, weighted_flag
from judge.domain.reason_texts import FLAG_REASONS
from judge.domain.rubric import Dimension, Prior, ReliabilityPolicy, Rubric, Tolerance
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


def measured(
    kappa: float | None,
    *,
    n: int = 60,
    ci: tuple[float | None, float | None] | None = None,
    coverage: float | None = 1.0,
    expert: float | None = None,
    expert_n: int = 0,
    n_experts: int = 0,
    simulated: bool = False,
    units: int | None = None,
    trust_reasons: tuple[str, ...] | None = (),
    expert_reasons: tuple[str, ...] | None = None,
) -> Calibration:
    """A calibration with enough evidence unless told otherwise (CI: kappa -/+ 0.1) whose
    like-for-like trust test passed (``trust_reasons``: its reasons; None: a run stored before
    the test); the experts' ``expert_reasons`` default to the point's against the line."""
    if ci is None and kappa is not None:
        ci = (kappa - 0.1, min(1.0, kappa + 0.1))
    if expert_reasons is None and expert is not None:
        expert_reasons = (
            ("low_expert_agreement",)
            if expert < POLICY.floor
            else ("expert_agreement_moderate",)
            if expert < POLICY.line
            else ()
        )
    return Calibration(
        run_id="run1",
        judge_kappa=kappa,
        expert_kappa=expert,
        n=n,
        ci95=ci,
        coverage=coverage,
        expert_n=expert_n,
        n_experts=n_experts,
        distinct_experts=n_experts,
        expert_reasons=expert_reasons,
        simulated=simulated,
        metric="quadratic_weighted_kappa",
        units=units,
        trust_reasons=trust_reasons,
    )


def test_calibration_with_enough_evidence_that_clears_the_line_is_trusted() -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.7))
    assert result.level == "trusted"
    assert result.reasons == []
    assert result.source == "calibration:run1"
    assert result.judge_kappa == 0.7
    assert (result.n, result.ci95, result.coverage) == (60, pytest.approx([0.6, 0.8]), 1.0)
    assert result.expert_source == "rubric-prior"
    assert result.min_items == 50
    assert result.simulated is False


def test_a_prior_carries_no_n_and_no_ci() -> None:
    result = flag(prior=prior(0.76, 0.76))
    assert (result.n, result.ci95, result.coverage, result.simulated) == (None, None, None, False)


@pytest.mark.parametrize("n", [1, 5, 49])
def test_fewer_items_than_min_items_is_insufficient_calibration(n: int) -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=measured(1.0, n=n, ci=(1.0, 1.0)))
    assert (result.level, result.reasons) == ("caution", ["insufficient_calibration"])
    assert result.n == n


def test_exactly_min_items_is_enough() -> None:
    assert flag(prior=prior(0.76, 0.76), calibration=measured(0.8, n=50)).level == "trusted"


def test_min_items_comes_from_the_policy() -> None:
    strict = ReliabilityPolicy(min_items=200)
    result = flag(policy=strict, prior=prior(0.76, 0.76), calibration=measured(0.8, n=150))
    assert result.reasons == ["insufficient_calibration"]
    assert result.min_items == 200


@pytest.mark.parametrize(
    ("ci", "reasons"),
    [
        ((0.0, 0.67), ["judge_kappa_uncertain"]),  # the 12-item case of the issue
        ((0.39, 0.9), ["judge_kappa_uncertain"]),
        ((None, None), ["judge_kappa_uncertain"]),  # no interval is no evidence
        ((0.40, 0.9), []),  # the lower bound at the floor is enough
    ],
)
def test_a_ci_lower_bound_below_the_floor_is_judge_kappa_uncertain(
    ci: tuple[float | None, float | None], reasons: list[str]
) -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.7, ci=ci))
    assert result.reasons == reasons
    assert result.level == ("caution" if reasons else "trusted")


@pytest.mark.parametrize(
    ("mc", "reasons"),
    [
        ((0.39, 0.42), ["lower_bound_within_monte_carlo_error_of_floor"]),
        ((0.40, 0.41), ["lower_bound_within_monte_carlo_error_of_floor"]),
        ((0.405, 0.42), []),  # 2,000 resamples place the bound above the floor
        (None, []),  # a deterministic bound
    ],
)
def test_a_ci_lower_bound_within_its_monte_carlo_error_of_the_floor_is_caution(
    mc: tuple[float, float] | None, reasons: list[str]
) -> None:
    calibration = measured(0.7, ci=(0.41, 0.9)).model_copy(update={"ci95_low_mc": mc})
    result = flag(prior=prior(0.76, 0.76), calibration=calibration)
    assert result.reasons == reasons
    assert calibration.passes_evidence_gate(POLICY) is not reasons


@pytest.mark.parametrize(("coverage", "ok"), [(0.89, False), (0.9, True), (None, False)])
def test_coverage_below_min_coverage_is_low_coverage(coverage: float | None, ok: bool) -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.7, coverage=coverage))
    assert result.reasons == ([] if ok else ["low_coverage"])
    assert result.coverage == coverage


def test_every_failed_gate_is_named_and_the_best_level_is_caution() -> None:
    # the 12-item case: 10 panel scores missing, effective n = 2, CI [0.0, 0.67]
    result = flag(
        prior=prior(0.76, 0.76), calibration=measured(1.0, n=2, ci=(0.0, 0.67), coverage=2 / 12)
    )
    assert result.level == "caution"
    assert result.reasons == ["insufficient_calibration", "judge_kappa_uncertain", "low_coverage"]


def test_calibrated_judges_below_floor_are_untrusted_whatever_the_evidence() -> None:
    result = flag(prior=prior(0.7, 0.7), calibration=measured(0.2))
    assert (result.level, result.reasons) == ("untrusted", ["judges_below_floor"])
    small = flag(prior=prior(0.7, 0.7), calibration=measured(0.2, n=5))
    assert (small.level, small.reasons) == (
        "untrusted",
        ["judges_below_floor", "insufficient_calibration"],
    )


def test_calibrated_judges_between_floor_and_line_are_caution() -> None:
    result = flag(prior=prior(0.7, 0.7), calibration=measured(0.5, ci=(0.45, 0.6)))
    assert (result.level, result.reasons) == ("caution", ["judges_below_line"])


def test_calibrated_expert_baseline_overrides_the_prior_with_enough_evidence() -> None:
    result = flag(
        prior=prior(0.7, 0.7),
        calibration=measured(0.8, expert=0.3, expert_n=50, n_experts=3),
    )
    assert result.reasons == ["low_expert_agreement"]
    assert result.expert_kappa == 0.3
    assert result.expert_source == "calibration:run1"


@pytest.mark.parametrize(("expert_n", "n_experts"), [(5, 3), (49, 2), (200, 1)])
def test_a_small_or_single_expert_baseline_does_not_replace_the_prior(
    expert_n: int, n_experts: int
) -> None:
    # the case: a 5-item run must not replace ED fluency's published 0.28
    result = flag(
        prior=prior(0.28, 0.27),
        calibration=measured(0.9, expert=0.95, expert_n=expert_n, n_experts=n_experts),
    )
    assert result.expert_kappa == 0.28
    assert result.expert_source == "rubric-prior"
    assert result.level == "untrusted"
    assert result.reasons == ["low_expert_agreement"]


def test_no_prior_and_no_usable_expert_baseline_is_expert_agreement_unknown() -> None:
    result = flag(prior=None, calibration=measured(0.9, expert=0.9, expert_n=10, n_experts=2))
    assert (result.expert_kappa, result.expert_source) == (None, None)
    assert result.reasons == ["expert_agreement_unknown"]


def test_a_flag_sourced_from_a_simulated_run_says_so() -> None:
    assert flag(prior=prior(0.7, 0.7), calibration=measured(0.8, simulated=True)).simulated


def test_unknown_judge_agreement_is_a_caution() -> None:
    result = flag(prior=prior(0.7, 0.7), calibration=measured(None, ci=(None, None)))
    assert (result.level, result.reasons) == ("caution", ["judge_agreement_unknown"])


def test_below_quorum_and_disagreement() -> None:
    assert "insufficient_judges" in flag(prior=prior(0.7, 0.7), valid_judges=1).reasons
    assert flag(prior=prior(0.7, 0.7), valid_judges=1).level == "untrusted"
    split = flag(prior=prior(0.7, 0.7), calibration=measured(0.8), disagreement=True)
    assert (split.level, split.reasons) == ("caution", ["panel_disagreement"])


def test_settings_defaults_fill_only_what_a_rubric_leaves_unset() -> None:
    own = ReliabilityPolicy.model_validate({"min_items": 30})
    merged = own.with_defaults({"min_items": 100, "min_coverage": 0.95})
    assert (merged.min_items, merged.min_coverage) == (30, 0.95)
    assert ReliabilityPolicy().with_defaults({"min_items": 100}).min_items == 100
    assert ReliabilityPolicy().with_defaults({}) == ReliabilityPolicy()
    with pytest.raises(ValueError, match="floor"):
        ReliabilityPolicy.model_validate({"line": 0.5}).with_defaults({"floor": 0.6})


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


def test_settings_reliability_defaults_reach_the_scorers_policy() -> None:
    from judge.errors import ConfigError
    from judge.rubrics import RubricRegistry
    from judge.runtime.composition import check_policies
    from judge.services.scoring import Scorer
    from judge.settings import load_settings

    registry = RubricRegistry.from_directory()
    settings = load_settings(reliability={"min_items": 120, "min_coverage": 0.95})
    scorer = Scorer(registry, client=None, reliability_defaults=settings.reliability.as_defaults())  # type: ignore[arg-type]
    policy = scorer.policy(registry.get("epitome"))
    assert (policy.min_items, policy.min_coverage) == (120, 0.95)
    assert load_settings().reliability.as_defaults() == {}
    # the bundled rubrics set floor and line themselves; a rubric that sets only its line
    # cannot take a configured floor above it: a configuration error at start-up
    data = registry.get("epitome").model_dump(mode="json")
    data["reliability"] = {"line": 0.5}
    custom = RubricRegistry([Rubric.model_validate(data)])
    clash = Scorer(custom, client=None, reliability_defaults={"floor": 0.6})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="reliability settings do not fit rubric"):
        check_policies(custom, clash)
    check_policies(registry, Scorer(registry, client=None, reliability_defaults={"floor": 0.6}))  # type: ignore[arg-type]


# -- issue 23: units, like-for-like trust, distinct experts, provenance ---------------------------
def test_repeated_items_count_once_against_min_items() -> None:
    """60 items that are 12 conversations: 12 units, fewer than min_items."""
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.9, n=60, units=12))
    assert result.level == "caution"
    assert result.reasons == ["insufficient_calibration"]
    assert (result.n, result.units) == (60, 12)


def test_a_run_without_units_counts_its_items() -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.9, n=60))
    assert (result.level, result.units) == ("trusted", 60)


def test_the_like_for_like_test_decides_trusted() -> None:
    reasons = ("lower_bound_below_line", "levels_below_minimum_units")
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.9, trust_reasons=reasons))
    assert result.level == "caution"
    assert result.reasons == list(reasons)


def test_a_run_stored_before_the_trust_test_cannot_vouch() -> None:
    result = flag(prior=prior(0.76, 0.76), calibration=measured(0.9, trust_reasons=None))
    assert result.level == "caution"
    assert result.reasons == ["like_for_like_not_evaluated"]


def test_a_single_distinct_expert_leaves_the_prior_standing() -> None:
    """Two columns of which one copies the other: one distinct expert, the prior stands."""
    run = measured(0.9, expert=1.0, expert_n=60, n_experts=1)
    result = flag(prior=prior(0.5, 0.76), calibration=run)
    assert result.expert_source == "rubric-prior"
    assert result.expert_kappa == 0.5
    assert "expert_agreement_moderate" in result.reasons


def test_the_run_baseline_is_judged_by_its_interval() -> None:
    run = measured(
        0.9,
        expert=0.7,
        expert_n=60,
        n_experts=3,
        expert_reasons=("expert_agreement_uncertain",),
    )
    result = flag(prior=prior(0.76, 0.76), calibration=run)
    assert result.expert_source == "calibration:run1"
    assert (result.level, result.reasons) == ("caution", ["expert_agreement_uncertain"])
    low = measured(0.9, expert=0.3, expert_n=60, n_experts=2)
    assert flag(prior=prior(0.76, 0.76), calibration=low).level == "untrusted"


def test_a_simulated_run_never_vouches_for_real_scores() -> None:
    run = measured(0.9, simulated=True)
    real = flag(prior=prior(0.76, 0.76), calibration=run)
    assert (real.level, real.reasons, real.simulated) == (
        "caution",
        ["simulated_calibration"],
        True,
    )
    simulated = flag(prior=prior(0.76, 0.76), calibration=run, scores_simulated=True)
    assert (simulated.level, simulated.simulated) == ("trusted", True)


def weighted_flag_of(calibration: Calibration | None):  # type: ignore[no-untyped-def]
    return weighted_flag(
        policy=POLICY,
        prior=prior(0.76, 0.76),
        calibration=calibration,
        valid_judges=3,
        quorum=2,
        disagreement=False,
    )


def test_a_weighted_score_is_flagged_on_the_weighted_aggregates_own_evidence() -> None:
    """The weighted aggregate's agreement, refit-inclusive interval, n and units are shown and
    its like-for-like bound decides; the equal aggregate's like-for-like reasons still apply."""
    evidence = WeightedEvidence(
        agreement=0.8,
        ci95=(0.66, 0.9),
        n=58,
        units=55,
        resamples=1000,
        like_for_like=0.72,
        like_for_like_lower=0.6,
    )
    run = measured(0.7).model_copy(update={"weighted": evidence})
    trusted = weighted_flag_of(run)
    assert trusted.level == "trusted"
    assert (trusted.judge_kappa, trusted.n, trusted.units) == (0.8, 58, 55)
    assert trusted.ci95 == pytest.approx([0.66, 0.9])
    # the equal aggregate's flag, from the same run, keeps its own figures
    assert (flag(prior=prior(0.76, 0.76), calibration=run).n, run.judge_kappa) == (60, 0.7)
    # the like-for-like bound below the line: caution, named, however high the interval
    # against the consensus reads
    short = evidence.model_copy(update={"like_for_like_lower": 0.55})
    assert weighted_flag_of(run.model_copy(update={"weighted": short})).reasons == [
        "weighted_lower_bound_below_line"
    ]
    # a run stored before the weighted like-for-like bound cannot vouch
    old = evidence.model_copy(update={"like_for_like": None, "like_for_like_lower": None})
    assert weighted_flag_of(run.model_copy(update={"weighted": old})).reasons == [
        "weighted_like_for_like_not_evaluated"
    ]
    # below the floor: judge_kappa_uncertain as for the equal aggregate
    low = run.model_copy(update={"weighted": evidence.model_copy(update={"ci95": (0.3, 0.9)})})
    assert "judge_kappa_uncertain" in weighted_flag_of(low).reasons


def test_a_weighted_score_without_its_own_evidence_is_caution() -> None:
    """A run that did not measure the weighted aggregate (ranked scale, too few units, stored
    before phase 4): the equal aggregate's flag at best caution, weighted_score_not_calibrated."""
    result = weighted_flag_of(measured(0.9))
    assert result.level == "caution"
    assert result.reasons == ["weighted_score_not_calibrated"]
    assert (result.n, result.units) == (60, 60)  # still the run's evidence, with n and units
    uncalibrated = weighted_flag_of(None)
    assert "weighted_score_not_calibrated" in uncalibrated.reasons
    assert "weighted_score_not_calibrated" in FLAG_REASONS
    assert "weighted_lower_bound_below_line" in FLAG_REASONS
    assert "weighted_like_for_like_not_evaluated" in FLAG_REASONS
