"""The reliability flag of one dimension in one result (docs/DESIGN.md section 2).

Two agreements decide it: the experts' agreement among themselves on the dimension, and the
panel's agreement with the experts. They come from a calibration run of this panel when one
exists, else from the rubric's published priors. Priors describe other judges, so they can
warn but never vouch: without calibration the best level is ``caution``.

A calibration vouches (allows ``trusted``) only with enough evidence: at least ``min_items``
independent units (a group, or a conversation however often submitted), the lower bound of
the 95% interval of the panel's agreement at or above the floor, and a coverage of at least
``min_coverage``. Its expert-expert agreement replaces the published prior only when two or
more experts labelled ``min_items`` units. A run whose replies came from the LLM simulator
vouches only for simulated scores (``simulated_calibration``).
"""

from __future__ import annotations

from typing import Any

from empathy_judge_client.flag_evidence import FlagEvidence as FlagEvidence
from empathy_judge_client.label_reliability import LABEL_UNRELIABLE
from empathy_judge_client.result import ReliabilityFlag
from judge.domain.rubric import Prior, ReliabilityPolicy

PRIOR_SOURCE = "rubric-prior"
#: caution reasons of the judge-quality features (docs/DESIGN.md section 2)
JUDGE_UNSTABLE = "judge_unstable"
LENGTH_SENSITIVE = "length_sensitive"
SELF_PREFERENCE_EXCLUDED = "self_preference_excluded"
SELF_PREFERENCE_KEPT = "self_preference_kept"
#: a run whose replies came from the LLM simulator, applied to scores that did not
SIMULATED_CALIBRATION = "simulated_calibration"
#: the panel's CI lower end clears the floor, but within its Monte Carlo error
FLOOR_WITHIN_MC_ERROR = "lower_bound_within_monte_carlo_error_of_floor"
#: a run stored before the like-for-like trust test (it cannot vouch)
TRUST_TEST_MISSING = "like_for_like_not_evaluated"
#: a reliability-weighted score whose applicable calibration did not measure the weighted
#: aggregate (too few units, a single judge, runs stored before issue 23's phase 4)
WEIGHTED_NOT_CALIBRATED = "weighted_score_not_calibrated"
#: the weighted aggregate's like-for-like lower bound (its mean kappa against single
#: experts, one-sided 95%, refit-inclusive) is below the line
WEIGHTED_BELOW_LINE = "weighted_lower_bound_below_line"
#: a run stored before the weighted aggregate's like-for-like bound, or a ranked scale (no
#: single-expert bound there): it cannot vouch
WEIGHTED_TRUST_MISSING = "weighted_like_for_like_not_evaluated"
#: the metric of a ranked scale of the session's participants (no pooled kappa, no trust test)
CHANCE_RECALL_AT_1 = "chance_corrected_recall_at_1"


class Calibration(FlagEvidence):
    """A calibration run's evidence for one dimension of one panel and rubric, with the run it
    came from; ``simulated`` marks a run whose panel had a simulator persona."""

    run_id: str
    simulated: bool = False

    @classmethod
    def of(cls, run_id: str, evidence: FlagEvidence, *, simulated: bool) -> Calibration:
        return cls(run_id=run_id, simulated=simulated, **dict(evidence))

    def evidence(self) -> FlagEvidence:
        """What the run stores for this dimension's flags."""
        fields = {name: getattr(self, name) for name in FlagEvidence.model_fields}
        if fields["guarantee"] is None:  # runs before issue 27 (and free text) store none
            del fields["guarantee"]
        if fields["labels"] is None:  # only nominal and ranked scales have per-label figures
            del fields["labels"]
        if fields["weighted"] is None:  # not measured, and runs before issue 23's phase 4
            del fields["weighted"]
        return FlagEvidence(**fields)

    def passes_evidence_gate(self, policy: ReliabilityPolicy) -> bool:
        """Enough evidence to vouch (docs/DESIGN.md section 2): independent units >=
        ``min_items``, the CI's lower bound at or above the floor (by more than its Monte
        Carlo error), coverage >= ``min_coverage``."""
        low = self.ci95[0] if self.ci95 else None
        return (
            self.judge_kappa is not None
            and self.independent_units >= policy.min_items
            and low is not None
            and low >= policy.floor
            and not _within(self.ci95_low_mc, policy.floor)
            and self.coverage is not None
            and self.coverage >= policy.min_coverage
        )

    def expert_baseline_counts(self, policy: ReliabilityPolicy) -> bool:
        """Whether the run's expert-expert agreement may replace the published prior: two or
        more *distinct* annotators (a copied column counts once) on ``min_items`` independent
        units, with an interval (runs stored before distinct experts were counted: never)."""
        return (
            self.expert_kappa is not None
            and self.distinct_experts is not None
            and self.distinct_experts >= 2
            and self.expert_independent_units >= policy.min_items
            and self.expert_reasons is not None
            and "expert_agreement_unknown" not in self.expert_reasons
        )

    def expert_baseline_note(self, policy: ReliabilityPolicy) -> str:
        """Why the run's expert-expert agreement was used or not, in one sentence."""
        if self.distinct_experts is None:
            return "the run predates the distinct-expert check"
        if self.distinct_experts < 2:
            return "fewer than two distinct experts labelled this dimension in the run"
        if self.expert_kappa is None:
            return "the experts' agreement has no interval (fewer than 5 units)"
        units = self.expert_independent_units
        if units < policy.min_items:
            return (
                f"two or more experts labelled only {units} independent units "
                f"({self.expert_n} items; at least {policy.min_items} units needed)"
            )
        return f"{self.n_experts} experts on {self.expert_n} items ({units} independent units)"


