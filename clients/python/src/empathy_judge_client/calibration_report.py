"""The calibration report (docs/DESIGN.md section 2): how well each judge and the panel's
aggregate agree with the experts, per dimension, and the reliability flag that follows.

:mod:`judge.calibration` computes it, the calibration service stores it (``report_json``) and
every reader (the API and its client, the HTML page, the CLI, the run gauges, canary drift,
the reliability history) parses it back into these models. Fields with a default are absent
from some reports: a scale they do not apply to, or a run stored before they existed (see
:mod:`empathy_judge_client.report_model` for how presence is kept). The statistics behind each field
are described in :mod:`judge.calibration._report` and :mod:`judge.calibration._rater_stats`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from empathy_judge_client.flag_evidence import FlagEvidence
from empathy_judge_client.guarantees import DimensionGuarantee
from empathy_judge_client.rater_report import RaterStats
from empathy_judge_client.report_model import Interval, ReportPart, ScaleValue
from empathy_judge_client.result import ReliabilityFlag
from empathy_judge_client.trajectory_calibration import TrajectoryCalibration


class RubricRef(BaseModel):
    id: str
    version: str
    hash: str


class ExpertPair(ReportPart):
    """Two experts' agreement on the dimension's metric over the items both labelled."""

    a: str
    b: str
    kappa: float | None
    n: int
    kappa_observed_categories: float | None = None  # ordinal scales
    ac1: float | None = None  # closed label sets


class ExpertVsOthers(ReportPart):
    """One expert against the consensus of the other experts."""

    expert: str
    kappa: float | None
    n: int


class ExpertBaseline(ReportPart):
    """The experts' agreement among themselves (two or more experts); ``median`` is the
    median pair, the flag's ``expert_kappa``."""

    pairs: list[ExpertPair]
    median: float | None
    alpha: float | None
    fleiss_kappa: float | None = None
    n_experts: int | None = None
    n_items: int | None = None
    n_units: int | None = None
    leave_one_out: list[ExpertVsOthers] | None = None
    leave_one_out_median: float | None = None
    #: the experts counted as distinct annotators (a copied column counts once)
    distinct_experts: list[str] | None = None
    #: why a column was not counted: "e2 repeats e1: identical columns on all 60 items ..."
    not_distinct: list[str] | None = None
    #: the baseline the gate reads: mean kappa over the distinct pairs, its interval and
    #: one-sided 95% lower bound (evidence/TRUST.md, section 6)
    mean: float | None = None
    ci95: Interval | None = None
    lower: float | None = None


class LikeForLike(ReportPart):
    """The test that decides ``trusted`` (evidence/TRUST.md, section 5): the panel's kappa
    against each single distinct expert, averaged (like for like with the expert pairs behind
    the line), every abstention counted as the worst answer; trusted when its one-sided 95%
    lower bound (``lower``, with its Monte Carlo interval ``lower_mc``) is at or above
    ``line`` and outside that Monte Carlo error of it, over at least 5 independent units,
    and every consensus level present holds ``min_units_per_level`` units (``levels``).
    ``reasons`` says why not (empty: trusted)."""

    statistic: str
    estimate: float | None
    ci95: Interval | None
    lower: float | None
    lower_mc: Interval | None = None
    n: int
    units: int
    abstentions_as_misses: int
    line: float
    per_expert: dict[str, float | None]
    consensus_kappa: float | None
    levels: dict[str, int]
    min_units_per_level: int
    reasons: list[str]
    trusted: bool
    #: the test that decided: ``kappa`` (the lower bound against ``line``), or ``ac2`` under
    #: kappa's prevalence paradox (the most frequent whole consensus level holds more than
    #: 80% of the items, two or more distinct experts, kappa's lower bound above 0): the
    #: panel's mean AC2 against single experts minus the experts' own mean pairwise AC2
    #: (``ac2_difference``, with its bootstrap ``ac2_ci95``) against its permutation
    #: distribution: ``ac2_lower`` is D minus that distribution's 95th percentile (with
    #: ``ac2_lower_mc``), trusted at or above 0 (evidence/TRUST.md, section 4c)
    coefficient: str = "kappa"
    dominant_share: float | None = None
    ac2_difference: float | None = None
    ac2_ci95: Interval | None = None
    ac2_lower: float | None = None
    ac2_lower_mc: Interval | None = None


