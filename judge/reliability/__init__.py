"""Inter-rater reliability and agreement statistics (pure functions, no I/O).

Ratings are plain sequences; a missing rating is ``None`` or NaN and is never imputed:
pairwise statistics use only the items both raters rated. Each function's docstring states
its edge cases (NaN where a statistic is undefined).
"""

from __future__ import annotations

from judge.reliability._agreement_ac1 import gwet_ac1
from judge.reliability._alpha import krippendorff_alpha
from judge.reliability._bootstrap import bootstrap_ci
from judge.reliability._classification import (
    PRF,
    accuracy,
    binary_prf,
    mrr,
    recall_at_1,
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

__all__ = [
    "PRF",
    "KappaResult",
    "PairedComparison",
    "ProjectionCheck",
    "ResampledStatistic",
    "accuracy",
    "binary_prf",
    "bootstrap_ci",
    "bootstrap_kappa_ci",
    "bootstrap_ratio_ci",
    "cohens_kappa",
    "contingency_table",
    "equal_allocation",
    "fleiss_kappa",
    "fold_assignments",
    "gwet_ac1",
    "is_missing",
    "kappa_from_table",
    "kappa_result",
    "kappa_statistic",
    "krippendorff_alpha",
    "label_codes",
    "level_mix",
    "median_rater",
    "mrr",
    "ordinal_codes",
    "paired_comparison",
    "projected_half_width",
    "projected_lower",
    "projection_check",
    "ratio_statistic",
    "recall_at_1",
    "scale_grid",
    "scale_kappa",
    "scale_kappa_result",
    "stratified_proposal",
    "units_needed",
    "weighted_kappa",
]
