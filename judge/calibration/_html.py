"""A self-contained HTML page for a calibration report: a heatmap of agreement per dimension
and rater (experts' own baseline, each expert against the others, each judge, the panel) with
the high-agreement line marked, the numbers in a table, and per dimension the baselines and a
confusion matrix per rater. Plain HTML and inline SVG: no scripts, no external assets."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from empathy_judge_client.label_reliability import LabelReliability
from empathy_judge_client.report_model import Interval
from judge.calibration._gate_rules import report_intro, rules_html, trust_test_html
from judge.calibration._guarantees_html import guarantees_html
from judge.domain.calibration_report import (
    AggregationComparison,
    BalancedResamples,
    CalibrationReport,
    DimensionReport,
    GivenEvaluation,
)
from judge.domain.rater_report import ConfusionMatrix, RaterStats

_CELL_W, _CELL_H, _LABEL_W, _HEAD_H = 112, 28, 230, 60


def _colour(kappa: float | None, line: float, floor: float) -> str:
    """Red below the floor, amber up to the line, green above; darker as agreement rises."""
    if kappa is None:
        return "#e5e7eb"
    k = max(-0.2, min(1.0, kappa))
    if k < floor:
        shade = int(120 + 100 * (k + 0.2) / (floor + 0.2))
        return f"rgb(239,{shade // 2 + 40},{shade // 2 + 30})"
    if k < line:
        return "rgb(251,191,36)"
    strength = (k - line) / max(1e-9, 1 - line)
    return (
        f"rgb({int(134 - 100 * strength)},{int(239 - 80 * strength)},{int(172 - 100 * strength)})"
    )


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _columns(report: CalibrationReport) -> list[str]:
    return ["experts (median pair)", "expert vs others", *report.judges, "panel"]


def _cells(dim: DimensionReport, judges: list[str]) -> list[float | None]:
    baseline = dim.expert_expert
    by_rater = {r.rater: r.agreement for r in dim.raters}
    return [
        baseline.median if baseline else None,
        baseline.leave_one_out_median if baseline else None,
        *(by_rater.get(j) for j in judges),
        by_rater.get("panel"),
    ]


def heatmap_svg(report: CalibrationReport) -> str:
    line, floor = report.threshold, report.floor
    columns = _columns(report)
    dims = list(report.calibrated().items())
    width = _LABEL_W + _CELL_W * len(columns) + 20
    height = _HEAD_H + _CELL_H * len(dims) + 70
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12" role="img" aria-label="agreement heatmap">'
    ]
    for c, name in enumerate(columns):
        x = _LABEL_W + c * _CELL_W + _CELL_W / 2
        parts.append(
            f'<text x="{x}" y="{_HEAD_H - 10}" text-anchor="middle">'
            f"{escape(name.split('/')[-1])}</text>"
        )
    for r, (dim_id, dim) in enumerate(dims):
        y = _HEAD_H + r * _CELL_H
        parts.append(
            f'<text x="{_LABEL_W - 8}" y="{y + 18}" text-anchor="end">{escape(dim_id)}</text>'
        )
        for c, kappa in enumerate(_cells(dim, report.judges)):
            x = _LABEL_W + c * _CELL_W
            colour = _colour(kappa, line, floor)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{_CELL_W - 2}" height="{_CELL_H - 2}" '
                f'fill="{colour}">'
                f"<title>{escape(dim_id)} / {escape(columns[c])}: {_fmt(kappa, 4)}</title></rect>"
            )
            parts.append(
                f'<text x="{x + _CELL_W / 2}" y="{y + 18}" text-anchor="middle">'
                f"{_fmt(kappa)}</text>"
            )
    # legend: the colour scale with the floor and the high-agreement line marked
    ly = _HEAD_H + len(dims) * _CELL_H + 20
    scale_w = 400
    for i in range(100):
        k = -0.2 + 1.2 * i / 99
        parts.append(
            f'<rect x="{_LABEL_W + i * scale_w / 100}" y="{ly}" '
            f'width="{scale_w / 100 + 0.5}" height="12" '
            f'fill="{_colour(k, line, floor)}"/>'
        )
    for value, name in ((floor, "floor"), (line, "line")):
        x = _LABEL_W + (value + 0.2) / 1.2 * scale_w
        parts.append(
            f'<line x1="{x}" y1="{ly - 4}" x2="{x}" y2="{ly + 16}" stroke="#111" stroke-width="2"/>'
        )
        parts.append(f'<text x="{x}" y="{ly + 30}" text-anchor="middle">{name} {value:.2f}</text>')
    parts.append(f'<text x="{_LABEL_W - 8}" y="{ly + 10}" text-anchor="end">κ −0.2 … 1.0</text>')
    parts.append("</svg>")
    return "".join(parts)


def _rates(r: RaterStats) -> str:
    parts = []
    for rate in r.rates():
        low, high = rate.ci95 or (None, None)
        parts.append(
            f"{rate.name} {_fmt(rate.value, 3)} [{_fmt(low, 3)}, {_fmt(high, 3)}]"
            + (
                f" / {_fmt(rate.abstain_as_miss, 3)} with abstentions as misses"
                if rate.counted_as_miss
                else ""
            )
        )
    if r.present("precision"):
        parts.append(f"precision {_fmt(r.precision, 3)}, recall {_fmt(r.recall, 3)}")
    return "; ".join(parts)


def _bias(r: RaterStats) -> str:
    return ", ".join(
        f"{e} {value:+.3f}" for e, value in (r.bias_vs_experts or {}).items() if value is not None
    )


def _table(report: CalibrationReport) -> str:
    rows = []
    for dim_id, dim in report.dimensions.items():
        flag = dim.flag
        for r in dim.raters:
            low, high = r.ci95
            is_panel = r.rater == "panel"
            reasons = ", ".join(flag.reasons) if is_panel and flag else ""
            rows.append(
                "<tr>"
                f"<td>{escape(dim_id)}</td><td>{escape(str(dim.metric))}</td>"
                f"<td>{_fmt(flag.expert_kappa if flag else None, 3)}</td>"
                f"<td>{escape(r.rater)}</td>"
                f"<td>{_fmt(r.agreement, 3)}</td>"
                f"<td>[{_fmt(low, 3)}, {_fmt(high, 3)}]</td>"
                f"<td>{r.n}</td><td>{r.abstained}</td><td>{_fmt(r.coverage, 3)}</td>"
                f"<td>{_fmt(r.ac1, 3)}</td><td>{_fmt(r.alpha, 3)}</td>"
                f"<td>{escape(_rates(r))}</td><td>{escape(_bias(r))}</td>"
                f"<td>{escape(flag.level) if is_panel and flag else ''}</td>"
                f"<td>{escape(reasons)}</td>"
                "</tr>"
            )
    head = (
        "<tr><th>dimension</th><th>metric</th><th>experts κ</th><th>rater</th>"
        "<th>agreement vs experts</th><th>95% CI</th><th>n</th><th>abstained</th>"
        "<th>coverage</th><th>AC1</th><th>α</th><th>rates (answered, 95% CI / abstentions as "
        "misses)</th><th>bias vs each expert</th><th>flag</th><th>reasons</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def _confusion(rater: str, matrix: ConfusionMatrix) -> str:
    labels = [escape(str(v)) for v in matrix.labels]
    head = "".join(f"<th>{v}</th>" for v in labels)
    body = "".join(
        f"<tr><th>{labels[i]}</th>"
        + "".join(f"<td>{c}</td>" for c in row)
        + f"<td>{matrix.abstained[i]}</td></tr>"
        for i, row in enumerate(matrix.matrix)
    )
    return (
        f"<table class='cm'><caption>{escape(rater)}: experts' consensus (rows) × rater "
        f"(columns)</caption><tr><th></th>{head}<th>abstained</th></tr>{body}</table>"
    )


def _details(dim_id: str, dim: DimensionReport) -> str:
    parts = [f"<h3>{escape(dim_id)}</h3>", trust_test_html(dim)]
    prevalence, baseline = dim.prevalence, dim.majority_baseline
    if prevalence and baseline:
        extra = ", ".join(
            f"{name} {_fmt(value, 3)}"
            for name, value in (
                ("f1", baseline.f1),
                ("recall_at_1", baseline.recall_at_1),
                ("mrr", baseline.mrr),
            )
            if baseline.present(name)
        )
        parts.append(
            f"<p>Most frequent consensus label {escape(str(prevalence.label))}: "
            f"{_fmt(prevalence.share, 3)} of {prevalence.n} items. Always answering it "
            f"scores accuracy {_fmt(baseline.accuracy, 3)}"
            f"{', ' + escape(extra) if extra else ''}.</p>"
        )
    used = dim.expert_baseline_used
    if used:
        parts.append(
            f"<p>Expert agreement used by the flag: {escape(str(used.source))} "
            f"({escape(str(used.why))}).</p>"
        )
    experts = dim.expert_expert
    if experts and experts.leave_one_out:
        loo = ", ".join(
            f"{escape(x.expert)} {_fmt(x.kappa, 3)} (n={x.n})" for x in experts.leave_one_out
        )
        parts.append(f"<p>Each expert against the consensus of the others: {loo}.</p>")
    bias = dim.consensus_bias_vs_experts or {}
    if any(v is not None for v in bias.values()):
        text = ", ".join(f"{escape(e)} {v:+.3f}" for e, v in bias.items() if v is not None)
        parts.append(f"<p>Bias of the consensus against each expert: {text}.</p>")
    if dim.aggregation is not None and dim.aggregation.p_value is not None:
        parts.append(_aggregation(dim.aggregation))
    if dim.balanced:
        parts.append(_balanced(dim.balanced))
    if dim.given:
        parts.append(_given(dim.given))
    parts += [_confusion(r.rater, r.confusion) for r in dim.raters if r.confusion]
    evidence = dim.flag_inputs
    if evidence is not None and evidence.labels:
        parts.append(_label_table(evidence.labels))
    return "".join(parts)


def _aggregation(comparison: AggregationComparison) -> str:
    """Weighted vs equal: the difference, its interval, p and Holm's decision."""
    diff, holm = comparison.difference, comparison.holm
    interval = diff.ci95 if diff else (None, None)
    decision = (
        f"Holm over {holm.dimensions} dimensions: threshold {_fmt(holm.threshold, 4)}, "
        + ("rejected (weighting helps)" if holm.rejected else "not rejected")
        + ("" if holm.reached else " (not reached)")
        if holm
        else ""
    )
    single = comparison.weighted_like_for_like
    like_for_like = (
        f" The weighted aggregate against single experts (what a weighted score's flag tests "
        f"against the line): {_fmt(single.agreement, 3)}, one-sided "
        f"{single.confidence:.0%} lower bound {_fmt(single.lower, 3)}."
        if single
        else ""
    )
    return (
        f"<p>Weighted - equal aggregate (held out, weights refit in every resample, ties "
        f"split): {_fmt(diff.estimate if diff else None, 3)} [{_fmt(interval[0], 3)}, "
        f"{_fmt(interval[1], 3)}], one-sided p = {_fmt(comparison.p_value, 4)}; "
        f"{escape(decision)}.{like_for_like}</p>"
    )


