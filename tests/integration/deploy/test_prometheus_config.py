"""deploy/: Prometheus config and alert rules, Grafana dashboards, compose and Kubernetes files.

Static checks: ``promtool check config|rules``; the dashboards are generated and current;
every metric they and the alert rules name is declared by ``judge.metrics``; the compose file
and the manifests parse with the expected services and kinds.

Live check: a real Prometheus (Debian's ``prometheus``) started here on a free loopback port
scrapes two exporter subprocesses (an "api" and a "worker" role, each in multiprocess mode
with its own directory, calling the ``judge.metrics`` helpers with realistic values and
serving ``render_latest()``), every second, with the deploy config's jobs and alert rules.
Then every PromQL expression of the dashboards and alert rules must return data:

- Dashboards: Grafana's ``$__rate_interval`` becomes ``30s``, ``$__range`` ``1h`` and the
  template variables (``$rubric``...) match everything (``.*``); a 30 s window holds enough
  1 s samples after a few seconds, so ``rate`` has values.
- Alert rules compare with thresholds and may rightly be empty, so their threshold
  comparisons are stripped: the expression is split on top-level ``and``/``or``/``unless``,
  and in each operand the left-hand side of a top-level comparison with a constant is
  queried. Thresholds themselves are checked through the alerts Prometheus raises: the
  drifted judge (and only it) has a pending drift alert, the stale canary (and only it) a
  pending staleness alert.

The expression helpers and the Prometheus runner live in ``prometheus_live.py`` (shared with
``test_observability_e2e.py``, which points the same checks at the real API and worker).
Without the binaries the live part is skipped on a workstation, but fails in CI (``CI=true``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.domain import watch
from tests.conftest import REPO
from tests.fixtures.prometheus_live import (
    ALERTS_YML,
    DASHBOARDS,
    DEPLOY,
    PROMETHEUS_YML,
    Live,
    alert_left_hand_sides,
    alert_rules,
    binary,
    dashboard_exprs,
    has_data,
    panels,
    start_prometheus,
    stop,
    substitute,
)

pytestmark = pytest.mark.integration

BUILDER = DEPLOY / "grafana" / "build_dashboards.py"
METRIC = re.compile(r"\bjudge_[a-z0-9_]+\b")


# --- expressions -------------------------------------------------------------------------


def test_alert_split() -> None:
    assert alert_left_hand_sides("abs(judge_x) > 0.1") == ["abs(judge_x)"]
    assert alert_left_hand_sides('a{s=~"5.."} / b > 2 * 86400') == ['a{s=~"5.."} / b']
    assert alert_left_hand_sides("max(q) > 0 and (sum(rate(f[1m])) or vector(0)) == 0") == [
        "max(q)",
        "(sum(rate(f[1m])) or vector(0))",
    ]
    assert alert_left_hand_sides('x{model!="experts"} < 0.40') == ['x{model!="experts"}']
    assert alert_left_hand_sides("max by (r) (x) < on (r) group_left max by (r) (f)") == [
        "max by (r) (x)",
        "max by (r) (f)",
    ]
    assert alert_left_hand_sides("time() - max(t) > 2 * max by (r) (i)") == [
        "time() - max(t)",
        "2 * max by (r) (i)",
    ]


# --- static checks -----------------------------------------------------------------------


def declared_metric_names() -> set[str]:
    """Sample names judge.metrics and the run gauges (judge.runtime.run_gauges) can export,
    read in a fresh single-process interpreter."""
    code = (
        "from judge import metrics\n"
        "from judge.runtime.run_gauges import RunGauges, families\n"
        "class NoRuns:\n"
        "    def collect(self):\n"
        "        return families(RunGauges())\n"
        "metrics.configure_metrics(None)\n"
        "metrics.add_collector(NoRuns())\n"
        "print(metrics.render_latest()[0].decode())\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("prometheus_")}
    body = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    ).stdout
    names: set[str] = set()
    for name, kind in re.findall(r"^# TYPE (judge_\w+) (\w+)$", body, re.MULTILINE):
        names.add(name)
        if kind == "histogram":
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    return names


def test_promtool_checks_config_and_rules() -> None:
    promtool = binary("promtool")
    for args in (["check", "config", str(PROMETHEUS_YML)], ["check", "rules", str(ALERTS_YML)]):
        result = subprocess.run([promtool, *args], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "SUCCESS" in result.stdout + result.stderr


def test_scrape_config_targets_api_and_worker() -> None:
    config = yaml.safe_load(PROMETHEUS_YML.read_text(encoding="utf-8"))
    targets = {
        job["job_name"]: [t for sc in job["static_configs"] for t in sc["targets"]]
        for job in config["scrape_configs"]
    }
    assert targets["judge-api"] == ["api:8000"]
    assert targets["judge-worker"] == ["worker:9808"]
    assert config["rule_files"] == ["alerts.yml"]


def test_dashboards_are_generated_and_current() -> None:
    result = subprocess.run(
        [sys.executable, str(BUILDER), "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    boards = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in DASHBOARDS.glob("*.json")}
    assert set(boards) == {"judge-service-health.json", "judge-drift-reliability.json"}
    for board in boards.values():
        ids = [p["id"] for p in panels(board["panels"])]
        assert len(ids) == len(set(ids))
        for panel in panels(board["panels"]):
            for target in panel.get("targets", []):
                assert target["datasource"]["uid"] == "prometheus"
    provisioning = DEPLOY / "grafana" / "provisioning"
    source = yaml.safe_load((provisioning / "datasources" / "prometheus.yml").read_text())
    assert source["datasources"][0]["uid"] == "prometheus"
    assert yaml.safe_load((provisioning / "dashboards" / "dashboards.yml").read_text())["providers"]


def test_alert_thresholds_are_the_ones_in_the_code() -> None:
    """alerts.yml is hand-written YAML (rich annotations); its thresholds must equal
    judge.domain.watch, which the dashboards draw, so the two never disagree."""
    rules = alert_rules()
    expected = {
        "JudgeKappaDrift": f"> {watch.DRIFT_THRESHOLD}",
        "JudgeMeanScoreShift": f"> {watch.DRIFT_THRESHOLD}",
        "JudgeAbstentionRateDrift": f"> {watch.DRIFT_THRESHOLD}",
        "JudgeBelowFloor": "< on (rubric, dimension) group_left max by (rubric, dimension) "
        "(judge_reliability_floor_kappa)",
        "JudgeCanaryStale": f"> {watch.CANARY_STALE_INTERVALS} * max by (rubric) "
        "(judge_canary_interval_seconds)",
        "JudgeAbstentionRateHigh": f"> {watch.ABSTENTION_RATE_ALERT}",
        "JudgeLLMErrorRateHigh": f"> {watch.LLM_FAILURE_RATE_ALERT}",
        "JudgeHttpErrorRateHigh": f"> {watch.HTTP_5XX_RATIO_ALERT}",
    }
    for name, comparison in expected.items():
        expr = " ".join(rules[name].split())
        assert expr.endswith(comparison), (name, expr, comparison)
    boards = "".join(p.read_text(encoding="utf-8") for p in DASHBOARDS.glob("*.json"))
    for value in (watch.KAPPA_FLOOR, watch.KAPPA_LINE, watch.DRIFT_THRESHOLD):
        assert f'"value": {value}' in boards


def test_dashboards_and_alerts_use_only_declared_metrics() -> None:
    declared = declared_metric_names()
    assert "judge_http_requests_total" in declared
    assert "judge_rating_normalised_bucket" in declared
    exprs = dashboard_exprs() | alert_rules()
    assert len(exprs) > 30
    for where, expr in exprs.items():
        names = set(METRIC.findall(expr))
        assert names, f"{where}: no judge_ metric in {expr!r}"
        assert names <= declared, f"{where}: undeclared {names - declared}"


def _yaml_docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def test_compose_file_has_the_stack() -> None:
    compose = _yaml_docs(DEPLOY / "compose.yaml")[0]
    services = compose["services"]
    assert set(services) == {
        "api",
        "worker",
        "beat",
        "migrate",
        "redis",
        "postgres",
        "prometheus",
        "grafana",
    }
    commands = {
        "api": ["serve"],
        "worker": ["worker"],
        "beat": ["beat"],
        "migrate": ["db", "upgrade"],
    }
    for name, command in commands.items():
        service = services[name]
        assert service["command"] == command
        env = service["environment"]
        assert env["JUDGE_DATABASE_URL"].startswith("postgresql://")
        assert env["JUDGE_REDIS_URL"].startswith("redis://")
        assert env["PROMETHEUS_MULTIPROC_DIR"] == env["JUDGE_METRICS_DIR"]
        assert any(t.startswith(env["PROMETHEUS_MULTIPROC_DIR"]) for t in service["tmpfs"])
    depends = services["api"]["depends_on"]
    assert depends["migrate"]["condition"] == "service_completed_successfully"
    assert "./prometheus:/etc/prometheus:ro" in services["prometheus"]["volumes"]
    assert "./grafana/provisioning:/etc/grafana/provisioning:ro" in services["grafana"]["volumes"]
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert "FROM python:3.11-slim" in dockerfile
    assert "uv sync --locked" in dockerfile
    assert re.search(r"^USER (?!root|0\b)", dockerfile, re.MULTILINE)


def test_kubernetes_manifests() -> None:
    docs = {
        (d["kind"], d.get("metadata", {}).get("name", "")): d
        for path in sorted((DEPLOY / "k8s").glob("*.yaml"))
        for d in _yaml_docs(path)
    }
    kinds = {kind for kind, _ in docs}
    assert {"Deployment", "Service", "ConfigMap", "Secret", "Job", "Kustomization"} <= kinds
    kustomization = docs[("Kustomization", "")]
    for resource in kustomization["resources"]:
        assert (DEPLOY / "k8s" / resource).is_file()
    for role, command in {"api": "serve", "worker": "worker", "beat": "beat"}.items():
        deployment = docs[("Deployment", f"judge-{role}")]
        pod = deployment["spec"]["template"]
        assert (
            deployment["spec"]["selector"]["matchLabels"].items()
            <= pod["metadata"]["labels"].items()
        )
        (container,) = pod["spec"]["containers"]
        assert container["args"] == [command]
        assert {"requests", "limits"} <= set(container["resources"])
        refs = {next(iter(ref.values()))["name"] for ref in container["envFrom"]}
        assert refs == {"judge-config", "judge-secrets"}
        assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    api = docs[("Deployment", "judge-api")]["spec"]["template"]["spec"]["containers"][0]
    assert api["livenessProbe"]["httpGet"]["path"] == "/health"
    assert api["readinessProbe"]["httpGet"]["path"] == "/ready"
    assert docs[("Deployment", "judge-beat")]["spec"]["replicas"] == 1
    service = docs[("Service", "judge-api")]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "api"
    assert docs[("ConfigMap", "judge-config")]["data"]["PROMETHEUS_MULTIPROC_DIR"]
    assert "JUDGE_DATABASE_URL" in docs[("Secret", "judge-secrets")]["stringData"]


# --- exporter (runs in a subprocess) ----------------------------------------------------------

MODELS = ("openai/accurate", "openai/noisy", "openai/lenient")
DRIFTED = "openai/lenient"
STALE_RUBRIC = "lend-an-ear"


def _result(rubric: str, tick: int) -> Any:
    from judge.domain.result import (
        Agreement,
        DimensionResult,
        JudgeRating,
        ReliabilityFlag,
        ScoreResult,
        Usage,
    )

    def flag(level: str, *reasons: str) -> ReliabilityFlag:
        return ReliabilityFlag(
            level=level,
            reasons=list(reasons),
            expert_kappa=0.62,
            judge_kappa=0.55,
            threshold=0.58,
            floor=0.4,
            source="calibration:c1",
        )

    ratings = [1 + tick % 3, 2, 3 if tick % 2 else 2]  # ordinal 0..3, the lenient one high
    judges = [
        JudgeRating(model=m, rating=r, status="ok") for m, r in zip(MODELS, ratings, strict=True)
    ]
    if tick % 4 == 0:
        reason = ("unparseable", "timed_out", "rate_limit", "refused")[tick // 4 % 4]
        judges[1] = JudgeRating(model=MODELS[1], status="abstained", reason=reason)
    valid = [j.rating for j in judges if j.status == "ok"]
    levels = (("trusted",), ("caution", "judges_below_line"), ("untrusted", "low_expert_agreement"))
    level, *reasons = levels[tick % 3]
    dims = {
        "emotional_reactions": DimensionResult(
            score=sorted(valid)[len(valid) // 2],
            scale={"type": "ordinal", "min": 0, "max": 3},
            polarity="prescriptive",
            judges=judges,
            agreement=Agreement(valid=len(valid), quorum=2, spread=max(valid) - min(valid)),
            reliability=flag(level, *reasons),
        ),
        "explorations": DimensionResult(
            score=True,
            scale={"type": "binary"},
            polarity="prescriptive",
            judges=[
                JudgeRating(model=m, rating=bool((tick + i) % 3), status="ok")
                for i, m in enumerate(MODELS)
            ],
            agreement=Agreement(valid=3, quorum=2, modal_share=0.6667),
            reliability=flag("caution", "uncalibrated"),
        ),
    }
    return ScoreResult(
        id=None,
        status="completed",
        rubric={"id": rubric, "version": "1", "hash": "h"},
        panel_name="simulated",
        panel=[],
        dimensions=dims,
        summary={},
        input_flags=[],
        usage=Usage(),
        timings_ms={},
    )


def _canary_report(now_kappa: dict[str, float], floor: float) -> Any:
    """A run's report as the run gauges read it: kappas, experts, flags and drift."""
    from tests.fixtures.stored_reports import stored_report

    dims = ("emotional_reactions", "explorations")
    drift = {
        m: {
            "kappa_delta": -0.31 if m == DRIFTED else 0.02,
            "mean_shift": 0.24 if m == DRIFTED else -0.01,
            "abstention_delta": 0.0 if m == DRIFTED else 0.01,
        }
        for m in now_kappa
    }
    return stored_report(
        dict.fromkeys(dims, now_kappa), "caution", drift=dict.fromkeys(dims, drift), floor=floor
    )


