"""Inter-rater reliability and agreement statistics (pure functions, no I/O).

Ratings are plain sequences; a missing rating is ``None`` or NaN and is never imputed:
pairwise statistics use only the items both raters rated. Each function's docstring states
its edge cases (NaN where a statistic is undefined).
"""

from __future__ import annotations

from judge.reliability._abstention import (
    ABSTAINED,
    abstain_as_miss_interval,
    worst_case_answers,
)
from judge.reliability._agreement_ac1 import gwet_ac1
from judge.reliability._agreement_ac2 import (
    PARADOX_SHARE,
    GateAgreement,
    Prevalence,
    agreement_for_gate,
    dominant_level,
    gwet_ac2,
)
from judge.reliability._alpha import krippendorff_alpha
from judge.reliability._assurance import (
    DEFAULT_ASSURANCE,
    AssurancePlan,
    units_for_assurance,
)
from judge.reliability._bootstrap import bootstrap_ci
from judge.reliability._cascade import (
    CascadeCost,
    CascadeStep,
    CascadeThreshold,
    cascade_cost,
    cascade_threshold,
    route,
)
from judge.reliability._classification import (
    PRF,
    accuracy,
    binary_prf,
    mrr,
    recall_at_1,
)
from judge.reliability._cluster_kappa import (
    KAPPA_WORST,
    ClusterKappa,
    MeanStatistic,
    UnitStatistic,
    cluster_kappa,
)
from judge.reliability._confidence import (
    ConfidenceCalibration,
    PanelFeatures,
    fit_confidence_calibration,
    label_features,
    ordinal_features,
)
from judge.reliability._conformal import (
    ConformalQuantile,
    borda_share_scores,
    conformal_min_units,
    conformal_quantile,
    conformal_rank,
    coverage_share_probability,
    interval_covers,
    interval_widths,
    label_scores_of,
    mondrian_quantiles,
    mondrian_thresholds,
    ordinal_intervals,
    ordinal_scores,
    prediction_sets,
    vote_share_scores,
)
from judge.reliability._crossval import fold_assignments
from judge.reliability._expert_baseline import (
    NEAR_IDENTICAL_AGREEMENT,
    NEAR_IDENTICAL_MIN_ITEMS,
    DistinctCheck,
    ExpertBaseline,
    distinct_annotators,
    expert_baseline,
)
from judge.reliability._kappa import (
    KappaResult,
    Weights,
    cohens_kappa,
    contingency_table,
    fleiss_kappa,
    kappa_from_table,
    kappa_result,
    weighted_kappa,
)
from judge.reliability._kappa_bootstrap import bootstrap_kappa_ci
from judge.reliability._kappa_interval import (
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    METHODS,
    MIN_UNITS,
    KappaInterval,
    engine_interval,
    kappa_engine,
    kappa_interval,
    shared_unit_kappas,
)
from judge.reliability._levels import (
    MIN_UNITS_PER_LEVEL,
    LevelCheck,
    check_levels,
    units_per_level,
)
from judge.reliability._mc_error import (
    MonteCarloInterval,
    quantile_mc_interval,
    within_mc_error,
)
from judge.reliability._median_rater import median_rater
from judge.reliability._missing import is_missing
from judge.reliability._paired import (
    PairedComparison,
    ResampledStatistic,
    kappa_statistic,
    label_codes,
    ordinal_codes,
    paired_comparison,
    ratio_statistic,
)
from judge.reliability._planning import (
    ProjectionCheck,
    equal_allocation,
    level_mix,
    projected_half_width,
    projected_lower,
    projection_check,
    stratified_proposal,
    units_needed,
)
from judge.reliability._prevalence_trust import (
    AC2_BELOW_EXPERTS,
    AC2_CONFIDENCE,
    AC2_METHOD,
    AC2_WITHIN_MC_ERROR,
    ac2_reasons,
    ac2_versus_experts,
)
from judge.reliability._ranked_refit import RankedDesign, ranked_design
from judge.reliability._resample import bootstrap_ratio_ci
from judge.reliability._rescue_chance import (
    ChanceCorrectedRecall,
    candidate_keys,
    marginal_chance_recall_at_1,
    marginal_chances,
)
from judge.reliability._scale_kappa import scale_grid, scale_kappa, scale_kappa_result
from judge.reliability._selective import (
    SelectiveThreshold,
    ThresholdStep,
    agreement_within,
    binomial_p_value,
    kept_by,
    selective_min_units,
    selective_threshold,
)
from judge.reliability._trust import (
    TRUST_CONFIDENCE,
    TrustDecision,
    like_for_like_trust,
)
from judge.reliability._weighted_refit import (
    ALPHA,
    SINGLE_EXPERT_CONFIDENCE,
    WeightedComparison,
    aggregation_design,
    compare_weighted,
    holm,
)
from judge.reliability._weighted_refit import (
    Design as AggregationDesign,
)