def _within(mc: tuple[float | None, float | None] | None, threshold: float) -> bool:
    """The threshold lies inside a bound's Monte Carlo interval (another set of resamples
    could put the bound on its other side)."""
    return mc is not None and None not in mc and mc[0] <= threshold <= mc[1]  # type: ignore[operator]


def _expert_agreement(
    policy: ReliabilityPolicy, prior: Prior | None, calibration: Calibration | None
) -> tuple[float | None, str | None]:
    if calibration is not None and calibration.expert_baseline_counts(policy):
        return calibration.expert_kappa, f"calibration:{calibration.run_id}"
    if prior is not None and prior.expert_kappa is not None:
        return prior.expert_kappa, PRIOR_SOURCE
    return None, None


def _calibration_reasons(
    policy: ReliabilityPolicy, calibration: Calibration, untrusted: list[str], caution: list[str]
) -> None:
    kappa = calibration.judge_kappa
    if kappa is None:
        caution.append("judge_agreement_unknown")
    elif kappa < policy.floor:
        untrusted.append("judges_below_floor")
    elif kappa < policy.line:
        caution.append("judges_below_line")
    if calibration.independent_units < policy.min_items:
        caution.append("insufficient_calibration")
    low = calibration.ci95[0] if calibration.ci95 else None
    if kappa is not None and kappa >= policy.floor and (low is None or low < policy.floor):
        caution.append("judge_kappa_uncertain")
    elif low is not None and _within(calibration.ci95_low_mc, policy.floor):
        caution.append(FLOOR_WITHIN_MC_ERROR)
    if calibration.coverage is None or calibration.coverage < policy.min_coverage:
        caution.append("low_coverage")
    if calibration.trust_reasons is not None:
        caution.extend(calibration.trust_reasons)
    elif calibration.metric != CHANCE_RECALL_AT_1:
        caution.append(TRUST_TEST_MISSING)


def reliability_flag(
    *,
    policy: ReliabilityPolicy,
    prior: Prior | None,
    calibration: Calibration | None,
    valid_judges: int,
    quorum: int,
    disagreement: bool,
    extra_caution: tuple[str, ...] = (),
    scores_simulated: bool = False,
) -> ReliabilityFlag:
    """The flag of one dimension (module docstring). ``scores_simulated``: the scores being
    flagged came (in part) from the LLM simulator; a simulated calibration vouches only for
    such scores, never for real ones (``simulated_calibration``)."""
    floor, line = policy.floor, policy.line
    expert_kappa, expert_source = _expert_agreement(policy, prior, calibration)

    untrusted: list[str] = []
    caution: list[str] = []
    if calibration is not None and calibration.expert_baseline_counts(policy):
        # the run's own baseline: its interval, not its point, against the floor
        for reason in calibration.expert_reasons or ():
            (untrusted if reason == "low_expert_agreement" else caution).append(reason)
    elif expert_kappa is None:
        caution.append("expert_agreement_unknown")
    elif expert_kappa < floor:
        untrusted.append("low_expert_agreement")
    elif expert_kappa < line:
        caution.append("expert_agreement_moderate")

    if calibration is None:
        judge_kappa = prior.judge_kappa if prior else None
        caution.append("uncalibrated")
        if judge_kappa is not None and judge_kappa < line:
            caution.append("judges_below_line")
    else:
        judge_kappa = calibration.judge_kappa
        _calibration_reasons(policy, calibration, untrusted, caution)

    if calibration is not None and calibration.simulated and not scores_simulated:
        caution.append(SIMULATED_CALIBRATION)
    if valid_judges < quorum:
        untrusted.append("insufficient_judges")
    if disagreement:
        caution.append("panel_disagreement")
    caution.extend(extra_caution)

    level = "untrusted" if untrusted else "caution" if caution else "trusted"
    return ReliabilityFlag(
        level=level,
        reasons=untrusted + caution,
        expert_kappa=expert_kappa,
        judge_kappa=judge_kappa,
        threshold=line,
        floor=floor,
        source=f"calibration:{calibration.run_id}" if calibration else PRIOR_SOURCE,
        metric=calibration.metric if calibration else (prior.metric if prior else None),
        n=calibration.n if calibration else None,
        units=calibration.independent_units if calibration else None,
        ci95=list(calibration.ci95) if calibration and calibration.ci95 else None,
        coverage=calibration.coverage if calibration else None,
        min_items=policy.min_items,
        expert_source=expert_source,
        simulated=calibration.simulated if calibration else False,
    )