#: per rubric: its flags' kappa floor, its canary's interval and the age of its last run (s).
#: The stale rubric's canary ran a day ago but runs every 6 hours; epitome's three days ago,
#: but weekly. Its non-default floor 0.60 puts the noisy judge (0.57) below it there.
RUBRICS = {
    "epitome": (0.40, 7 * 86400, 3 * 86400),
    STALE_RUBRIC: (0.60, 6 * 3600, 86400),
}
KAPPAS = dict(zip(MODELS, (0.74, 0.57, 0.31), strict=True)) | {"panel": 0.66}


def _stored_runs(now: float) -> tuple[list[Any], list[Any]]:
    """A calibration and a canary run per rubric, and each rubric's canary."""
    from judge.persistence.latest_runs import StoredCanary, StoredRun

    runs, canaries = [], []
    for rubric, (floor, interval_s, canary_age) in RUBRICS.items():
        canary_at = datetime.fromtimestamp(now - canary_age, UTC)
        report = _canary_report(KAPPAS, floor)
        runs.append(StoredRun(rubric, canary_at - timedelta(days=1), False, report))
        runs.append(StoredRun(rubric, canary_at, True, report))
        canaries.append(StoredCanary(rubric, f"canary-{rubric}", interval_s))
    return runs, canaries


