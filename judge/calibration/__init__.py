"""The analysis of expert-labelled runs (pure computation over plain data, no I/O).

A calibration run's report (each judge's and the panel's agreement with the experts, the
expert baseline, the reliability flag it supports), the statistics of one rater, balanced
resamples, the comparison of equal and reliability-weighted aggregation, self-consistency
across samples, calibration planning, bias-probe reports, canary drift, pairwise agreement
between annotator files, and the HTML page of a report. Persistence and jobs are the
services' business; this package only computes.
"""

from __future__ import annotations

from judge.calibration._aggregation_comparison import (
    DEFAULT_FOLDS,
    DEFAULT_REPEATS,
    REFIT_RESAMPLES,
    ComparisonStopped,
    apply_holm,
    compare_aggregation,
)
from judge.calibration._agreement import (
    CSV_FIELDS,
    AgreementResult,
    AgreementRow,
    AlphaRow,
    Categories,
    compute_agreement,
)
from judge.calibration._annotators import AnnotatorPair, annotator_agreement
from judge.calibration._copied_experts import CopiedColumn, copied_expert_column
from judge.calibration._disagreements import Disagreement, largest_disagreements
from judge.calibration._drift import compare_reports
from judge.calibration._guarantees import add_guarantees, dimension_guarantee
from judge.calibration._html import heatmap_svg, render_report_html
from judge.calibration._label_reliability import label_reliability
from judge.calibration._plan import (
    calibration_plan,
    panel_engines,
    plan_dimension,
    predicted_level,
)
from judge.calibration._probe_report import (
    Variant,
    order_report,
    self_preference_report,
    verbosity_report,
)
from judge.calibration._rater_stats import RESAMPLE_SEED, agreement, metric_name
from judge.calibration._report import (
    PANEL,
    calibration_report,
    consensus,
    labelled_with_consensus,
)
from judge.calibration._scored import ScoredItem
from judge.calibration._stability import call_cost, intra_judge_stability
from judge.calibration._trajectory import TrajectoryPoint, trajectory_calibration

__all__ = [
    "CSV_FIELDS",
    "DEFAULT_FOLDS",
    "DEFAULT_REPEATS",
    "PANEL",
    "REFIT_RESAMPLES",
    "RESAMPLE_SEED",
    "AgreementResult",
    "AgreementRow",
    "AlphaRow",
    "AnnotatorPair",
    "Categories",
    "ComparisonStopped",
    "CopiedColumn",
    "Disagreement",
    "ScoredItem",
    "TrajectoryPoint",
    "Variant",
    "add_guarantees",
    "agreement",
    "annotator_agreement",
    "apply_holm",
    "calibration_plan",
    "calibration_report",
    "call_cost",
    "compare_aggregation",
    "compare_reports",
    "compute_agreement",
    "consensus",
    "copied_expert_column",
    "dimension_guarantee",
    "heatmap_svg",
    "intra_judge_stability",
    "label_reliability",
    "labelled_with_consensus",
    "largest_disagreements",
    "metric_name",
    "order_report",
    "panel_engines",
    "plan_dimension",
    "predicted_level",
    "render_report_html",
    "self_preference_report",
    "trajectory_calibration",
    "verbosity_report",
]
