"""The calibration report: how well each judge, and the panel's aggregate, agree with experts.

Pure computation over plain data (no I/O); the statistics of one rater are in
:mod:`judge.calibration._rater_stats`. Per dimension:

- expert consensus per item: the median of the experts (ordinal, as Kumar et al.), else the
  majority label (nominal, binary; ties go to the earlier label of the scale) or the majority
  first choice (ranked);
- the prevalence of the most frequent consensus label and what always answering it scores
  (the majority-class baseline);
- the expert-expert baseline when two or more experts labelled: every pair's agreement, their
  median (the flags' ``expert_kappa``), Krippendorff's alpha, and each expert against the
  consensus of the *others* (leave-one-expert-out), which compares experts the way judges
  are compared;
- each judge's and the aggregate's agreement with the consensus: quadratic-weighted kappa on
  the rubric's full scale (ordinal; the observed-category kappa of Kumar et al. next to it),
  Cohen's kappa and Gwet's AC1 (nominal, binary, first choice of a fixed ranked scale),
  chance-corrected Recall@1 (a ranked scale of the session's participants), accuracy, F1
  (binary), Recall@1 and MRR (ranked), coverage, confusion matrix, signed mean bias against
  each expert; rates over answered items and with abstentions counted as misses; bootstrap
  95% CIs that resample groups when items carry one;
- binary dimensions also on a yes/no-balanced resample (RESCUE-BENCH's intervene-now);
- items that told the judges some labels (``given``, e.g. the gold support target) are
  evaluated separately from the end-to-end items, which alone decide the flag;
- the reliability flag that results, with the evidence gate of docs/DESIGN.md section 2;
- equal vs reliability-weighted aggregation, cross-validated (``aggregation``, see
  :mod:`judge.calibration._aggregation_comparison`), and which one a panel with
  ``aggregation: auto`` now uses. The ``panel`` rater is always the equal aggregate (median,
  majority, Borda).
"""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from empathy_judge_client.flag_evidence import WeightedEvidence
from empathy_judge_client.trajectory_calibration import TrajectoryCalibration
from judge.calibration._aggregation_comparison import apply_holm, compare_aggregation
from judge.calibration._balanced import balanced_binary
from judge.calibration._label_reliability import label_reliability, label_reliability_applies
from judge.calibration._rater_stats import (
    CHANCE_R1,
    Paired,
    agreement,
    alpha,
    always_f1,
    finite,
    fleiss,
    label_set,
    majority_baseline,
    mean_bias,
    metric_name,
    observed_kappa,
    participant_labels,
    prevalence,
    rater_stats,
    resampling_units,
    top1,
)
from judge.calibration._rater_stats import ac1 as gwet
from judge.calibration._scored import ScoredItem, expert_column, experts_labelling
from judge.calibration._trajectory import TrajectoryPoint, trajectory_calibration
from judge.calibration._trust_gate import TrustGate, trust_gate
from judge.calibration._units import unit_ids
from judge.domain.aggregation_choice import choose_aggregation
from judge.domain.calibration_report import (
    AggregationComparison,
    AutoChoice,
    BalancedRates,
    BalancedResamples,
    CalibrationReport,
    DimensionReport,
    ExpertBaseline,
    ExpertBaselineUsed,
    ExpertPair,
    ExpertVsOthers,
    GivenEvaluation,
    InterJudge,
    RubricRef,
    YesRates,
)
from judge.domain.flags import Calibration, reliability_flag
from judge.domain.rater_report import RaterStats
from judge.domain.rubric import Dimension, ReliabilityPolicy, Rubric
from judge.reliability import DEFAULT_RESAMPLES, KappaInterval

PANEL = "panel"
CONSENSUS = "consensus"

LEGEND = {
    "kappa": "agreement with the experts' consensus over the items the rater answered",
    "agreement": "the statistic named by the dimension's metric (what decides the flag)",
    "<rate>": "accuracy, f1, recall_at_1, mrr over the items the rater answered",
    "<rate>_abstain_as_miss": "the same over every labelled item, an abstention counted as a miss",
    "coverage": "share of labelled items the rater answered",
    "n": "items with both a consensus label and an answer (the effective n)",
    "bias_vs_experts": "mean of (rater - expert) on the 0..1 normalised scale (+ = more lenient)",
    "categories": "ordinal kappa weighs every level of the rubric's scale (scikit-learn's "
    "labels=<all levels>); kappa_observed_categories uses only the levels either rater used, "
    "as Kumar et al. did",
}