class Prevalence(ReportPart):
    """The most frequent consensus label (first choice of a ranked one) and its share."""

    label: ScaleValue
    share: float | None
    n: int


class MajorityBaseline(ReportPart):
    """What always answering the most frequent consensus label scores."""

    label: ScaleValue
    accuracy: float | None
    f1: float | None = None  # binary
    ranking: list[ScaleValue] | None = None  # ranked: the k most frequent labels
    recall_at_1: float | None = None
    mrr: float | None = None


class InterJudge(ReportPart):
    """How far the panel's judges agree with each other (not with the experts)."""

    alpha: float | None
    fleiss_kappa: float | None
    n_judges: int


class YesRates(ReportPart):
    """Accuracy and F1 of always answering yes."""

    accuracy: float | None
    f1: float | None


class BalancedRates(ReportPart):
    """A rater's accuracy and F1 on yes/no-balanced resamples, beside always-yes there."""

    n: int
    accuracy: float | None
    accuracy_ci95: Interval
    f1: float | None
    f1_ci95: Interval
    always_yes: YesRates


class BalancedResamples(ReportPart):
    """A binary dimension on yes/no-balanced resamples (as RESCUE-BENCH scores intervene-now);
    a rater is null when no group holds both answers."""

    natural_prevalence_yes: float | None
    always_yes_natural: YesRates | None = None
    raters: dict[str, BalancedRates | None]


class GivenEvaluation(ReportPart):
    """The items that told the judges some labels (``told``), evaluated apart."""

    told: list[str]
    items_with_labels: int
    raters: list[RaterStats]


class AgreementEstimate(ReportPart):
    agreement: float | None
    ci95: Interval


class LikeForLikeEstimate(ReportPart):
    """An aggregate's mean agreement with single experts (like for like with the experts'
    pairs), its two-sided interval and one-sided lower bound at ``confidence``."""

    agreement: float | None
    ci95: Interval
    lower: float | None
    confidence: float


class DifferenceEstimate(ReportPart):
    estimate: float
    ci95: Interval


class AutoChoice(ReportPart):
    """What ``aggregation: auto`` uses on this dimension, and why."""

    method: Literal["equal", "weighted"]
    reason: str


class HolmDecision(ReportPart):
    """Holm's step-down correction over the rubric's evaluated dimensions: this dimension's
    p-value was compared with ``threshold`` = ``alpha / (dimensions - rank)`` (``rank`` from 0
    by p-value) when the steps before it all rejected (``reached``); ``rejected`` is the
    decision (weighting helps)."""

    dimensions: int
    alpha: float
    rank: int
    threshold: float
    reached: bool
    rejected: bool


class AggregationComparison(ReportPart):
    """Equal vs reliability-weighted aggregation, cross-validated (see
    :mod:`judge.calibration._aggregation_comparison`); ``equal``, ``weighted`` and
    ``difference`` are there when it was ``evaluated``; ``p_value`` (one-sided, H0: weighted
    <= equal, from the bootstrap that refits the weights in every resample) and ``holm`` (the
    decision across the rubric's dimensions) when the refit test applies (not ranked
    scales); ``ties``: how a tied vote counts in both aggregates."""

    weight_method: str
    weights: dict[str, float] | None
    folds: int
    repeats: int
    seed: int
    resamples: int
    n: int
    units: int
    note: str
    evaluated: bool
    equal: AgreementEstimate | None = None
    weighted: AgreementEstimate | None = None
    #: the weighted aggregate against each single distinct expert, averaged (refit interval):
    #: what the flag of a weighted score tests against the line
    weighted_like_for_like: LikeForLikeEstimate | None = None
    difference: DifferenceEstimate | None = None
    weighting_helps: bool | None
    why: str
    auto: AutoChoice | None = None
    p_value: float | None = None
    holm: HolmDecision | None = None
    ties: Literal["split"] | None = None


class ExpertBaselineUsed(ReportPart):
    """Where the flag's expert agreement came from (``source``; null: nowhere) and why."""

    source: str | None
    why: str


