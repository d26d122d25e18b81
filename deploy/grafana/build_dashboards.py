"""Generate the Grafana dashboards of empathy-judge as JSON (plain dicts, no dependency).

    uv run python deploy/grafana/build_dashboards.py            # writes deploy/grafana/dashboards/
    uv run python deploy/grafana/build_dashboards.py --check    # exit 1 when the JSON is stale

Every PromQL expression here is run against a real Prometheus by
``tests/integration/test_prometheus_config.py`` (Grafana's ``$__rate_interval``, ``$__range``
and template variables are substituted there), and may use only metrics that
``judge/metrics.py`` declares.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "dashboards"
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}
W = "$__rate_interval"
KAPPA_LINE = 0.58
KAPPA_FLOOR = 0.40
DRIFT_THRESHOLD = 0.1

Json = dict[str, Any]


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""
    instant: bool = False
    heatmap: bool = False


@dataclass(frozen=True)
class Panel:
    title: str
    description: str
    queries: tuple[Query, ...]
    kind: str = "timeseries"
    unit: str = "short"
    width: int = 12
    height: int = 8
    min: float | None = None
    max: float | None = None
    steps: tuple[tuple[str, float | None], ...] = ()
    stack: bool = False
    options: Json = field(default_factory=dict)


@dataclass(frozen=True)
class Row:
    title: str


def _thresholds(steps: tuple[tuple[str, float | None], ...]) -> Json:
    steps = steps or (("green", None),)
    return {"mode": "absolute", "steps": [{"color": c, "value": v} for c, v in steps]}


def _panel_json(panel: Panel, pid: int, x: int, y: int) -> Json:
    defaults: Json = {"unit": panel.unit, "thresholds": _thresholds(panel.steps)}
    if panel.min is not None:
        defaults["min"] = panel.min
    if panel.max is not None:
        defaults["max"] = panel.max
    if panel.kind == "timeseries":
        defaults["custom"] = {
            "drawStyle": "line",
            "lineWidth": 1,
            "fillOpacity": 20 if panel.stack else 0,
            "showPoints": "never",
            "spanNulls": True,
            "stacking": {"mode": "normal" if panel.stack else "none", "group": "A"},
            "thresholdsStyle": {"mode": "dashed" if panel.steps else "off"},
        }
    if panel.kind == "stat" or panel.kind == "bargauge":
        defaults["color"] = {"mode": "thresholds"}
    options: Json = {"legend": {"showLegend": True, "displayMode": "list", "placement": "bottom"}}
    if panel.kind == "timeseries":
        options["tooltip"] = {"mode": "multi", "sort": "desc"}
    options |= panel.options
    targets = [
        {
            "refId": chr(ord("A") + i),
            "datasource": DATASOURCE,
            "expr": q.expr,
            "legendFormat": q.legend or "__auto",
            "instant": q.instant,
            "range": not q.instant,
            **({"format": "heatmap"} if q.heatmap else {}),
        }
        for i, q in enumerate(panel.queries)
    ]
    return {
        "id": pid,
        "type": panel.kind,
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"x": x, "y": y, "w": panel.width, "h": panel.height},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": options,
        "targets": targets,
    }


def _layout(items: list[Panel | Row]) -> list[Json]:
    panels: list[Json] = []
    x = y = row_height = 0
    for pid, item in enumerate(items, start=1):
        if isinstance(item, Row):
            y += row_height
            x = row_height = 0
            panels.append(
                {
                    "id": pid,
                    "type": "row",
                    "title": item.title,
                    "collapsed": False,
                    "gridPos": {"x": 0, "y": y, "w": 24, "h": 1},
                    "panels": [],
                }
            )
            y += 1
            continue
        if x + item.width > 24:
            y += row_height
            x = row_height = 0
        panels.append(_panel_json(item, pid, x, y))
        x += item.width
        row_height = max(row_height, item.height)
    return panels


def _variable(name: str, label: str, metric: str, depends: str = "") -> Json:
    query = f"label_values({metric}{depends}, {name})"
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": name, "qryType": 1},
        "definition": query,
        "refresh": 2,
        "includeAll": True,
        "multi": True,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
    }


def dashboard(
    uid: str, title: str, description: str, items: list[Panel | Row], variables: list[Json]
) -> Json:
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": ["empathy-judge"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "annotations": {"list": []},
        "templating": {"list": variables},
        "panels": _layout(items),
    }


def _ratio(num: str, den: str, by: str) -> str:
    return f"sum by ({by}) (rate({num}[{W}])) / sum by ({by}) (rate({den}[{W}]))"


def service_health() -> Json:
    http_rate = f"rate(judge_http_requests_total[{W}])"
    items: list[Panel | Row] = [
        Row("HTTP API"),
        Panel(
            "Request rate by route and status",
            "Requests per second, by route template and HTTP status code.",
            (Query(f"sum by (route, status) ({http_rate})", "{{route}} {{status}}"),),
            unit="reqps",
            width=8,
        ),
        Panel(
            "Latency p50 / p95",
            "Request duration quantiles over all routes, and p95 per route.",
            (
                Query(
                    "histogram_quantile(0.5, sum by (le) "
                    f"(rate(judge_http_request_duration_seconds_bucket[{W}])))",
                    "p50",
                ),
                Query(
                    "histogram_quantile(0.95, sum by (le) "
                    f"(rate(judge_http_request_duration_seconds_bucket[{W}])))",
                    "p95",
                ),
                Query(
                    "histogram_quantile(0.95, sum by (le, route) "
                    f"(rate(judge_http_request_duration_seconds_bucket[{W}])))",
                    "p95 {{route}}",
                ),
            ),
            unit="s",
            width=8,
        ),
        Panel(
            "5xx error ratio",
            "Share of requests answered with a server error (alert above 5%).",
            (
                Query(
                    f'(sum(rate(judge_http_requests_total{{status=~"5.."}}[{W}])) or vector(0))'
                    f" / sum({http_rate})",
                    "5xx share",
                ),
            ),
            unit="percentunit",
            width=8,
            min=0,
            steps=(("green", None), ("red", 0.05)),
        ),
        Row("Jobs"),
        Panel(
            "Jobs submitted and finished",
            "Jobs per second: submitted per rubric, finished per final status.",
            (
                Query(
                    f"sum by (rubric) (rate(judge_jobs_submitted_total[{W}]))",
                    "submitted {{rubric}}",
                ),
                Query(
                    f"sum by (status) (rate(judge_jobs_finished_total[{W}]))", "finished {{status}}"
                ),
            ),
            unit="ops",
            width=8,
        ),
        Panel(
            "Queue depth and running jobs",
            "Jobs waiting (database count) and jobs running now, summed over worker processes.",
            (
                Query("max(judge_queue_depth)", "queued"),
                Query("sum by (rubric) (judge_jobs_running)", "running {{rubric}}"),
            ),
            width=8,
            min=0,
        ),
        Panel(
            "Job duration p50 / p95",
            "Time from a job's start to its final status, per rubric.",
            (
                Query(
                    "histogram_quantile(0.5, sum by (le, rubric) "
                    f"(rate(judge_job_duration_seconds_bucket[{W}])))",
                    "p50 {{rubric}}",
                ),
                Query(
                    "histogram_quantile(0.95, sum by (le, rubric) "
                    f"(rate(judge_job_duration_seconds_bucket[{W}])))",
                    "p95 {{rubric}}",
                ),
            ),
            unit="s",
            width=8,
        ),
        Row("LLM judges"),
        Panel(
            "LLM calls by model and outcome",
            "Logical calls per second (retries included in one call); cached replies excluded.",
            (
                Query(
                    f"sum by (model, outcome) (rate(judge_llm_calls_total[{W}]))",
                    "{{model}} {{outcome}}",
                ),
            ),
            unit="reqps",
            width=8,
            stack=True,
        ),
        Panel(
            "LLM latency p50 / p95 by model",
            "Call duration including retries and backoff.",
            (
                Query(
                    "histogram_quantile(0.5, sum by (le, model) "
                    f"(rate(judge_llm_call_duration_seconds_bucket[{W}])))",
                    "p50 {{model}}",
                ),
                Query(
                    "histogram_quantile(0.95, sum by (le, model) "
                    f"(rate(judge_llm_call_duration_seconds_bucket[{W}])))",
                    "p95 {{model}}",
                ),
            ),
            unit="s",
            width=8,
        ),
        Panel(
            "LLM failure ratio by model",
            "Share of calls that ended without a reply (timeout, rate limit, provider error...).",
            (
                Query(
                    f'(sum by (model) (rate(judge_llm_calls_total{{outcome!="ok"}}[{W}])) '
                    f"or sum by (model) (rate(judge_llm_calls_total[{W}])) * 0)"
                    f" / sum by (model) (rate(judge_llm_calls_total[{W}]))",
                    "{{model}}",
                ),
            ),
            unit="percentunit",
            width=8,
            min=0,
            steps=(("green", None), ("red", 0.2)),
        ),
        Panel(
            "Tokens per second",
            "Prompt and completion tokens per second, by model.",
            (
                Query(
                    f"sum by (model, kind) (rate(judge_llm_tokens_total[{W}]))",
                    "{{model}} {{kind}}",
                ),
            ),
            width=8,
            stack=True,
        ),
        Panel(
            "Cost",
            "US dollars per hour by model, and spent over the dashboard's time range.",
            (
                Query(
                    f"sum by (model) (rate(judge_llm_cost_usd_total[{W}])) * 3600", "{{model}} /h"
                ),
                Query(
                    "sum by (model) (increase(judge_llm_cost_usd_total[$__range]))",
                    "{{model}} in range",
                    instant=True,
                ),
            ),
            kind="bargauge",
            unit="currencyUSD",
            width=8,
            options={"displayMode": "basic", "orientation": "horizontal"},
        ),
        Panel(
            "Cache hit ratio",
            "Share of judge calls served from the call cache, by model.",
            (
                Query(
                    f"sum by (model) (rate(judge_llm_cache_hits_total[{W}])) / "
                    f"(sum by (model) (rate(judge_llm_cache_hits_total[{W}])) + "
                    f"sum by (model) (rate(judge_llm_calls_total[{W}])))",
                    "{{model}}",
                ),
            ),
            unit="percentunit",
            width=8,
            min=0,
            max=1,
        ),
        Row("Abstentions"),
        Panel(
            "Abstentions by reason",
            "Per-dimension judgments without a score, per second, by reason.",
            (
                Query(
                    f"sum by (reason) (rate(judge_abstentions_total[{W}]))",
                    "{{reason}}",
                ),
            ),
            unit="ops",
            width=12,
            stack=True,
        ),
        Panel(
            "Abstention rate by model",
            "Abstentions / judgments per model (alert above 20% for 15 minutes).",
            (
                Query(
                    _ratio("judge_abstentions_total", "judge_judgments_total", "model"),
                    "{{model}}",
                ),
            ),
            unit="percentunit",
            width=12,
            min=0,
            steps=(("green", None), ("red", 0.2)),
        ),
    ]
    return dashboard(
        "judge-service-health",
        "empathy-judge: service health",
        "HTTP API, jobs, queue, LLM calls, tokens, cost, cache and abstentions.",
        items,
        [],
    )


def drift_reliability() -> Json:
    sel = 'rubric=~"$rubric", dimension=~"$dimension", model=~"$model"'
    items: list[Panel | Row] = [
        Row("Agreement with experts"),
        Panel(
            "Calibration kappa over time",
            "Latest weighted kappa of each judge (and of the panel's aggregate, model=panel) "
            f"against the experts. Dashed lines: the floor {KAPPA_FLOOR} and the high-agreement "
            f"line {KAPPA_LINE} (median expert-expert kappa in Kumar et al.).",
            (
                Query(
                    f'judge_calibration_kappa{{{sel}, model!="experts"}}',
                    "{{rubric}}/{{dimension}} {{model}}",
                ),
            ),
            width=16,
            height=10,
            min=-0.2,
            max=1,
            steps=(("red", None), ("orange", KAPPA_FLOOR), ("green", KAPPA_LINE)),
        ),
        Panel(
            "Time since last canary run",
            "Alert after two days without a canary run.",
            (
                Query(
                    "time() - max by (rubric) "
                    '(judge_canary_last_run_timestamp_seconds{rubric=~"$rubric"})',
                    "{{rubric}}",
                    instant=True,
                ),
            ),
            kind="stat",
            unit="s",
            width=8,
            height=10,
            steps=(("green", None), ("orange", 86400), ("red", 2 * 86400)),
            options={"reduceOptions": {"calcs": ["lastNotNull"]}, "textMode": "value_and_name"},
        ),
        Panel(
            "Latest kappa per rubric, dimension and model",
            "The most recent calibration's kappa, including the experts' own agreement "
            "(model=experts) when the items had two experts.",
            (
                Query(
                    f"judge_calibration_kappa{{{sel}}}",
                    "{{rubric}}/{{dimension}} {{model}}",
                    instant=True,
                ),
            ),
            kind="bargauge",
            width=24,
            height=10,
            min=0,
            max=1,
            steps=(("red", None), ("orange", KAPPA_FLOOR), ("green", KAPPA_LINE)),
            options={"displayMode": "gradient", "orientation": "horizontal"},
        ),
        Row("Drift against the canary baseline"),
        Panel(
            "Kappa change vs baseline",
            f"Canary run kappa minus baseline kappa; alert beyond ±{DRIFT_THRESHOLD}.",
            (
                Query(
                    f"judge_drift_kappa_delta{{{sel}}}",
                    "{{rubric}}/{{dimension}} {{model}}",
                ),
            ),
            width=8,
            steps=(("red", None), ("green", -DRIFT_THRESHOLD), ("red", DRIFT_THRESHOLD)),
        ),
        Panel(
            "Mean-score shift vs baseline",
            "Canary mean rating minus baseline mean, on the 0..1 rescaled scale; positive = "
            f"more lenient. Alert beyond ±{DRIFT_THRESHOLD}.",
            (
                Query(
                    f"judge_drift_mean_score_shift{{{sel}}}",
                    "{{rubric}}/{{dimension}} {{model}}",
                ),
            ),
            width=8,
            steps=(("red", None), ("green", -DRIFT_THRESHOLD), ("red", DRIFT_THRESHOLD)),
        ),
        Panel(
            "Abstention-rate change vs baseline",
            "Canary abstention rate minus the baseline's (fraction); alert above +0.1.",
            (
                Query(
                    f"judge_drift_abstention_rate_delta{{{sel}}}",
                    "{{rubric}}/{{dimension}} {{model}}",
                ),
            ),
            unit="percentunit",
            width=8,
            steps=(("green", None), ("red", DRIFT_THRESHOLD)),
        ),
        Row("Scores"),
        Panel(
            "Score distribution",
            "Ratings of the selected judges, rescaled to 0..1 (ordinal and binary dimensions), "
            "per time bucket.",
            (
                Query(
                    f"sum by (le) (increase(judge_rating_normalised_bucket{{{sel}}}[{W}]))",
                    "{{le}}",
                    heatmap=True,
                ),
            ),
            kind="heatmap",
            width=12,
            height=9,
            options={
                "calculate": False,
                "yAxis": {"unit": "short", "decimals": 1},
                "color": {"mode": "scheme", "scheme": "Oranges", "steps": 64},
                "cellGap": 1,
            },
        ),
        Panel(
            "Mean score by model",
            "Mean rescaled rating per judge model; a lenient judge drifts up.",
            (
                Query(
                    f"sum by (model) (rate(judge_rating_normalised_sum{{{sel}}}[{W}])) / "
                    f"sum by (model) (rate(judge_rating_normalised_count{{{sel}}}[{W}]))",
                    "{{model}}",
                ),
            ),
            width=12,
            height=9,
            min=0,
            max=1,
        ),
        Row("Reliability"),
        Panel(
            "Results by reliability level",
            "Per-dimension results per second by flag level.",
            (
                Query(
                    "sum by (level) (rate(judge_dimension_results_total"
                    f'{{rubric=~"$rubric", dimension=~"$dimension"}}[{W}]))',
                    "{{level}}",
                ),
            ),
            unit="ops",
            width=8,
            stack=True,
        ),
        Panel(
            "Untrusted share by dimension",
            "Share of results flagged untrusted, per rubric and dimension.",
            (
                Query(
                    "(sum by (rubric, dimension) (rate(judge_dimension_results_total"
                    f'{{rubric=~"$rubric", dimension=~"$dimension", level="untrusted"}}[{W}]))'
                    " or sum by (rubric, dimension) (rate(judge_dimension_results_total"
                    f'{{rubric=~"$rubric", dimension=~"$dimension"}}[{W}])) * 0)'
                    " / sum by (rubric, dimension) (rate(judge_dimension_results_total"
                    f'{{rubric=~"$rubric", dimension=~"$dimension"}}[{W}]))',
                    "{{rubric}}/{{dimension}}",
                ),
            ),
            unit="percentunit",
            width=8,
            min=0,
            max=1,
        ),
        Panel(
            "Flag reasons",
            "Reasons attached to reliability flags, per second.",
            (
                Query(
                    "sum by (reason) (rate(judge_reliability_reasons_total"
                    f'{{rubric=~"$rubric", dimension=~"$dimension"}}[{W}]))',
                    "{{reason}}",
                ),
            ),
            unit="ops",
            width=8,
            stack=True,
        ),
        Panel(
            "Panel agreement (median per item)",
            "Median per-item agreement of the panel: 1 - spread/range (ordinal), modal share "
            "(nominal, binary), top-1 agreement (ranked).",
            (
                Query(
                    "histogram_quantile(0.5, sum by (le, rubric, dimension) "
                    "(rate(judge_panel_agreement_bucket"
                    f'{{rubric=~"$rubric", dimension=~"$dimension"}}[{W}])))',
                    "{{rubric}}/{{dimension}}",
                ),
            ),
            width=12,
            min=0,
            max=1,
        ),
        Panel(
            "Abstention rate by model",
            "Abstentions / judgments for the selected rubrics.",
            (
                Query(
                    'sum by (model) (rate(judge_abstentions_total{rubric=~"$rubric", '
                    f'model=~"$model"}}[{W}])) / sum by (model) (rate(judge_judgments_total'
                    f'{{rubric=~"$rubric", model=~"$model"}}[{W}]))',
                    "{{model}}",
                ),
            ),
            unit="percentunit",
            width=12,
            min=0,
            steps=(("green", None), ("red", 0.2)),
        ),
    ]
    variables = [
        _variable("rubric", "Rubric", "judge_calibration_kappa"),
        _variable("dimension", "Dimension", "judge_calibration_kappa", '{rubric=~"$rubric"}'),
        _variable("model", "Judge model", "judge_calibration_kappa", '{rubric=~"$rubric"}'),
    ]
    return dashboard(
        "judge-drift-reliability",
        "empathy-judge: judge drift & reliability",
        "Agreement with experts over time, canary drift, score distributions, reliability flags.",
        items,
        variables,
    )


DASHBOARDS = {
    "judge-service-health.json": service_health,
    "judge-drift-reliability.json": drift_reliability,
}


def render() -> dict[str, str]:
    return {name: json.dumps(build(), indent=2) + "\n" for name, build in DASHBOARDS.items()}


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