class StoredRunsCollector:
    """The run gauges of fixed runs (the service reads them from its database)."""

    def __init__(self, runs: list[Any], canaries: list[Any]) -> None:
        self.runs = runs
        self.canaries = canaries

    def collect(self) -> Any:
        from judge.runtime.run_gauges import families, gauges_from_runs

        return families(gauges_from_runs(self.runs, self.canaries))


def run_exporter(role: str, directory: str) -> None:
    """Serve ``render_latest()`` on a free port (printed) and keep updating the metrics."""
    import random
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from judge import metrics

    metrics.configure_metrics(Path(directory))
    metrics.clean_multiproc_dir(Path(directory))

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body, content_type = metrics.render_latest()
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    rng = random.Random(7)
    if role == "worker":
        long_job = metrics.job_running("epitome")
        long_job.__enter__()
        metrics.add_collector(StoredRunsCollector(*_stored_runs(time.time())))

    def tick(n: int) -> None:
        if role == "api":
            metrics.observe_http("POST", "/v1/scores", 202, rng.uniform(0.003, 0.05))
            metrics.observe_http("GET", "/v1/scores/{id}", 200, rng.uniform(0.001, 0.02))
            metrics.observe_http("GET", "/health", 200, 0.001)
            if n % 5 == 0:
                metrics.observe_http("POST", "/v1/batches", 500, 0.2)
            metrics.job_submitted("epitome", n=2)
            metrics.set_queue_depth(rng.randint(3, 40))
            return
        for i, model in enumerate(MODELS):
            outcome = "ok" if (n + i) % 6 else ("timed_out", "rate_limit", "provider_error")[i]
            metrics.observe_llm_call(
                model, outcome, rng.uniform(0.2, 3.0), 900, 120, 0.0021, cached=False
            )
            if n % 3 == i:
                metrics.observe_llm_call(model, "ok", 0.0, 0, 0, 0.0, cached=True)
        for rubric in ("epitome", STALE_RUBRIC):
            with metrics.job_running(rubric):
                metrics.observe_result(rubric, _result(rubric, n))
            metrics.job_finished(rubric, "failed" if n % 7 == 0 else "completed", 1.5 + n % 4)

    tick(0)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    n = 1
    while True:
        time.sleep(0.2)
        tick(n)
        n += 1


