"""Each reliability-flag reason and not-guaranteed reason in words, for people reading a
result (the viewer's item page). The codes and their rules: docs/DESIGN.md section 2."""

from __future__ import annotations

#: flag reason code -> what it means
FLAG_REASONS: dict[str, str] = {
    "low_expert_agreement": "Experts themselves agree below the floor on this dimension: it "
    "is not reliably measurable.",
    "judges_below_floor": "The calibrated panel agrees with the experts below the floor.",
    "insufficient_judges": "Fewer judges gave a valid rating than the quorum needs.",
    "expert_agreement_moderate": "Experts agree only moderately (below the line).",
    "expert_agreement_uncertain": "The experts' own agreement is measured too imprecisely: "
    "its interval reaches below the line.",
    "expert_agreement_unknown": "No measure of how well experts agree on this dimension.",
    "judges_below_line": "The panel agrees with the experts below the line.",
    "judge_agreement_unknown": "No measure of how well this panel agrees with experts.",
    "uncalibrated": "This panel has no calibration for this rubric version: published "
    "priors describe other judges, so they can only warn, never vouch.",
    "panel_disagreement": "The judges disagree on this item beyond the rubric's tolerance.",
    "insufficient_calibration": "The calibration has too few independent units to vouch.",
    "judge_kappa_uncertain": "The lower end of the panel's kappa interval is below the floor.",
    "low_coverage": "Too many calibration items went unscored (coverage below the minimum).",
    "lower_bound_below_line": "Against single experts, the panel's lower bound is below the line.",
    "lower_bound_within_monte_carlo_error_of_line": "The like-for-like lower bound clears the "
    "line by less than its Monte Carlo error.",
    "lower_bound_within_monte_carlo_error_of_floor": "The lower end of the panel's kappa "
    "interval clears the floor by less than its Monte Carlo error.",
    "expert_lower_bound_within_monte_carlo_error_of_floor": "The experts' own agreement clears "
    "the floor by less than its Monte Carlo error.",
    "levels_below_minimum_units": "Some consensus level has fewer than 5 calibration units.",
    "too_few_units": "Too few independent units for the like-for-like test.",
    "like_for_like_not_evaluated": "The calibration was stored before the like-for-like test "
    "existed.",
    "simulated_calibration": "The calibration's replies came from the LLM simulator: it never "
    "vouches for real scores.",
    "weighted_score_not_calibrated": "The score is reliability-weighted, and the calibration "
    "did not measure the weighted aggregate's own agreement with the experts.",
    "weighted_lower_bound_below_line": "The score is reliability-weighted, and the lower bound "
    "of the weighted aggregate's agreement with single experts (weights refit in every "
    "resample) is below the line.",
    "weighted_like_for_like_not_evaluated": "The score is reliability-weighted, and the "
    "calibration has no like-for-like bound for the weighted aggregate (stored before it "
    "existed, or a ranked scale, where it is not measured).",
    "input_contains_instructions": "The conversation contains text addressed to the judges.",
    "judge_unstable": "A judge's repeated samples disagree with each other.",
    "length_sensitive": "A verbosity probe found ratings rise with reply length.",
    "self_preference_excluded": "A judge of the judged model's family was left out.",
    "label_unreliable": "The calibration measured the predicted label's recall or precision "
    "too low, or saw the experts give it too rarely (or never), to trust this label.",
    "escalated": "The cascade's last stage was not confident enough: a person decides.",
}

#: not-guaranteed reason code -> what it means
GUARANTEE_REASONS: dict[str, str] = {
    "below_confidence_threshold": "The panel's confidence on this item is below the "
    "calibrated threshold.",
    "no_guarantee_available": "The calibration found no threshold that passes.",
    "not_calibrated": "No calibration run of this panel holds the dimension.",
    "policy_changed": "The calibration was computed for another guarantee policy.",
    "evidence_gate": "The flag's evidence gate fails (units, interval, coverage).",
    "no_score": "The panel gave no score (below quorum).",
    "label_unreliable": "The calibration measured the predicted label's recall or precision "
    "too low, or saw the experts give it too rarely (or never), to trust this label.",
    "escalated": "The cascade's last stage was not confident enough: a person decides.",
}


def in_words(code: str, table: dict[str, str] = FLAG_REASONS) -> str:
    """The sentence for ``code`` (the code itself when it has none)."""
    return table.get(code, code.replace("_", " "))