class DimensionReport(ReportPart):
    """One dimension. Without expert labels (or a metric) only the first fields are there and
    ``raters`` is empty; ``flag_inputs`` is what the run stores for this dimension's flags."""

    scale: Literal["ordinal", "binary", "nominal", "ranked", "free_text"]
    metric: str | None
    categories: Literal["scale"] | None = None
    items_with_labels: int
    experts: list[str]
    groups: int | None = None
    #: independent units behind ``items_with_labels`` (groups and repeated content collapsed)
    units: int | None = None
    prevalence: Prevalence | None = None
    majority_baseline: MajorityBaseline | None = None
    expert_expert: ExpertBaseline | None
    consensus_bias_vs_experts: dict[str, float | None] | None = None
    raters: list[RaterStats]
    inter_judge: InterJudge | None = None
    balanced: BalancedResamples | None = None
    given: GivenEvaluation | None = None
    aggregation: AggregationComparison | None = None
    like_for_like: LikeForLike | None = None
    expert_baseline_used: ExpertBaselineUsed | None = None
    flag: ReliabilityFlag | None
    flag_inputs: FlagEvidence | None = None
    guarantee: DimensionGuarantee | None = None  # item-level guarantees (issue 27)

    def rater(self, name: str) -> RaterStats | None:
        return next((r for r in self.raters if r.rater == name), None)


class PanelRef(ReportPart):
    name: str
    judges: list[str]


class JudgeStability(ReportPart):
    """A judge's self-consistency over its samples of each item (panel option ``samples``)."""

    n_items: int
    samples: int
    share_identical: float
    share_identical_ci95: Interval | None = None
    alpha: float | None  # null when every sample of every item agrees: perfectly stable
    alpha_ci95: Interval | None = None


class CallCost(ReportPart):
    """Calls per item: the panel's composition (samples x judges) and what the run made."""

    calls_per_item: int
    measured_calls_per_item: float | None
    n_items: int


class RaterDrift(ReportPart):
    """A canary run's rater against the canary's baseline run."""

    kappa: float | None
    baseline_kappa: float | None
    kappa_delta: float | None
    mean_shift: float | None
    abstention_delta: float | None


class CanaryRef(ReportPart):
    id: str
    name: str


class CalibrationReport(ReportPart):
    """A calibration run's report. :func:`judge.calibration.calibration_report` fills the
    fields up to ``dimensions``; the run adds ``panel`` to ``failed_items`` when it stores the
    report, and a canary's run its ``drift`` from the canary's baseline."""

    run_id: str
    rubric: RubricRef
    judges: list[str]
    experts: list[str]
    n_items: int
    simulated: bool = False
    threshold: float
    floor: float
    min_items: int | None = None
    min_coverage: float | None = None
    resamples: int | None = None
    groups: int | None = None
    #: independent units among ``n_items``: a group, or a conversation however often submitted
    units: int | None = None
    #: items whose conversation repeats an earlier item's (counted once, in its unit)
    repeated_items: int | None = None
    legend: dict[str, str] | None = None
    dimensions: dict[str, DimensionReport]
    panel: PanelRef | None = None
    #: dimension -> judge -> stability; empty when no judge took more than one sample
    stability: dict[str, dict[str, JudgeStability]] | None = None
    cost: CallCost | None = None
    label: str | None = None
    failed_items: int | None = None
    #: dimension -> rater -> drift
    drift: dict[str, dict[str, RaterDrift]] | None = None
    canary: CanaryRef | None = None
    #: nominal dimension -> how the panel follows it across whole sessions (issue 31);
    #: only for runs whose items are session checkpoints
    trajectories: dict[str, TrajectoryCalibration] | None = None

    def calibrated(self) -> dict[str, DimensionReport]:
        """The dimensions the run measured (those with raters)."""
        return {dim_id: dim for dim_id, dim in self.dimensions.items() if dim.raters}

    def flag_inputs(self) -> dict[str, FlagEvidence]:
        """What reliability flags need from the run, per calibrated dimension."""
        return {
            dim_id: dim.flag_inputs
            for dim_id, dim in self.dimensions.items()
            if dim.flag_inputs is not None
        }