_ORDER = ("trusted", "caution", "untrusted")


def weighted_view(calibration: Calibration, policy: ReliabilityPolicy) -> Calibration | None:
    """The calibration as evidence about the reliability-weighted aggregate: its own
    agreement, refit-inclusive interval, items and units in place of the equal aggregate's;
    the like-for-like test (run on the equal aggregate) still applies, and the weighted
    aggregate's own like-for-like bound (its mean kappa against single experts, one-sided
    95%, refit-inclusive) must reach the line as well (``WEIGHTED_BELOW_LINE``; runs stored
    without it: ``WEIGHTED_TRUST_MISSING``). Not the interval against the experts' consensus:
    that reads higher than the line's expert pairs, and with it a weighted score just below
    the line was trusted in 10.2% of 200-item calibrations (evidence/TRUST.md section 12).
    None when the run did not measure the weighted aggregate."""
    weighted = calibration.weighted
    if weighted is None:
        return None
    lower = weighted.like_for_like_lower
    trust = tuple(calibration.trust_reasons or ())
    if weighted.like_for_like is None:
        trust += (WEIGHTED_TRUST_MISSING,)
    elif lower is None or lower < policy.line:
        trust += (WEIGHTED_BELOW_LINE,)
    return calibration.model_copy(
        update={
            "judge_kappa": weighted.agreement,
            "ci95": weighted.ci95,
            "ci95_low_mc": None,
            "n": weighted.n,
            "units": weighted.units,
            "trust_reasons": trust if calibration.trust_reasons is not None or trust else None,
        }
    )


def weighted_flag(
    *,
    policy: ReliabilityPolicy,
    prior: Prior | None,
    calibration: Calibration | None,
    valid_judges: int,
    quorum: int,
    disagreement: bool,
    extra_caution: tuple[str, ...] = (),
    scores_simulated: bool = False,
) -> ReliabilityFlag:
    """The flag of a reliability-weighted score: :func:`reliability_flag` on the weighted
    aggregate's own evidence (:func:`weighted_view`); without it, the equal aggregate's flag
    at best caution, with ``weighted_score_not_calibrated``."""
    view = weighted_view(calibration, policy) if calibration is not None else None
    flag = reliability_flag(
        policy=policy,
        prior=prior,
        calibration=view or calibration,
        valid_judges=valid_judges,
        quorum=quorum,
        disagreement=disagreement,
        extra_caution=extra_caution if view else (*extra_caution, WEIGHTED_NOT_CALIBRATED),
        scores_simulated=scores_simulated,
    )
    return flag


def with_label_reliability(
    flag: ReliabilityFlag, calibration: Calibration | None, score: Any
) -> ReliabilityFlag:
    """``flag`` lowered to what the calibration measured for the predicted label (the first
    choice on ranked scales), with ``label_unreliable``: a label the calibration never saw
    the experts give is untrusted. Unchanged without per-label figures or a score."""
    if calibration is None or calibration.labels is None or score is None or score == []:
        return flag
    label = str(score[0] if isinstance(score, list) else score)
    found = next((x for x in calibration.labels if x.label == label), None)
    level = "untrusted" if found is None or found.gold_n == 0 else found.level
    if level == "trusted":
        return flag
    worst = max(flag.level, level, key=_ORDER.index)
    return flag.model_copy(update={"level": worst, "reasons": [*flag.reasons, LABEL_UNRELIABLE]})
