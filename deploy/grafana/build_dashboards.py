"""Generate the Grafana dashboards of empathy-judge with Grafana's own typed builders
(``grafana-foundation-sdk``).

    uv run --dev python deploy/grafana/build_dashboards.py          # writes the dashboards
    uv run --dev python deploy/grafana/build_dashboards.py --check  # exit 1 if the JSON is stale

Thresholds and lines come from :mod:`judge.domain.watch` (the kappa floor and line are the
reliability policy's defaults), never from copies here. Every PromQL expression is run against
a real Prometheus by ``tests/integration/deploy/test_prometheus_config.py`` (Grafana's
``$__rate_interval``, ``$__range`` and template variables are substituted there), and may use
only metrics that ``judge/metrics.py`` declares.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from grafana_foundation_sdk.builders import bargauge, common, dashboard, heatmap, prometheus, stat
from grafana_foundation_sdk.builders import timeseries as ts
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.variants import Dataquery
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models import heatmap as hm
from grafana_foundation_sdk.models import prometheus as pm

from judge.domain.watch import (
    ABSTENTION_RATE_ALERT,
    CANARY_STALE_INTERVALS,
    CANARY_STALE_S,
    DRIFT_THRESHOLD,
    HTTP_5XX_RATIO_ALERT,
    KAPPA_FLOOR,
    KAPPA_LINE,
    LLM_FAILURE_RATE_ALERT,
)

OUT = Path(__file__).resolve().parent / "dashboards"
DATASOURCE = dm.DataSourceRef(type_val="prometheus", uid="prometheus")
W = "$__rate_interval"
Steps = Sequence[tuple[str, float | None]]
KAPPA_STEPS: Steps = (("red", None), ("orange", KAPPA_FLOOR), ("green", KAPPA_LINE))
DRIFT_STEPS: Steps = (("red", None), ("green", -DRIFT_THRESHOLD), ("red", DRIFT_THRESHOLD))


@dataclass(frozen=True)
class Q:
    """One PromQL query of a panel."""

    expr: str
    legend: str = ""
    instant: bool = False
    heatmap: bool = False


def _targets(queries: Sequence[Q]) -> list[Builder[Dataquery]]:
    out: list[Builder[Dataquery]] = []
    for i, q in enumerate(queries):
        target = (
            prometheus.Dataquery()
            .ref_id(chr(ord("A") + i))
            .datasource(DATASOURCE)
            .expr(q.expr)
            .legend_format(q.legend or "__auto")
        )
        target = target.instant() if q.instant else target.range()
        if q.heatmap:
            target = target.format(pm.PromQueryFormat.HEATMAP)
        out.append(target)
    return out


def _thresholds(steps: Steps) -> dashboard.ThresholdsConfig:
    return (
        dashboard.ThresholdsConfig()
        .mode(dm.ThresholdsMode.ABSOLUTE)
        .steps([dm.Threshold(value=value, color=color) for color, value in steps])
    )


#: the SDK's panel builders share these methods but no base class: a constrained type variable
P = TypeVar("P", ts.Panel, stat.Panel, bargauge.Panel, heatmap.Panel)


@dataclass(frozen=True)
class Look:
    """Size, unit, axis range and threshold steps of a panel."""

    unit: str = "short"
    width: int = 12
    height: int = 8
    min: float | None = None
    max: float | None = None
    steps: Steps = ()


def _common(panel: P, title: str, description: str, queries: Sequence[Q], look: Look) -> P:
    panel = (
        panel.title(title)
        .description(description)
        .datasource(DATASOURCE)
        .targets(_targets(queries))
        .unit(look.unit)
        .span(look.width)
        .height(look.height)
        .thresholds(_thresholds(look.steps or (("green", None),)))
    )
    if look.min is not None:
        panel = panel.min(look.min)
    if look.max is not None:
        panel = panel.max(look.max)
    return panel


def timeseries(
    title: str, description: str, *queries: Q, stack: bool = False, **look: Any
) -> ts.Panel:
    shape = Look(**look)
    legend = (
        common.VizLegendOptions()
        .show_legend(True)
        .display_mode(cm.LegendDisplayMode.LIST)
        .placement(cm.LegendPlacement.BOTTOM)
    )
    thresholds_style = (
        cm.GraphTresholdsStyleMode.DASHED if shape.steps else cm.GraphTresholdsStyleMode.OFF
    )
    return (
        _common(ts.Panel(), title, description, queries, shape)
        .draw_style(cm.GraphDrawStyle.LINE)
        .line_width(1)
        .fill_opacity(20 if stack else 0)
        .show_points(cm.VisibilityMode.NEVER)
        .span_nulls(True)
        .stacking(
            common.StackingConfig()
            .mode(cm.StackingMode.NORMAL if stack else cm.StackingMode.NONE)
            .group("A")
        )
        .thresholds_style(common.GraphThresholdsStyleConfig().mode(thresholds_style))
        .legend(legend)
        .tooltip(
            common.VizTooltipOptions()
            .mode(cm.TooltipDisplayMode.MULTI)
            .sort(cm.SortOrder.DESCENDING)
        )
    )


def stat_panel(title: str, description: str, *queries: Q, **look: Any) -> stat.Panel:
    return (
        _common(stat.Panel(), title, description, queries, Look(**look))
        .color_scheme(dashboard.FieldColor().mode(dm.FieldColorModeId.THRESHOLDS))
        .reduce_options(common.ReduceDataOptions().calcs(["lastNotNull"]))
        .text_mode(cm.BigValueTextMode.VALUE_AND_NAME)
    )


def bargauge_panel(
    title: str, description: str, *queries: Q, mode: cm.BarGaugeDisplayMode, **look: Any
) -> bargauge.Panel:
    return (
        _common(bargauge.Panel(), title, description, queries, Look(**look))
        .color_scheme(dashboard.FieldColor().mode(dm.FieldColorModeId.THRESHOLDS))
        .display_mode(mode)
        .orientation(cm.VizOrientation.HORIZONTAL)
    )


def heatmap_panel(title: str, description: str, query: Q, **look: Any) -> heatmap.Panel:
    return (
        _common(heatmap.Panel(), title, description, [query], Look(**look))
        .calculate(False)
        .y_axis(heatmap.YAxisConfig().unit("short").decimals(1))
        .color(
            heatmap.HeatmapColorOptions()
            .mode(hm.HeatmapColorMode.SCHEME)
            .scheme("Oranges")
            .steps(64)
        )
        .cell_gap(1)
    )


def build_dashboard(
    uid: str,
    title: str,
    description: str,
    items: Sequence[Builder[Any] | str],
    variables: Sequence[dashboard.QueryVariable] = (),
) -> dm.Dashboard:
    board = (
        dashboard.Dashboard(title)
        .uid(uid)
        .description(description)
        .tags(["empathy-judge"])
        .timezone("browser")
        .editable()
        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .refresh("30s")
        .time("now-6h", "now")
        .variables(list(variables))
    )
    for pid, item in enumerate(items, start=1):
        if isinstance(item, str):
            board = board.with_row(dashboard.Row(item).id(pid))
        else:
            board = board.with_panel(item.id(pid))  # type: ignore[attr-defined]
    return board.build()


def variable(name: str, label: str, metric: str, depends: str = "") -> dashboard.QueryVariable:
    query = f"label_values({metric}{depends}, {name})"
    return (
        dashboard.QueryVariable(name)
        .label(label)
        .datasource(DATASOURCE)
        .query({"query": query, "refId": name, "qryType": 1})  # Prometheus label values
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .include_all(True)
        .multi(True)
        .all_value(".*")
        .current(dm.VariableOption(selected=True, text=["All"], value=["$__all"]))
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
    )


def _ratio(num: str, den: str, by: str) -> str:
    return f"sum by ({by}) (rate({num}[{W}])) / sum by ({by}) (rate({den}[{W}]))"


def _quantile(q: float, metric: str, by: str) -> str:
    return f"histogram_quantile({q}, sum by ({by}) (rate({metric}_bucket[{W}])))"


def service_health() -> dm.Dashboard:
    http_rate = f"rate(judge_http_requests_total[{W}])"
    items: list[Builder[Any] | str] = [
        "HTTP API",
        timeseries(
            "Request rate by route and status",
            "Requests per second, by route template and HTTP status code.",
            Q(f"sum by (route, status) ({http_rate})", "{{route}} {{status}}"),
            unit="reqps",
            width=8,
        ),
        timeseries(
            "Latency p50 / p95",
            "Request duration quantiles over all routes, and p95 per route.",
            Q(_quantile(0.5, "judge_http_request_duration_seconds", "le"), "p50"),
            Q(_quantile(0.95, "judge_http_request_duration_seconds", "le"), "p95"),
            Q(_quantile(0.95, "judge_http_request_duration_seconds", "le, route"), "p95 {{route}}"),
            unit="s",
            width=8,
        ),
        timeseries(
            "5xx error ratio",
            f"Share of requests answered with a server error (alert above "
            f"{HTTP_5XX_RATIO_ALERT:.0%}).",
            Q(
                f'(sum(rate(judge_http_requests_total{{status=~"5.."}}[{W}])) or vector(0))'
                f" / sum({http_rate})",
                "5xx share",
            ),
            unit="percentunit",
            width=8,
            min=0,
            steps=(("green", None), ("red", HTTP_5XX_RATIO_ALERT)),
        ),
        "Jobs",
        timeseries(
            "Jobs submitted and finished",
            "Jobs per second: submitted per rubric, finished per final status.",
            Q(f"sum by (rubric) (rate(judge_jobs_submitted_total[{W}]))", "submitted {{rubric}}"),
            Q(f"sum by (status) (rate(judge_jobs_finished_total[{W}]))", "finished {{status}}"),
            unit="ops",
            width=8,
        ),
        timeseries(
            "Queue depth and running jobs",
            "Jobs waiting (database count) and jobs running now, summed over worker processes.",
            Q("max(judge_queue_depth)", "queued"),
            Q("sum by (rubric) (judge_jobs_running)", "running {{rubric}}"),
            width=8,
            min=0,
        ),
        timeseries(
            "Job duration p50 / p95",
            "Time from a job's start to its final status, per rubric.",
            Q(_quantile(0.5, "judge_job_duration_seconds", "le, rubric"), "p50 {{rubric}}"),
            Q(_quantile(0.95, "judge_job_duration_seconds", "le, rubric"), "p95 {{rubric}}"),
            unit="s",
            width=8,
        ),
        "LLM judges",
        timeseries(
            "LLM calls by model and outcome",
            "Logical calls per second (retries included in one call); cached replies excluded.",
            Q(
                f"sum by (model, outcome) (rate(judge_llm_calls_total[{W}]))",
                "{{model}} {{outcome}}",
            ),
            unit="reqps",
            width=8,
            stack=True,
        ),
        timeseries(
            "LLM latency p50 / p95 by model",
            "Call duration including retries and backoff.",
            Q(_quantile(0.5, "judge_llm_call_duration_seconds", "le, model"), "p50 {{model}}"),
            Q(_quantile(0.95, "judge_llm_call_duration_seconds", "le, model"), "p95 {{model}}"),
            unit="s",
            width=8,
        ),
        timeseries(
            "LLM failure ratio by model",
            "Share of calls that ended without a reply (timeout, rate limit, provider error...).",
            Q(
                f'(sum by (model) (rate(judge_llm_calls_total{{outcome!="ok"}}[{W}])) '
                f"or sum by (model) (rate(judge_llm_calls_total[{W}])) * 0)"
                f" / sum by (model) (rate(judge_llm_calls_total[{W}]))",
                "{{model}}",
            ),
            unit="percentunit",
            width=8,
            min=0,
            steps=(("green", None), ("red", LLM_FAILURE_RATE_ALERT)),
        ),
        timeseries(
            "Tokens per second",
            "Prompt and completion tokens per second, by model.",
            Q(f"sum by (model, kind) (rate(judge_llm_tokens_total[{W}]))", "{{model}} {{kind}}"),
            width=8,
            stack=True,
        ),
        bargauge_panel(
            "Cost",
            "US dollars per hour by model, and spent over the dashboard's time range.",
            Q(f"sum by (model) (rate(judge_llm_cost_usd_total[{W}])) * 3600", "{{model}} /h"),
            Q(
                "sum by (model) (increase(judge_llm_cost_usd_total[$__range]))",
                "{{model}} in range",
                instant=True,
            ),
            mode=cm.BarGaugeDisplayMode.BASIC,
            unit="currencyUSD",
            width=8,
        ),
        timeseries(
            "Cache hit ratio",
            "Share of judge calls served from the call cache, by model.",
            Q(
                f"sum by (model) (rate(judge_llm_cache_hits_total[{W}])) / "
                f"(sum by (model) (rate(judge_llm_cache_hits_total[{W}])) + "
                f"sum by (model) (rate(judge_llm_calls_total[{W}])))",
                "{{model}}",
            ),
            unit="percentunit",
            width=8,
            min=0,
            max=1,
        ),
        "Abstentions",
        timeseries(
            "Abstentions by reason",
            "Per-dimension judgments without a score, per second, by reason.",
            Q(f"sum by (reason) (rate(judge_abstentions_total[{W}]))", "{{reason}}"),
            unit="ops",
            stack=True,
        ),
        timeseries(
            "Abstention rate by model",
            f"Abstentions / judgments per model (alert above {ABSTENTION_RATE_ALERT:.0%} for "
            "15 minutes).",
            Q(_ratio("judge_abstentions_total", "judge_judgments_total", "model"), "{{model}}"),
            unit="percentunit",
            min=0,
            steps=(("green", None), ("red", ABSTENTION_RATE_ALERT)),
        ),
    ]
    return build_dashboard(
        "judge-service-health",
        "empathy-judge: service health",
        "HTTP API, jobs, queue, LLM calls, tokens, cost, cache and abstentions.",
        items,
    )


def latest(series: str) -> str:
    """A run gauge once per rubric, dimension and model: every process serving /metrics
    exports it from the database (judge/runtime/run_gauges.py), under its own job and instance."""
    return f"max by (rubric, dimension, model) ({series})"


def drift_reliability() -> dm.Dashboard:
    sel = 'rubric=~"$rubric", dimension=~"$dimension", model=~"$model"'
    dims = 'rubric=~"$rubric", dimension=~"$dimension"'
    results = f"judge_dimension_results_total{{{dims}}}"
    untrusted = f'judge_dimension_results_total{{{dims}, level="untrusted"}}'
    items: list[Builder[Any] | str] = [
        "Agreement with experts",
        timeseries(
            "Calibration kappa over time",
            "Latest weighted kappa of each judge (and of the panel's aggregate, model=panel) "
            f"against the experts. Dashed lines: the floor {KAPPA_FLOOR:.2f} and the "
            f"high-agreement line {KAPPA_LINE:.2f} (median expert-expert kappa in Kumar et al.).",
            Q(
                latest(f'judge_calibration_kappa{{{sel}, model!="experts"}}'),
                "{{rubric}}/{{dimension}} {{model}}",
            ),
            width=16,
            height=10,
            min=-0.2,
            max=1,
            steps=KAPPA_STEPS,
        ),
        stat_panel(
            "Time since last canary run",
            f"Alert after {CANARY_STALE_INTERVALS} of the rubric's canary intervals without a "
            f"run; the colours are those of a daily canary ({CANARY_STALE_S // 86_400} days).",
            Q(
                "time() - max by (rubric) "
                '(judge_canary_last_run_timestamp_seconds{rubric=~"$rubric"})',
                "{{rubric}}",
                instant=True,
            ),
            unit="s",
            width=8,
            height=10,
            steps=(("green", None), ("orange", CANARY_STALE_S / 2), ("red", CANARY_STALE_S)),
        ),
        bargauge_panel(
            "Latest kappa per rubric, dimension and model",
            "The most recent calibration's kappa, including the experts' own agreement "
            "(model=experts) when the items had two experts.",
            Q(
                latest(f"judge_calibration_kappa{{{sel}}}"),
                "{{rubric}}/{{dimension}} {{model}}",
                True,
            ),
            mode=cm.BarGaugeDisplayMode.GRADIENT,
            width=24,
            height=10,
            min=0,
            max=1,
            steps=KAPPA_STEPS,
        ),
        "Drift against the canary baseline",
        timeseries(
            "Kappa change vs baseline",
            f"Canary run kappa minus baseline kappa; alert beyond ±{DRIFT_THRESHOLD}.",
            Q(latest(f"judge_drift_kappa_delta{{{sel}}}"), "{{rubric}}/{{dimension}} {{model}}"),
            width=8,
            steps=DRIFT_STEPS,
        ),
        timeseries(
            "Mean-score shift vs baseline",
            "Canary mean rating minus baseline mean, on the 0..1 rescaled scale; positive = "
            f"more lenient. Alert beyond ±{DRIFT_THRESHOLD}.",
            Q(
                latest(f"judge_drift_mean_score_shift{{{sel}}}"),
                "{{rubric}}/{{dimension}} {{model}}",
            ),
            width=8,
            steps=DRIFT_STEPS,
        ),
        timeseries(
            "Abstention-rate change vs baseline",
            f"Canary abstention rate minus the baseline's (fraction); alert above "
            f"+{DRIFT_THRESHOLD}.",
            Q(
                latest(f"judge_drift_abstention_rate_delta{{{sel}}}"),
                "{{rubric}}/{{dimension}} {{model}}",
            ),
            unit="percentunit",
            width=8,
            steps=(("green", None), ("red", DRIFT_THRESHOLD)),
        ),
        "Scores",
        heatmap_panel(
            "Score distribution",
            "Ratings of the selected judges, rescaled to 0..1 (ordinal and binary dimensions), "
            "per time bucket.",
            Q(
                f"sum by (le) (increase(judge_rating_normalised_bucket{{{sel}}}[{W}]))",
                "{{le}}",
                heatmap=True,
            ),
            width=12,
            height=9,
        ),
        timeseries(
            "Mean score by model",
            "Mean rescaled rating per judge model; a lenient judge drifts up.",
            Q(
                f"sum by (model) (rate(judge_rating_normalised_sum{{{sel}}}[{W}])) / "
                f"sum by (model) (rate(judge_rating_normalised_count{{{sel}}}[{W}]))",
                "{{model}}",
            ),
            height=9,
            min=0,
            max=1,
        ),
        "Reliability",
        timeseries(
            "Results by reliability level",
            "Per-dimension results per second by flag level.",
            Q(f"sum by (level) (rate({results}[{W}]))", "{{level}}"),
            unit="ops",
            width=8,
            stack=True,
        ),
        timeseries(
            "Untrusted share by dimension",
            "Share of results flagged untrusted, per rubric and dimension.",
            Q(
                f"(sum by (rubric, dimension) (rate({untrusted}[{W}]))"
                f" or sum by (rubric, dimension) (rate({results}[{W}])) * 0)"
                f" / sum by (rubric, dimension) (rate({results}[{W}]))",
                "{{rubric}}/{{dimension}}",
            ),
            unit="percentunit",
            width=8,
            min=0,
            max=1,
        ),
        timeseries(
            "Flag reasons",
            "Reasons attached to reliability flags, per second.",
            Q(
                f"sum by (reason) (rate(judge_reliability_reasons_total{{{dims}}}[{W}]))",
                "{{reason}}",
            ),
            unit="ops",
            width=8,
            stack=True,
        ),
        timeseries(
            "Panel agreement (median per item)",
            "Median per-item agreement of the panel: 1 - spread/range (ordinal), modal share "
            "(nominal, binary), top-1 agreement (ranked).",
            Q(
                "histogram_quantile(0.5, sum by (le, rubric, dimension) "
                f"(rate(judge_panel_agreement_bucket{{{dims}}}[{W}])))",
                "{{rubric}}/{{dimension}}",
            ),
            min=0,
            max=1,
        ),
        timeseries(
            "Abstention rate by model",
            "Abstentions / judgments for the selected rubrics.",
            Q(
                'sum by (model) (rate(judge_abstentions_total{rubric=~"$rubric", '
                f'model=~"$model"}}[{W}])) / sum by (model) (rate(judge_judgments_total'
                f'{{rubric=~"$rubric", model=~"$model"}}[{W}]))',
                "{{model}}",
            ),
            unit="percentunit",
            min=0,
            steps=(("green", None), ("red", ABSTENTION_RATE_ALERT)),
        ),
    ]
    variables = [
        variable("rubric", "Rubric", "judge_calibration_kappa"),
        variable("dimension", "Dimension", "judge_calibration_kappa", '{rubric=~"$rubric"}'),
        variable("model", "Judge model", "judge_calibration_kappa", '{rubric=~"$rubric"}'),
    ]
    return build_dashboard(
        "judge-drift-reliability",
        "empathy-judge: judge drift & reliability",
        "Agreement with experts over time, canary drift, score distributions, reliability flags.",
        items,
        variables,
    )


DASHBOARDS: dict[str, Callable[[], dm.Dashboard]] = {
    "judge-service-health.json": service_health,
    "judge-drift-reliability.json": drift_reliability,
}


def render() -> dict[str, str]:
    return {
        name: json.dumps(build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"
        for name, build in DASHBOARDS.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="fail when the files are stale")
    args = parser.parse_args(argv)
    out: Path = args.out
    stale = []
    for name, text in render().items():
        target = out / name
        if args.check:
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                stale.append(str(target))
            continue
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {target}\n")
    if stale:
        sys.stderr.write(f"stale, run {Path(__file__).name}: {', '.join(stale)}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