def _label_table(labels: Sequence[LabelReliability]) -> str:
    """Per-label reliability of the panel (issue 31), under its confusion matrix."""

    def rate(value: float | None, interval: Interval | None) -> str:
        low, high = interval or (None, None)
        return f"{_fmt(value, 3)} [{_fmt(low, 3)}, {_fmt(high, 3)}]"

    rows = "".join(
        f"<tr><th>{escape(x.label)}</th><td>{x.gold_n}</td><td>{x.pred_n}</td>"
        f"<td>{x.units}</td><td>{rate(x.recall, x.recall_ci95)}</td>"
        f"<td>{rate(x.precision, x.precision_ci95)}</td><td>{escape(x.level)}</td>"
        f"<td>{escape(', '.join(x.reasons))}</td></tr>"
        for x in labels
    )
    return (
        "<table class='labels'><caption>panel: each label's recall and precision against "
        "the experts (95% CI over sessions); a prediction of a caution or untrusted label "
        "is flagged label_unreliable</caption><tr><th>label</th><th>experts gave</th>"
        "<th>panel predicted</th><th>units</th><th>recall</th><th>precision</th>"
        f"<th>level</th><th>reasons</th></tr>{rows}</table>"
    )


def _balanced(balanced: BalancedResamples) -> str:
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{_fmt(b.accuracy, 3)}</td>"
        f"<td>{_fmt(b.f1, 3)} [{_fmt(b.f1_ci95[0], 3)}, {_fmt(b.f1_ci95[1], 3)}]</td>"
        f"<td>{_fmt(b.always_yes.accuracy, 3)}</td>"
        f"<td>{_fmt(b.always_yes.f1, 3)}</td>"
        f"<td>{b.n}</td></tr>"
        for name, b in balanced.raters.items()
        if b
    )
    natural = balanced.always_yes_natural
    always_yes = (  # runs stored before a108cac lack it
        f"(always-yes there: accuracy {_fmt(natural.accuracy, 3)}, F1 {_fmt(natural.f1, 3)}). "
        if natural
        else ""
    )
    return (
        f"<p>Natural prevalence of yes: {_fmt(balanced.natural_prevalence_yes, 3)} "
        f"{always_yes}"
        "On yes/no-balanced resamples (per group, as RESCUE-BENCH):</p>"
        "<table><tr><th>rater</th><th>accuracy</th><th>F1 (95% CI)</th>"
        f"<th>always-yes accuracy</th><th>always-yes F1</th><th>n</th></tr>{rows}</table>"
    )


