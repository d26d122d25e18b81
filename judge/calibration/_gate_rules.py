"""The evidence gate's rules in words, with the error rate each one was shown to keep and the
simulation in ``evidence/`` that shows it (evidence/TRUST.md), for the HTML report; the README's
flag section says the same. Also each dimension's deciding test, as a sentence."""

from __future__ import annotations

from html import escape

from judge.domain.calibration_report import CalibrationReport, DimensionReport

#: (rule, what it guarantees and where that was measured)
GATE_RULES: tuple[tuple[str, str], ...] = (
    (
        "Evidence is counted in independent units: items of one group are one unit, and so "
        "are items with the same normalised conversation, however often submitted. "
        "min_items is a number of units (insufficient_calibration).",
        "Repeated conversations cannot shrink an interval or reach min_items "
        "(tests/e2e/test_evidence_gate_attacks.py).",
    ),
    (
        "Every interval resamples units, 2,000 times: the union of the cluster jackknife-t and "
        "the percentile bootstrap; none below 5 units; a resample whose coefficient is "
        "undefined counts as -1, never dropped.",
        "Two-sided 95% coverage 94.0-96.0% from 5 to 40 clusters and 30 to 200 items "
        "(evidence.cluster_coverage).",
    ),
    (
        "Floor: the panel's kappa against the consensus below the floor is untrusted "
        "(judges_below_floor); an interval whose lower end is below the floor is caution "
        "(judge_kappa_uncertain). Coverage of at least min_coverage (low_coverage).",
        "The same interval as above.",
    ),
    (
        "Trusted, like for like: the panel's kappa against each single distinct expert, "
        "averaged, every abstention counted as the worst answer for its item; trusted only "
        "when its one-sided 95% lower bound is at or above the line "
        "(lower_bound_below_line). A test of H0: kappa < line.",
        "A panel whose true kappa equals the line is trusted in 4.30% of 50-item "
        "calibrations (Monte Carlo SE 0.37%), below the line less often "
        "(evidence.trust_error_rate).",
    ),
    (
        "Prevalence paradox: when the most frequent whole consensus level holds more than 80% "
        "of the items, two or more distinct experts labelled and kappa's lower bound is above "
        "0, the line test is AC2's instead: the panel's mean AC2 against single experts minus "
        "the experts' mean pairwise AC2 (D) must be above the 95th percentile of D under 2,000 "
        "relabellings of who is the panel, item by item (ac2_lower_bound_below_experts). A "
        "permutation test of H0: the panel is one more expert (exchangeable with them); a "
        "worse panel passes less often.",
        "A panel exchangeable with the experts (D = 0) is trusted in 3.5% / 4.8% / 4.8% / "
        "4.0% of 50 / 100 / 200 / 400-item calibrations (400 each, 800 at 400 items; 5% by "
        "construction), a better panel (D = +0.016) in 31.5% at 100 items "
        "(evidence.prevalence_trust).",
    ),
    (
        "Every consensus level present holds at least 5 units (levels_below_minimum_units).",
        "A level's kappa is covered 92.6-97.0% from 4 units (evidence.level_minimum).",
    ),
    (
        "Monte Carlo error: each deciding bound (the like-for-like bound, the AC2 bound, the "
        "lower end of the panel's and of the experts' intervals) carries the 95% interval of "
        "where infinitely many resamples would put it; a threshold inside it is not decided "
        "(caution: ..._within_monte_carlo_error_...).",
        "At 2,000 resamples about +-0.009; the stated interval holds the limit in 95.2% "
        "(evidence.mc_error).",
    ),
    (
        "Experts: the run's expert-expert agreement replaces the published prior only with "
        "two or more distinct annotators on min_items units; a column identical or "
        "near-identical (exact agreement above 0.98) to another's on 20 or more items is "
        "refused before the run; its interval, not its point, is compared with the floor.",
        "Real expert pairs agree exactly on at most 0.88 of 50 items (evidence.expert_pairs).",
    ),
    (
        "Provenance: a run whose replies came from the LLM simulator is simulated however the "
        "judges were reached; its own report and any real judges' scores say caution "
        "(simulated_calibration); a run applies only to a panel of the same endpoints.",
        "tests/e2e/test_evidence_gate_attacks.py (SQLite and PostgreSQL).",
    ),
    (
        "RESCUE support target: Recall@1 corrected for the chance of the rater's own habit of "
        "first choices (a client by position, the group label by itself); no like-for-like "
        "test. The rubric's priors are the paper's zero-shot task scores, not agreement, "
        "under its own context windows: they describe task difficulty, never this panel.",
        "A constant 'first-listed client' ranking scores 0.000 (uniform 1/k: +0.312) "
        "(evidence.rescue_chance).",
    ),
)


def rules_html() -> str:
    """The rules as an ordered list, each with its error rate and evidence."""
    items = "".join(f"<li>{escape(rule)} <em>{escape(rate)}</em></li>" for rule, rate in GATE_RULES)
    return f"<h2>How a dimension earns trusted</h2><ol class='rules'>{items}</ol>"


def _bound(value: float | None, mc: tuple[float | None, float | None] | None) -> str:
    text = "–" if value is None else f"{value:.3f}"
    if mc and mc[0] is not None and mc[1] is not None:
        text += f" (Monte Carlo ±{(mc[1] - mc[0]) / 2:.3f})"
    return text


def trust_test_html(dim: DimensionReport) -> str:
    """One dimension's deciding test in a sentence (empty without one)."""
    like = dim.like_for_like
    if like is None:
        return ""
    if like.coefficient == "ac2":
        test = (
            f"prevalence paradox (most frequent level {like.dominant_share or 0:.0%} of items): "
            f"panel's AC2 minus the experts' = {like.ac2_difference}, its margin over the 95th "
            "percentile of its permutation distribution "
            f"{_bound(like.ac2_lower, like.ac2_lower_mc)} against 0"
        )
    else:
        test = (
            f"mean kappa against single experts {like.estimate}, one-sided 95% lower bound "
            f"{_bound(like.lower, like.lower_mc)} against the line {like.line}"
        )
    verdict = "passed" if like.trusted else "not passed: " + ", ".join(like.reasons)
    return (
        f"<p class='trust-test'>Trust test on {like.units} units ({like.n} items): "
        f"{escape(test)}; {escape(verdict)}.</p>"
    )


def report_intro(report: CalibrationReport) -> str:
    """The paragraph that states the thresholds and the resampling."""
    groups = f" of {report.groups} groups" if report.groups else ""
    resamples = f"{report.resamples:,}" if report.resamples is not None else "–"
    return (
        f"<p>The line κ = {report.threshold} is the median expert-expert weighted kappa "
        f"of Kumar et al.; below the floor κ = {report.floor} a dimension is not reliably "
        f"measurable. min_items {report.min_items} independent units, min_coverage "
        f"{report.min_coverage}; intervals from {resamples} resamples of units"
        f"{groups}. The rules and their measured error rates are listed at the end.</p>"
    )