__all__ = [
    "ABSTAINED",
    "AC2_BELOW_EXPERTS",
    "AC2_CONFIDENCE",
    "AC2_METHOD",
    "AC2_WITHIN_MC_ERROR",
    "ALPHA",
    "DEFAULT_ASSURANCE",
    "DEFAULT_METHOD",
    "DEFAULT_RESAMPLES",
    "KAPPA_WORST",
    "METHODS",
    "MIN_UNITS",
    "MIN_UNITS_PER_LEVEL",
    "NEAR_IDENTICAL_AGREEMENT",
    "NEAR_IDENTICAL_MIN_ITEMS",
    "PARADOX_SHARE",
    "PRF",
    "SINGLE_EXPERT_CONFIDENCE",
    "TRUST_CONFIDENCE",
    "AggregationDesign",
    "AssurancePlan",
    "CascadeCost",
    "CascadeStep",
    "CascadeThreshold",
    "ChanceCorrectedRecall",
    "ClusterKappa",
    "ConfidenceCalibration",
    "ConformalQuantile",
    "DistinctCheck",
    "ExpertBaseline",
    "GateAgreement",
    "KappaInterval",
    "KappaResult",
    "LevelCheck",
    "MeanStatistic",
    "MonteCarloInterval",
    "PairedComparison",
    "PanelFeatures",
    "Prevalence",
    "ProjectionCheck",
    "RankedDesign",
    "ResampledStatistic",
    "SelectiveThreshold",
    "ThresholdStep",
    "TrustDecision",
    "UnitStatistic",
    "WeightedComparison",
    "Weights",
    "abstain_as_miss_interval",
    "ac2_reasons",
    "ac2_versus_experts",
    "accuracy",
    "aggregation_design",
    "agreement_for_gate",
    "agreement_within",
    "binary_prf",
    "binomial_p_value",
    "bootstrap_ci",
    "bootstrap_kappa_ci",
    "bootstrap_ratio_ci",
    "borda_share_scores",
    "candidate_keys",
    "cascade_cost",
    "cascade_threshold",
    "check_levels",
    "cluster_kappa",
    "cohens_kappa",
    "compare_weighted",
    "conformal_min_units",
    "conformal_quantile",
    "conformal_rank",
    "contingency_table",
    "coverage_share_probability",
    "distinct_annotators",
    "dominant_level",
    "engine_interval",
    "equal_allocation",
    "expert_baseline",
    "fit_confidence_calibration",
    "fleiss_kappa",
    "fold_assignments",
    "gwet_ac1",
    "gwet_ac2",
    "holm",
    "interval_covers",
    "interval_widths",
    "is_missing",
    "kappa_engine",
    "kappa_from_table",
    "kappa_interval",
    "kappa_result",
    "kappa_statistic",
    "kept_by",
    "krippendorff_alpha",
    "label_codes",
    "label_features",
    "label_scores_of",
    "level_mix",
    "like_for_like_trust",
    "marginal_chance_recall_at_1",
    "marginal_chances",
    "median_rater",
    "mondrian_quantiles",
    "mondrian_thresholds",
    "mrr",
    "ordinal_codes",
    "ordinal_features",
    "ordinal_intervals",
    "ordinal_scores",
    "paired_comparison",
    "prediction_sets",
    "projected_half_width",
    "projected_lower",
    "projection_check",
    "quantile_mc_interval",
    "ranked_design",
    "ratio_statistic",
    "recall_at_1",
    "route",
    "scale_grid",
    "scale_kappa",
    "scale_kappa_result",
    "selective_min_units",
    "selective_threshold",
    "shared_unit_kappas",
    "stratified_proposal",
    "units_for_assurance",
    "units_needed",
    "units_per_level",
    "vote_share_scores",
    "weighted_kappa",
    "within_mc_error",
    "worst_case_answers",
]