# --- live Prometheus ----------------------------------------------------------------------


def _start_exporter(role: str, directory: Path) -> tuple[subprocess.Popen[str], int]:
    env = {k: v for k, v in os.environ.items() if not k.lower().startswith("prometheus_")}
    code = (
        "from tests.integration.deploy.test_prometheus_config import run_exporter\n"
        f"run_exporter({role!r}, {str(directory)!r})\n"
    )
    log = directory.parent / f"exporter-{role}.log"
    with log.open("w") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.strip().isdigit():
        proc.kill()
        proc.communicate(timeout=10)
        pytest.fail(f"{role} exporter did not start: {line}{log.read_text()}")
    return proc, int(line)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    binary("prometheus")
    tmp = tmp_path_factory.mktemp("prometheus")
    procs: list[subprocess.Popen[str]] = []
    try:
        targets = {}
        for role in ("api", "worker"):
            proc, port = _start_exporter(role, tmp / f"multiproc-{role}")
            procs.append(proc)
            targets[f"judge-{role}"] = f"127.0.0.1:{port}"
        with start_prometheus(tmp, targets) as live:
            yield live
    finally:
        for proc in reversed(procs):
            stop(proc)


def test_every_dashboard_expression_returns_data(live: Live) -> None:
    empty = {w: e for w, e in dashboard_exprs().items() if not has_data(live.query(substitute(e)))}
    assert not empty, json.dumps(empty, indent=2)


