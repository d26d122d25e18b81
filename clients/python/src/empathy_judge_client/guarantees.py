"""Item-level guarantees (issue 27): the policy, what a calibration run stores for them, and
what each scored dimension carries.

Two guarantees, both for items exchangeable with the calibration's (same framework and data
source, same panel, prompts and models; statistics in :mod:`judge.reliability`):

- a conformal *interval* (ordinal) or *prediction set* (binary, nominal, ranked first choice)
  that holds the experts' consensus with probability at least ``level``, marginally (averaged
  over calibrations and items, not for each item);
- *selective trust*: a dimension is ``guaranteed`` when the panel's confidence clears the
  threshold chosen by fixed-sequence testing, so that agreement with the experts' consensus
  (median for ordinal scales, majority label otherwise; within ``agree_within`` levels) on the
  guaranteed items is at least ``agreement`` with probability at least ``confidence`` over the
  calibration draw.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from empathy_judge_client.report_model import ReportPart, ScaleValue

#: why a dimension of a result is not guaranteed
NotGuaranteedReason = Literal[
    "below_confidence_threshold",  # the panel's confidence is below the calibrated threshold
    "no_guarantee_available",  # no threshold passed (see ``status``)
    "not_calibrated",  # no calibration run of this panel holds the dimension
    "policy_changed",  # the calibration was computed for another guarantee policy
    "evidence_gate",  # the flag's evidence gate (min_items, CI floor, coverage) fails
    "no_score",  # the panel gave no score (below quorum)
    "escalated",  # a cascade's last stage is not confident enough: a person decides
]
#: a calibration's selective status (:mod:`judge.reliability._selective`), or ``not_calibrated``
GuaranteeStatus = Literal[
    "guaranteed", "too_few_calibration_units", "no_threshold_passes", "not_calibrated"
]


class GuaranteePolicy(BaseModel):
    """``reliability.guarantee`` of a rubric (or the settings' default): the agreement to
    guarantee, with what probability, within how many levels, and the interval level."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    agreement: float = Field(
        default=0.8, gt=0, lt=1, description="agreement with the experts' consensus to guarantee"
    )
    confidence: float = Field(
        default=0.9, gt=0, lt=1, description="probability over calibrations (1 - delta)"
    )
    agree_within: int = Field(
        default=0, ge=0, description="ordinal: levels from the consensus that still agree"
    )
    level: float = Field(default=0.9, gt=0, lt=1, description="conformal interval level")


class ConformalBin(ReportPart):
    """One confidence bin's own threshold (Mondrian conformal prediction)."""

    n: int
    quantile: float | None  # None: too few items, the whole scale
    status: Literal["ok", "too_few_calibration_units"]


class ConformalCalibration(ReportPart):
    """The split conformal threshold on the nonconformity score (ordinal: |panel - consensus|,
    labels: 1 - the consensus label's share of the judges' votes); ``quantile`` is None when
    the calibration is too small (``min_units``), then every interval is the whole scale.
    ``coverage`` and ``mean_width`` are on the calibration items themselves (in-sample);
    ``bins`` are the Mondrian thresholds per confidence bin (unanimous / split panel), shown
    for comparison: results use the marginal ``quantile`` (evidence/GUARANTEES.md: the bins
    widen intervals at these calibration sizes)."""

    level: float
    n: int
    rank: int
    quantile: float | None
    status: Literal["ok", "too_few_calibration_units"]
    min_units: int
    nonconformity: str
    coverage: float | None = None
    mean_width: float | None = None
    bins: dict[str, ConformalBin] | None = None


class ThresholdPoint(ReportPart):
    """One step of the fixed-sequence test, strictest threshold first."""

    threshold: float
    kept: int
    errors: int
    agreement: float | None
    coverage: float
    p_value: float
    tested: bool
    passed: bool


class SelectiveCalibration(ReportPart):
    """The confidence threshold (None unless ``status`` is ``guaranteed``), the share of
    calibration items it keeps (``coverage``) and their agreement, and the threshold curve."""

    status: Literal["guaranteed", "too_few_calibration_units", "no_threshold_passes"]
    threshold: float | None
    coverage: float
    agreement: float | None
    n: int
    min_units: int
    curve: list[ThresholdPoint]


class CascadeCalibration(ReportPart):
    """A cascade panel's stage thresholds, chosen jointly so the guarantee holds for the
    cascade as a whole (:func:`judge.reliability.cascade_threshold`); ``thresholds`` is None
    unless ``status`` is ``guaranteed``; ``stage_shares`` has one share of the calibration
    items per stage and a last one for the items escalated to a person."""

    status: Literal["guaranteed", "too_few_calibration_units", "no_threshold_passes"]
    stages: list[list[str]]
    thresholds: list[float] | None
    coverage: float
    agreement: float | None
    stage_shares: list[float]
    n: int
    min_units: int


class DimensionGuarantee(ReportPart):
    """What a calibration run stores for one dimension's item-level guarantees."""

    policy: GuaranteePolicy
    scale: Literal["ordinal", "binary", "nominal", "ranked"]
    n: int  # calibration items with a consensus label and a panel answer
    units: int  # independent units among them (groups, else items)
    confidence: str  # how the per-item confidence is computed
    conformal: ConformalCalibration
    selective: SelectiveCalibration
    cascade: CascadeCalibration | None = None  # cascade panels only


class ScoreInterval(BaseModel):
    """An ordinal score's conformal interval: the consensus lies in ``low..high`` with
    probability at least ``level`` (marginal coverage, items exchangeable with calibration
    ``calibration_id``'s)."""

    level: float
    low: float | None
    high: float | None
    calibration_id: str
    simulated: bool = False


class PredictionSet(BaseModel):
    """A label dimension's conformal prediction set (ranked: for the first choice)."""

    level: float
    labels: list[ScaleValue]
    calibration_id: str
    simulated: bool = False


class ItemGuarantee(BaseModel):
    """Whether this item's dimension is guaranteed, and why not. ``agreement`` /
    ``probability`` / ``agree_within`` restate the policy; ``confidence`` is the panel's
    confidence on this item and ``threshold`` the calibrated one; ``status`` the calibration's
    selective status (``no_guarantee_available``: too few units or no threshold passes)."""

    guaranteed: bool
    reason: NotGuaranteedReason | None = None
    status: GuaranteeStatus
    agreement: float
    probability: float
    agree_within: int
    confidence: float | None = None
    threshold: float | None = None
    calibration_id: str | None = None
    simulated: bool = False
