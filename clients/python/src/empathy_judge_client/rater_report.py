"""One rater's part of a calibration report: a judge's, or the panel's, agreement with the
experts' consensus on one dimension (computed by :mod:`judge.calibration._rater_stats`).

Rates come twice, over the items the rater answered and with an abstention counted as a miss
(``*_abstain_as_miss``), each with its 95% interval (``*_ci95``); which rates are there
depends on the scale: accuracy always, F1 with precision and recall on binary scales, Recall@1
and MRR on ranked ones, chance-corrected Recall@1 when the labels are the session's
participants. ``agreement`` is the statistic that decides the flag (``kappa``, or
chance-corrected Recall@1) and ``ci95`` its interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import model_validator

from empathy_judge_client.report_model import Interval, ReportPart, ScaleValue


@dataclass(frozen=True)
class Rate:
    """One rate of a rater (a view of :class:`RaterStats`' fields, not stored as such):
    over the answered items with its interval, and with abstentions as misses when the
    report holds that variant (``counted_as_miss``)."""

    name: str
    value: float | None
    ci95: Interval | None
    abstain_as_miss: float | None
    counted_as_miss: bool


class ConfusionMatrix(ReportPart):
    """Rows: the experts' consensus; columns: the rater (first choice on ranked scales);
    ``abstained`` counts, per consensus label, the items the rater left unanswered."""

    labels: list[ScaleValue]
    matrix: list[list[int]]
    abstained: list[int]


class RaterStats(ReportPart):
    """One rater on one dimension. Runs stored before the evidence gate (98181d4) carry only
    ``rater`` to ``mean_normalised`` and the rates of their scale, without ``_ci95`` or
    ``_abstain_as_miss``; their ``kappa`` was the deciding statistic and reads as
    ``agreement``."""

    rater: str
    n: int
    abstained: int
    coverage: float | None = None
    resampling_units: int | None = None
    kappa_observed_categories: float | None = None  # ordinal scales
    kappa: float | None
    kappa_ci95: Interval | None = None
    #: the Monte Carlo interval of ``kappa_ci95``'s lower end (the bound the floor test reads)
    kappa_low_mc: Interval | None = None
    ac1: float | None = None
    ac2: float | None = None  # ordinal scales: Gwet's quadratic-weighted AC2
    alpha: float | None
    mean_normalised: float | None
    bias_vs_experts: dict[str, float | None] | None = None
    accuracy: float | None = None
    accuracy_ci95: Interval | None = None
    accuracy_abstain_as_miss: float | None = None
    accuracy_abstain_as_miss_ci95: Interval | None = None
    f1: float | None = None
    f1_ci95: Interval | None = None
    f1_abstain_as_miss: float | None = None
    f1_abstain_as_miss_ci95: Interval | None = None
    precision: float | None = None
    recall: float | None = None
    recall_at_1: float | None = None
    recall_at_1_ci95: Interval | None = None
    recall_at_1_abstain_as_miss: float | None = None
    recall_at_1_abstain_as_miss_ci95: Interval | None = None
    mrr: float | None = None
    mrr_ci95: Interval | None = None
    mrr_abstain_as_miss: float | None = None
    mrr_abstain_as_miss_ci95: Interval | None = None
    chance_recall_at_1: float | None = None
    chance_corrected_recall_at_1: float | None = None
    chance_corrected_recall_at_1_ci95: Interval | None = None
    agreement: float | None
    ci95: Interval
    confusion: ConfusionMatrix | None = None

    @model_validator(mode="before")
    @classmethod
    def _kappa_decided_first_runs(cls, data: Any) -> Any:
        """The first stored runs name their deciding statistic ``kappa`` only."""
        if isinstance(data, dict) and "agreement" not in data and "kappa" in data:
            return data | {"agreement": data["kappa"]}
        return data

    def rates(self) -> list[Rate]:
        """The rates this rater's report holds, in the order above."""
        every = [
            Rate(
                "accuracy",
                self.accuracy,
                self.accuracy_ci95,
                self.accuracy_abstain_as_miss,
                self.present("accuracy_abstain_as_miss"),
            ),
            Rate(
                "f1",
                self.f1,
                self.f1_ci95,
                self.f1_abstain_as_miss,
                self.present("f1_abstain_as_miss"),
            ),
            Rate(
                "recall_at_1",
                self.recall_at_1,
                self.recall_at_1_ci95,
                self.recall_at_1_abstain_as_miss,
                self.present("recall_at_1_abstain_as_miss"),
            ),
            Rate(
                "mrr",
                self.mrr,
                self.mrr_ci95,
                self.mrr_abstain_as_miss,
                self.present("mrr_abstain_as_miss"),
            ),
            Rate(
                "chance_corrected_recall_at_1",
                self.chance_corrected_recall_at_1,
                self.chance_corrected_recall_at_1_ci95,
                None,
                False,
            ),
        ]
        return [rate for rate in every if self.present(rate.name)]

    @property
    def abstention_rate(self) -> float | None:
        total = self.n + self.abstained
        return self.abstained / total if total else None