def test_every_alert_expression_evaluates_and_its_left_hand_sides_return_data(live: Live) -> None:
    rules = alert_rules()
    groups = live.get("/api/v1/rules")["groups"]
    health = {r["name"]: (r["health"], r.get("lastError", "")) for g in groups for r in g["rules"]}
    assert set(health) == set(rules)
    assert all(h == "ok" for h, _ in health.values()), health
    empty = {
        f"{name}: {side}": expr
        for name, expr in rules.items()
        for side in alert_left_hand_sides(expr)
        if not has_data(live.query(side))
    }
    assert not empty, json.dumps(empty, indent=2)


def test_alert_thresholds_single_out_the_drifted_judge_and_the_stale_canary(live: Live) -> None:
    """The floor and the staleness come from the exported policy and canary intervals: the
    noisy judge is below the non-default floor 0.60 of one rubric only, and the canary that
    ran most recently is the stale one (its interval is 6 hours)."""
    alerts = live.get("/api/v1/alerts")["alerts"]

    def active(name: str) -> set[tuple[str, ...]]:
        keys = ("rubric", "model")
        return {
            tuple(a["labels"][k] for k in keys if k in a["labels"])
            for a in alerts
            if a["labels"]["alertname"] == name
        }

    assert active("JudgeKappaDrift") == {(r, DRIFTED) for r in RUBRICS}
    assert active("JudgeMeanScoreShift") == {(r, DRIFTED) for r in RUBRICS}
    assert active("JudgeBelowFloor") == {
        ("epitome", DRIFTED),
        (STALE_RUBRIC, DRIFTED),
        (STALE_RUBRIC, "openai/noisy"),
    }
    assert active("JudgeCanaryStale") == {(STALE_RUBRIC,)}
    assert not any(a["labels"]["alertname"] == "JudgeAbstentionRateDrift" for a in alerts)
