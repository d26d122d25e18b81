"""What a calibration run measured for one dimension: the evidence its reliability flags
weigh (the flag rule itself is the server's: ``judge.domain.flags``)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from empathy_judge_client.guarantees import DimensionGuarantee
from empathy_judge_client.label_reliability import LabelReliability
from empathy_judge_client.report_model import Interval, ReportPart


class WeightedEvidence(ReportPart):
    """The reliability-weighted aggregate's own agreement with the experts' consensus:
    cross-validated (weights fit on the other folds), with the interval of the bootstrap that
    refits the weights in every resample; ``n`` items in ``units`` independent units.
    ``like_for_like`` is its mean agreement with each single distinct expert and
    ``like_for_like_lower`` that one's one-sided 95% lower bound from the same resamples:
    what the weighted score's flag tests against the line (None: runs stored before it)."""

    model_config = ConfigDict(frozen=True)

    agreement: float | None
    ci95: Interval
    n: int
    units: int
    resamples: int
    like_for_like: float | None = None
    like_for_like_lower: float | None = None


class FlagEvidence(ReportPart):
    """What a calibration run measured for one dimension: the evidence a reliability flag
    weighs, stored per dimension with the run (``dimensions_json``, and ``flag_inputs`` in the
    report) and read back by the flag lookup, so that writer and reader share one spelling.

    ``judge_kappa`` is the panel aggregate's agreement with the experts' consensus (named by
    ``metric``), ``n`` the items where both existed, ``ci95`` its bootstrap interval and
    ``coverage`` the share of labelled items the panel answered. ``expert_kappa`` is the
    experts' median pairwise agreement, measured by ``n_experts`` experts on ``expert_n``
    items that two or more of them labelled.

    For reliability-weighted aggregation (:mod:`judge.domain.aggregation_choice`):
    ``judge_agreement`` is each judge's own agreement with the experts (the same metric, model
    -> value) and ``weighting_helps`` whether the run's cross-validated comparison showed the
    weighted aggregate beating the equal one (None: not evaluated). ``units`` counts the
    independent units (a group, or a conversation however often it was submitted:
    :mod:`judge.calibration._units`) behind ``n`` and ``ci95``, ``expert_units`` those behind
    ``expert_n``; the gate compares them, not the item counts, with ``min_items``.
    ``weighted`` is the weighted aggregate's own agreement and interval (what the flag of a
    weighted score weighs; None: not measured, e.g. ranked scales or runs stored before it).
    ``ci95_low_mc`` is the Monte Carlo interval of ``ci95``'s lower end: a floor inside it is
    not decided by the resamples drawn (caution).

    Runs stored before a field existed lack it (the first ones stored only the two kappas):
    it takes its default, and is not written back (see :mod:`judge.domain.report_model`). A
    key this model does not know fails validation.
    """

    model_config = ConfigDict(frozen=True)

    judge_kappa: float | None
    expert_kappa: float | None = None
    n: int = 0
    ci95: Interval | None = None
    coverage: float | None = None
    expert_n: int = 0
    n_experts: int = 0
    metric: str | None = None
    judge_agreement: dict[str, float | None] = Field(default_factory=dict)
    weighting_helps: bool | None = None
    units: int | None = None
    guarantee: DimensionGuarantee | None = None  # item-level guarantees (issue 27)
    expert_units: int | None = None
    distinct_experts: int | None = None
    expert_ci95: Interval | None = None
    expert_reasons: tuple[str, ...] | None = None
    like_for_like: float | None = None
    trust_lower: float | None = None
    trust_reasons: tuple[str, ...] | None = None
    #: nominal and ranked scales: each label's recall and precision (issue 31)
    labels: tuple[LabelReliability, ...] | None = None
    #: the Monte Carlo interval of ``ci95``'s lower end (where 2,000 resamples' bound moves)
    ci95_low_mc: Interval | None = None
    #: the weighted aggregate's own evidence (issue 23, phase 4)
    weighted: WeightedEvidence | None = None

    @property
    def independent_units(self) -> int:
        """The independent units behind the panel's agreement (``n`` for runs stored before
        units were counted): what ``min_items`` is compared with."""
        return self.units if self.units is not None else self.n

    @property
    def expert_independent_units(self) -> int:
        """The independent units two or more experts labelled (``expert_n`` for older runs)."""
        return self.expert_units if self.expert_units is not None else self.expert_n