def _majority(values: list[Any], order: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return None
    counts: dict[Any, int] = {}
    for v in present:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts.values())
    tied = [v for v in counts if counts[v] == best]
    position = {v: i for i, v in enumerate(order)}
    return min(tied, key=lambda v: position.get(v, len(order)))


def consensus(dim: Dimension, values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return None
    kind = dim.scale.type
    if kind == "ordinal":
        median = statistics.median(present)
        return int(median) if float(median).is_integer() else float(median)
    if kind == "binary":
        return _majority(present, [False, True])
    if kind == "nominal":
        return _majority(present, list(getattr(dim.scale, "label_ids", ())))
    if kind == "ranked":
        return _majority([top1(v) for v in present], [])
    return None


def _expert_baseline(
    dim: Dimension, experts: list[str], items: Sequence[ScoredItem]
) -> ExpertBaseline | None:
    if len(experts) < 2:
        return None
    columns = {e: expert_column(items, e, dim.id) for e in experts}
    pairs: list[ExpertPair] = []
    for a, b in combinations(experts, 2):
        both = [
            (x, y)
            for x, y in zip(columns[a], columns[b], strict=True)
            if x is not None and y is not None
        ]
        pair = ExpertPair(
            a=a, b=b, kappa=finite(agreement(dim, columns[a], columns[b])), n=len(both)
        )
        if dim.scale.type == "ordinal":
            pair.kappa_observed_categories = finite(observed_kappa(columns[a], columns[b]))
        if label_set(dim) is not None:
            pair.ac1 = gwet(dim, columns[a], columns[b])
        pairs.append(pair)
    finite_pairs = [p.kappa for p in pairs if p.kappa is not None]
    doubly = [i for i in range(len(items)) if sum(columns[e][i] is not None for e in experts) >= 2]
    loo: list[ExpertVsOthers] = []
    for e in experts:
        others = [
            consensus(dim, [columns[o][i] for o in experts if o != e]) for i in range(len(items))
        ]
        n = sum(
            1 for x, y in zip(columns[e], others, strict=True) if x is not None and y is not None
        )
        loo.append(ExpertVsOthers(expert=e, kappa=finite(agreement(dim, columns[e], others)), n=n))
    loo_finite = [x.kappa for x in loo if x.kappa is not None]
    return ExpertBaseline(
        pairs=pairs,
        median=finite(statistics.median(finite_pairs)) if finite_pairs else None,
        alpha=alpha(dim, [columns[e] for e in experts]),
        fleiss_kappa=fleiss(dim, [columns[e] for e in experts]),
        n_experts=len(experts),
        n_items=len(doubly),
        n_units=resampling_units([items[i].resampling_group for i in doubly]),
        leave_one_out=loo,
        leave_one_out_median=finite(statistics.median(loo_finite)) if loo_finite else None,
    )


def with_units(items: Sequence[ScoredItem]) -> list[ScoredItem]:
    """``items`` with their independent unit set (:mod:`judge.calibration._units`)."""
    units = unit_ids([it.group for it in items], [it.content for it in items])
    return [replace(it, unit=u) for it, u in zip(items, units, strict=True)]


def repeated_items(items: Sequence[ScoredItem]) -> int:
    """Items whose content repeats an earlier item's (collapsed into its unit)."""
    seen: set[str] = set()
    repeats = 0
    for it in items:
        if it.content is not None:
            repeats += it.content in seen
            seen.add(it.content)
    return repeats


def _candidates(dim: Dimension, item: ScoredItem) -> tuple[str, ...]:
    scale = dim.scale
    return tuple(scale.label_ids(item.participants)) if scale.type == "ranked" else ()


def labelled_with_consensus(
    dim: Dimension, items: Sequence[ScoredItem]
) -> tuple[list[str], list[ScoredItem], list[Any]]:
    """The experts who labelled ``dim``, the items with a consensus label, and that label."""
    experts = experts_labelling(items, dim.id)
    gold_all = [consensus(dim, [it.labels.get(e, {}).get(dim.id) for e in experts]) for it in items]
    keep = [i for i, g in enumerate(gold_all) if g is not None]
    return experts, [items[i] for i in keep], [gold_all[i] for i in keep]


@dataclass(frozen=True)
class _Evaluation:
    """Over some items of one dimension: the experts, the items with a consensus label and that
    label (``gold``), every rater's statistics, and the judges' and experts' columns."""

    experts: list[str]
    labelled: list[ScoredItem]
    gold: list[Any]
    raters: list[RaterStats]
    judge_columns: list[list[Any]]
    expert_columns: dict[str, list[Any]]


def _evaluate(
    dim: Dimension, items: Sequence[ScoredItem], judges: list[str], resamples: int
) -> _Evaluation:
    experts, labelled, gold = labelled_with_consensus(dim, items)
    expert_columns = {e: expert_column(labelled, e, dim.id) for e in experts}

    def paired(pred: list[Any]) -> Paired:
        return Paired(
            pred=pred,
            gold=gold,
            groups=[it.resampling_group for it in labelled],
            candidates=[_candidates(dim, it) for it in labelled],
        )

    raters = [
        rater_stats(
            dim,
            model,
            paired([it.judges.get(model, {}).get(dim.id) for it in labelled]),
            expert_columns,
            resamples,
        )
        for model in judges
    ]
    judge_columns = [[it.judges.get(m, {}).get(dim.id) for it in labelled] for m in judges]
    panel_pred = [it.aggregate.get(dim.id) for it in labelled]
    raters.append(rater_stats(dim, PANEL, paired(panel_pred), expert_columns, resamples))
    return _Evaluation(experts, labelled, gold, raters, judge_columns, expert_columns)


def _measured(
    dim: Dimension,
    items: Sequence[ScoredItem],
    judges: list[str],
    resamples: int,
    metric: str | None,
) -> DimensionReport:
    """The report of a dimension with expert labels, before its flag."""
    found = _evaluate(dim, items, judges, resamples)
    gold, labelled = found.gold, found.labelled
    report = DimensionReport(
        scale=dim.scale.type,
        metric=metric,
        categories="scale" if dim.scale.type == "ordinal" else None,
        items_with_labels=len(gold),
        experts=found.experts,
        groups=len({it.group for it in labelled if it.group is not None}) or None,
        units=resampling_units([it.resampling_group for it in labelled]),
        prevalence=prevalence(dim, gold),
        majority_baseline=majority_baseline(dim, gold),
        expert_expert=_expert_baseline(dim, found.experts, items),
        consensus_bias_vs_experts={
            e: mean_bias(dim, gold, col) for e, col in found.expert_columns.items()
        },
        raters=found.raters,
        # how far the panel's judges agree with each other (not with the experts)
        inter_judge=InterJudge(
            alpha=alpha(dim, found.judge_columns) if len(judges) >= 2 else None,
            fleiss_kappa=fleiss(dim, found.judge_columns),
            n_judges=len(judges),
        ),
        flag=None,
    )
    if dim.scale.type == "binary":
        report.balanced = _balanced(dim, labelled, gold, judges, resamples)
    return report


def _balanced(
    dim: Dimension,
    items: Sequence[ScoredItem],
    gold: list[Any],
    judges: list[str],
    resamples: int,
) -> BalancedResamples:
    """Per rater: accuracy and F1 on yes/no-balanced resamples (answered items only)."""
    per_rater: dict[str, BalancedRates | None] = {}
    for name in [*judges, PANEL]:
        preds = [
            it.aggregate.get(dim.id) if name == PANEL else it.judges.get(name, {}).get(dim.id)
            for it in items
        ]
        idx = [i for i, p in enumerate(preds) if p is not None]
        groups: list[Hashable | None] = [items[i].resampling_group for i in idx]
        per_rater[name] = balanced_binary(
            [bool(preds[i]) for i in idx], [bool(gold[i]) for i in idx], groups, resamples
        )
    yes_share = sum(1 for g in gold if g is True) / len(gold) if gold else None
    return BalancedResamples(
        natural_prevalence_yes=finite(yes_share),
        always_yes_natural=YesRates(accuracy=finite(yes_share), f1=always_f1(gold, True)),
        raters=per_rater,
    )


def dimension_report(
    rubric: Rubric,
    dim: Dimension,
    items: Sequence[ScoredItem],
    judges: list[str],
    run_id: str,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    policy: ReliabilityPolicy | None = None,
    simulated: bool = False,
    comparison: AggregationComparison | None = None,
) -> DimensionReport:
    """One dimension's report. ``comparison``: its weighted-vs-equal comparison already
    decided across the rubric (:func:`aggregation_comparisons`); computed here, decided
    alone, when not given."""
    policy = policy or rubric.reliability
    metric = metric_name(dim)
    items = with_units(items)
    end_to_end = [it for it in items if not it.given]
    has_labels = any(dim.id in labels for it in end_to_end for labels in it.labels.values())
    if metric is None or not has_labels:
        return DimensionReport(
            scale=dim.scale.type,
            metric=metric,
            categories="scale" if dim.scale.type == "ordinal" else None,
            items_with_labels=0 if metric is not None else _labelled(dim, end_to_end),
            experts=sorted({e for it in items for e, lab in it.labels.items() if dim.id in lab}),
            expert_expert=None,
            raters=[],
            flag=None,
        )
    report = _measured(dim, end_to_end, judges, resamples, metric)
    conditioned = [it for it in items if it.given and dim.id not in it.given]
    if any(dim.id in labels for it in conditioned for labels in it.labels.values()):
        given = _evaluate(dim, conditioned, judges, resamples)
        report.given = GivenEvaluation(
            told=sorted({k for it in conditioned for k in it.given}),
            items_with_labels=len(given.gold),
            raters=given.raters,
        )
    panel = report.rater(PANEL)
    assert panel is not None
    baseline = report.expert_expert
    _, labelled, gold = labelled_with_consensus(dim, end_to_end)
    panel_pred = [it.aggregate.get(dim.id) for it in labelled]
    if comparison is None:
        comparison = compare_aggregation(dim, labelled, gold, judges, policy.tolerance)
        apply_holm({dim.id: comparison})
    gate = trust_gate(
        dim,
        panel_pred,
        gold,
        {e: expert_column(labelled, e, dim.id) for e in report.experts},
        [it.resampling_group for it in labelled],
        policy,
        resamples,
    )
    report.like_for_like = gate.like_for_like
    expert_iv = gate.expert_interval()
    if baseline is not None:
        _distinct_baseline(baseline, gate, expert_iv)
    calibration = Calibration(
        run_id=run_id,
        judge_kappa=panel.agreement,
        expert_kappa=finite(expert_iv.estimate) if expert_iv else None,
        n=panel.n,
        ci95=panel.ci95,
        ci95_low_mc=None if metric == CHANCE_R1 else panel.kappa_low_mc,
        coverage=panel.coverage,
        expert_n=baseline.n_items or 0 if baseline else 0,
        expert_units=baseline.n_units if baseline else None,
        n_experts=len(gate.distinct),
        distinct_experts=len(gate.distinct),
        expert_ci95=(finite(expert_iv.low), finite(expert_iv.high)) if expert_iv else None,
        expert_reasons=(
            tuple(gate.baseline.reasons(policy.floor, policy.line)) if gate.baseline else None
        ),
        like_for_like=gate.like_for_like.estimate if gate.like_for_like else None,
        trust_lower=gate.like_for_like.lower if gate.like_for_like else None,
        trust_reasons=tuple(gate.like_for_like.reasons) if gate.like_for_like else None,
        simulated=simulated,
        metric=metric,
        judge_agreement={r.rater: r.agreement for r in report.raters if r.rater != PANEL},
        weighting_helps=comparison.weighting_helps,
        weighted=weighted_evidence(comparison),
        units=resampling_units(
            [
                it.resampling_group
                for it, p in zip(labelled, panel_pred, strict=True)
                if p is not None
            ]
        ),
    )
    if label_reliability_applies(dim):
        groups = [it.resampling_group for it in labelled]
        labels = label_reliability(dim, panel_pred, gold, groups, policy, resamples)
        calibration = calibration.model_copy(update={"labels": labels})
    auto = choose_aggregation("auto", calibration, judges, policy)
    comparison.auto = AutoChoice(method=auto.method, reason=auto.reason)
    report.aggregation = comparison
    flag = reliability_flag(
        policy=policy,
        prior=dim.prior,
        calibration=calibration,
        valid_judges=len(judges),
        quorum=1,
        disagreement=False,
        # the report's flag is what the run says about real judges' scores: a simulated
        # run never vouches for those (simulated_calibration); flags of simulated scores
        # later may still use it (judge.domain.flags)
        scores_simulated=False,
    )
    report.expert_baseline_used = ExpertBaselineUsed(
        source=flag.expert_source,
        why=calibration.expert_baseline_note(policy)
        + (
            ""
            if calibration.expert_baseline_counts(policy)
            else ("; the rubric's published prior stands" if flag.expert_source else "")
        ),
    )
    report.flag = flag
    report.flag_inputs = calibration.evidence()
    return report


def weighted_evidence(comparison: AggregationComparison) -> WeightedEvidence | None:
    """The weighted aggregate's own evidence for its flag: its cross-validated agreement
    with the refit-inclusive interval, and its like-for-like agreement with that one's lower
    bound (None without the refit test: too few units, a single judge; a ranked scale has no
    like-for-like bound)."""
    if comparison.p_value is None or comparison.weighted is None:
        return None
    single = comparison.weighted_like_for_like
    return WeightedEvidence(
        agreement=comparison.weighted.agreement,
        ci95=comparison.weighted.ci95,
        n=comparison.n,
        units=comparison.units,
        resamples=comparison.resamples,
        like_for_like=single.agreement if single else None,
        like_for_like_lower=single.lower if single else None,
    )


def aggregation_comparisons(
    rubric: Rubric, items: Sequence[ScoredItem], judges: list[str], policy: ReliabilityPolicy
) -> dict[str, AggregationComparison]:
    """Every measured dimension's weighted-vs-equal comparison, decided by Holm across
    them (``items`` with their units set)."""
    end_to_end = [it for it in items if not it.given]
    out: dict[str, AggregationComparison] = {}
    for dim in rubric.dimensions:
        if metric_name(dim) is None:
            continue
        _, labelled, gold = labelled_with_consensus(dim, end_to_end)
        if labelled:
            out[dim.id] = compare_aggregation(dim, labelled, gold, judges, policy.tolerance)
    apply_holm(out)
    return out


def _distinct_baseline(
    baseline: ExpertBaseline, gate: TrustGate, interval: KappaInterval | None
) -> None:
    """The report's expert baseline gains what the gate reads: the distinct experts, why a
    column did not count, and the mean over distinct pairs with its interval."""
    baseline.distinct_experts = gate.distinct
    baseline.not_distinct = gate.not_distinct
    if interval is not None:
        baseline.mean = finite(interval.estimate)
        baseline.ci95 = (finite(interval.low), finite(interval.high))
        baseline.lower = finite(interval.lower)


def _labelled(dim: Dimension, items: Sequence[ScoredItem]) -> int:
    return sum(1 for it in items if any(dim.id in labels for labels in it.labels.values()))


def calibration_report(
    rubric: Rubric,
    items: Sequence[ScoredItem],
    judges: list[str],
    run_id: str,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    policy: ReliabilityPolicy | None = None,
    simulated: bool = False,
) -> CalibrationReport:
    policy = policy or rubric.reliability
    items = with_units(items)
    comparisons = aggregation_comparisons(rubric, items, judges, policy)
    dims = {
        d.id: dimension_report(
            rubric,
            d,
            items,
            judges,
            run_id,
            resamples=resamples,
            policy=policy,
            simulated=simulated,
            comparison=comparisons.get(d.id),
        )
        for d in rubric.dimensions
    }
    return CalibrationReport(
        run_id=run_id,
        rubric=RubricRef(id=rubric.id, version=rubric.version, hash=rubric.content_hash),
        judges=judges,
        experts=sorted({e for it in items for e in it.labels}),
        n_items=len(items),
        simulated=simulated,
        threshold=policy.line,
        floor=policy.floor,
        min_items=policy.min_items,
        min_coverage=policy.min_coverage,
        resamples=resamples,
        groups=len({it.group for it in items if it.group is not None}) or None,
        units=resampling_units([it.resampling_group for it in items]),
        repeated_items=repeated_items(items),
        legend=LEGEND,
        dimensions=dims,
        **_trajectories(rubric, items, resamples),
    )


def _trajectories(
    rubric: Rubric, items: Sequence[ScoredItem], resamples: int
) -> dict[str, dict[str, TrajectoryCalibration]]:
    """The trajectory figures of each nominal dimension, when the items are checkpoints of
    sessions (absent otherwise: the report keeps its keys)."""
    placed = [it for it in items if it.position is not None and not it.given]
    out = {}
    for dim in rubric.dimensions:
        if dim.scale.type != "nominal":
            continue
        _, labelled, gold = labelled_with_consensus(dim, placed)
        points = [
            TrajectoryPoint(
                session=str(it.group),
                row=it.position[0],
                length=it.position[1],
                gold=None if g is None else str(g),
                pred=None if it.aggregate.get(dim.id) is None else str(it.aggregate[dim.id]),
            )
            for it, g in zip(labelled, gold, strict=True)
            if it.position is not None
        ]
        if points:
            out[dim.id] = trajectory_calibration(dim.id, points, resamples=resamples)
    return {"trajectories": out} if out else {}


__all__ = [
    "CONSENSUS",
    "PANEL",
    "ScoredItem",
    "agreement",
    "calibration_report",
    "consensus",
    "dimension_report",
    "metric_name",
    "participant_labels",
]
