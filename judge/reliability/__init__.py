"""Inter-rater reliability and agreement statistics (pure functions, no I/O).

Ratings are plain sequences; a missing rating is ``None`` or NaN and is never imputed:
pairwise statistics use only the items both raters rated. Each function's docstring states
its edge cases (NaN where a statistic is undefined).
"""

from __future__ import annotations

from judge.reliability._agreement_ac1 import gwet_ac1
from judge.reliability._alpha import krippendorff_alpha
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
from judge.reliability._kappa import (
    KappaResult,
    cohens_kappa,
    contingency_table,
    fleiss_kappa,
    kappa_from_table,
    kappa_result,
    weighted_kappa,
)
from judge.reliability._kappa_bootstrap import bootstrap_kappa_ci
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
from judge.reliability._resample import bootstrap_ratio_ci
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

__all__ = [
    "PRF",
    "CascadeCost",
    "CascadeStep",
    "CascadeThreshold",
    "ConfidenceCalibration",
    "ConformalQuantile",
    "KappaResult",
    "PairedComparison",
    "PanelFeatures",
    "ProjectionCheck",
    "ResampledStatistic",
    "SelectiveThreshold",
    "ThresholdStep",
    "accuracy",
    "agreement_within",
    "binary_prf",
    "binomial_p_value",
    "bootstrap_ci",
    "bootstrap_kappa_ci",
    "bootstrap_ratio_ci",
    "borda_share_scores",
    "cascade_cost",
    "cascade_threshold",
    "cohens_kappa",
    "conformal_min_units",
    "conformal_quantile",
    "conformal_rank",
    "contingency_table",
    "coverage_share_probability",
    "equal_allocation",
    "fit_confidence_calibration",
    "fleiss_kappa",
    "fold_assignments",
    "gwet_ac1",
    "interval_covers",
    "interval_widths",
    "is_missing",
    "kappa_from_table",
    "kappa_result",
    "kappa_statistic",
    "kept_by",
    "krippendorff_alpha",
    "label_codes",
    "label_features",
    "label_scores_of",
    "level_mix",
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
    "ratio_statistic",
    "recall_at_1",
    "route",
    "scale_grid",
    "scale_kappa",
    "scale_kappa_result",
    "selective_min_units",
    "selective_threshold",
    "stratified_proposal",
    "units_needed",
    "vote_share_scores",
    "weighted_kappa",
]