def _given(given: GivenEvaluation) -> str:
    panel = next(r for r in given.raters if r.rater == "panel")
    return (
        f"<p>Given {escape(', '.join(given.told))} (the benchmark's setting; the flag "
        f"uses the end-to-end figures above): panel n={panel.n}, "
        f"{escape(_rates(panel))}.</p>"
    )


def render_report_html(report: CalibrationReport) -> str:
    rubric = report.rubric
    title = f"Calibration {report.run_id}: {rubric.id} v{rubric.version}"
    simulated = (
        "<p class='sim'>SIMULATED JUDGES: the judges' replies came from the LLM simulator; "
        "these numbers describe the simulator, not a real model, and this run never vouches "
        "for real judges' scores (simulated_calibration).</p>"
        if report.simulated
        else ""
    )
    details = "".join(_details(dim_id, dim) for dim_id, dim in report.calibrated().items())
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>"
        "body{font-family:sans-serif;margin:24px;color:#111}"
        "table{border-collapse:collapse;font-size:13px;margin:6px 0}"
        "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
        "table.cm{display:inline-table;margin-right:12px;vertical-align:top}"
        ".sim{background:#fee2e2;border:1px solid #b91c1c;padding:6px;font-weight:bold}"
        "</style></head><body>"
        f"<h1>{escape(title)}</h1>{simulated}"
        f"<p>Panel {escape(report.panel.name if report.panel else '')}: "
        f"{escape(', '.join(report.judges))}. {report.n_items} items, experts "
        f"{escape(', '.join(report.experts))}. Agreement with the experts' consensus "
        f"(median for ordinal scales, quadratic weights over every level of the scale).</p>"
        f"{report_intro(report)}"
        f"{heatmap_svg(report)}<h2>Numbers</h2>{_table(report)}<h2>Per dimension</h2>"
        f"{details}{guarantees_html(report)}{rules_html()}</body></html>"
    )
