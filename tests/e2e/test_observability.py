"""Observability end to end: a real Prometheus scrapes the real API and Celery worker, and a
judge that turns lenient between two canary runs drives its drift gauges past the alert
thresholds while the other judges stay flat.

The stack (every part a real process, nothing mocked):

- the LLM simulator with aliases ``judge-a``, ``judge-b``, ``judge-c`` -> ``accurate``, and
  reference labels for the canary items (so the accurate persona agrees with the experts);
- ``judge serve`` and one ``judge worker`` (Celery) on SQLite and a private Redis, each in
  Prometheus multiprocess mode with a directory of its own (as in compose); the worker serves
  ``/metrics`` on a free loopback port;
- Debian's ``prometheus`` on a free loopback port, scraping both every second under the job
  names of ``deploy/prometheus/prometheus.yml``, with the real ``deploy/prometheus/alerts.yml``.

The scenario: a short Redis outage answers ``/ready`` with 503 (the 5xx series); background
traffic keeps going until the end (scores on two panels, one with a judge whose provider
always fails, repeated items served from the cache, a bad request now and then), plus one
batch; a calibration run of 20 labelled EPITOME-style items (made-up texts, three made-up
experts) on the ``drift`` panel becomes a canary (``POST /v1/canaries``); ``judge beat
--once`` starts a first canary run; ``judge-b`` is switched to the ``lenient`` persona; a
second ``judge beat --once`` run follows.

Checked: judge-b's drift gauges are past the thresholds of ``alerts.yml`` while judge-a,
judge-c (and the panel's median) are exactly 0; the drift alert expressions, evaluated by
Prometheus, select judge-b only, and Prometheus holds pending drift alerts for judge-b only;
``GET /v1/reliability/epitome`` shows both canary runs with their drift, equal to the gauges;
every PromQL expression of the dashboards and of the alert rules' left-hand sides returns data
from this stack (same substitutions and splitting as ``test_prometheus_config.py``).
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures import loopback
from tests.fixtures.prometheus_live import (
    Live,
    alert_left_hand_sides,
    alert_rules,
    binary,
    dashboard_exprs,
    has_data,
    start_prometheus,
    substitute,
)
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import (
    RedisServer,
    ServiceStack,
    child_env,
    free_port,
    make_stack,
    sqlite_url,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RUBRIC = "epitome"
DIMENSIONS = ("emotional_reactions", "interpretations", "explorations")
JUDGES = {"judge-a": "openai/judge-a", "judge-b": "openai/judge-b", "judge-c": "openai/judge-c"}
DRIFTED = JUDGES["judge-b"]
STEADY = (JUDGES["judge-a"], JUDGES["judge-c"], "panel")
#: A judge whose provider answers HTTP 500 to every attempt: abstentions and failed calls.
FAILING = "openai/fail500-999"
DRIFT_GAUGES = {
    "kappa_delta": "judge_drift_kappa_delta",
    "mean_shift": "judge_drift_mean_score_shift",
    "abstention_delta": "judge_drift_abstention_rate_delta",
}
DRIFT_ALERTS = {
    "JudgeKappaDrift": "judge_drift_kappa_delta",
    "JudgeMeanScoreShift": "judge_drift_mean_score_shift",
    "JudgeAbstentionRateDrift": "judge_drift_abstention_rate_delta",
}
#: Expressions that cannot return data from this stack, with the reason. Keep it empty
#: unless a series truly needs conditions a test cannot produce.
NO_DATA_EXPECTED: dict[str, str] = {}
EPS = 1e-9


# -- data ------------------------------------------------------------------------------------
def canary_item(n: int) -> dict[str, str]:
    return {
        "seeker_post": f"{POSTS[n % 5]} (canary {n})",
        "response": RESPONSES[(n + n // 5) % 5],
    }


def reference_labels(n: int) -> dict[str, int]:
    """The experts' consensus on canary item ``n`` (every level of 0..2 occurs)."""
    return {
        "emotional_reactions": n % 3,
        "interpretations": (n // 3) % 3,
        "explorations": (2 * n + 1) % 3,
    }


def expert_labels(n: int) -> dict[str, dict[str, int]]:
    """Three experts; on some items one of them is off by one level, so the experts' own
    agreement is below 1 while their median stays the reference label."""
    ref = reference_labels(n)
    second, third = dict(ref), dict(ref)
    if n % 4 == 0:
        second["emotional_reactions"] = 2 if ref["emotional_reactions"] == 1 else 1
    if n % 5 == 2:
        third["interpretations"] = 2 if ref["interpretations"] == 1 else 1
    if n % 6 == 3:
        second["explorations"] = 2 if ref["explorations"] == 1 else 1
    # each pair of experts differs somewhere on every dimension (identical columns are refused
    # as one annotator under two names), never two experts off on the same item
    if n % 7 == 6:
        third["emotional_reactions"] = 2 if ref["emotional_reactions"] == 1 else 1
    if n % 7 == 1:
        second["interpretations"] = 2 if ref["interpretations"] == 1 else 1
    if n % 7 == 4:
        third["explorations"] = 2 if ref["explorations"] == 1 else 1
    return {"expert1": ref, "expert2": second, "expert3": third}


CANARY_ITEMS = [
    {"id": f"canary-{n}", "item": canary_item(n), "labels": expert_labels(n)} for n in range(20)
]


def write_reference_labels(path: Path) -> Path:
    """The simulator's ``--labels`` file: the accurate persona answers these on these texts."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["seeker_post", "response", *DIMENSIONS])
        writer.writeheader()
        for n in range(len(CANARY_ITEMS)):
            writer.writerow(canary_item(n) | reference_labels(n))
    return path


def traffic_item(n: int) -> dict[str, Any]:
    return {
        "id": f"traffic-{n}",
        "seeker_post": f"{POSTS[n % 5]} (traffic {n})",
        "response": RESPONSES[(n + 2) % 5],
    }


# -- background traffic ----------------------------------------------------------------------
class Traffic(threading.Thread):
    """Scores until stopped, so every rate of the dashboards has recent samples: both panels
    in turn, every fourth request a repeat (its judges' calls come from the cache), now and
    then a read of a result, a 404 and a 422."""

    def __init__(self, base_url: str) -> None:
        super().__init__(name="traffic", daemon=True)
        self.base_url = base_url
        self.stopped = threading.Event()
        self.sent = 0
        self.errors: list[str] = []

    def run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=60) as client:
            n = 0
            while not self.stopped.is_set():
                n += 1
                try:
                    self._one(client, n)
                except httpx.HTTPError as exc:
                    self.errors.append(f"request {n}: {exc!r}")
                self.sent = n
                self.stopped.wait(0.2)

    def _one(self, client: httpx.Client, n: int) -> None:
        panel = "mixed" if n % 2 == 0 else "drift"
        item = traffic_item(n - 4 if n % 4 == 0 and n > 4 else n)
        body = {"rubric": RUBRIC, "panel": panel, "item": item}
        response = client.post("/v1/scores", params={"wait": 30}, json=body)
        # 202 when the wait ran out first (a busy machine): still traffic, still scored later
        if response.status_code not in (200, 202):
            self.errors.append(f"score {n}: {response.status_code} {response.text[:300]}")
            return
        if n % 5 == 0:
            got = client.get(f"/v1/scores/{response.json()['id']}")
            if got.status_code != 200:
                self.errors.append(f"get {n}: {got.status_code}")
        if n % 7 == 0:
            bad = client.post("/v1/scores", json={"rubric": RUBRIC, "item": {"response": ""}})
            missing = client.get(f"/v1/scores/{'0' * 32}")
            if (bad.status_code, missing.status_code) != (422, 404):
                self.errors.append(f"bad requests {n}: {bad.status_code} {missing.status_code}")

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=90)


# -- the scenario ----------------------------------------------------------------------------
@dataclass
class Observed:
    stack: ServiceStack
    live: Live
    traffic: Traffic
    baseline: dict[str, Any]  # GET /v1/calibrations/{id} of the baseline run
    canary: dict[str, Any]  # POST /v1/canaries
    runs: list[str] = field(default_factory=list)  # the canary runs, in order
    seconds: dict[str, float] = field(default_factory=dict)

    def history(self) -> dict[str, Any]:
        response = self.stack.client.get(f"/v1/reliability/{RUBRIC}")
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()
        return data

    def canary_runs(self) -> list[dict[str, Any]]:
        (canary,) = [c for c in self.history()["canaries"] if c["id"] == self.canary["id"]]
        runs: list[dict[str, Any]] = canary["runs"]
        return runs

    def gauge(self, name: str) -> dict[tuple[str, str], float]:
        """(dimension, model) -> value of a drift gauge for the rubric, as Prometheus has it
        (one value whichever process exported it: they read the same database)."""
        out: dict[tuple[str, str], float] = {}
        for sample in self.live.query(f'{name}{{rubric="{RUBRIC}"}}'):
            labels = sample["metric"]
            key = (labels["dimension"], labels["model"])
            value = float(sample["value"][1])
            assert out.get(key, value) == value, f"{name}: two values for {key}: {labels}"
            out[key] = value
        return out


def write_config(path: Path) -> Path:
    def judges(*models: str) -> list[dict[str, Any]]:
        return [{"model": m, "simulated": True} for m in models]

    price = {"input_per_mtok": 2.5, "output_per_mtok": 10.0}
    config = {
        "default_panel": "drift",
        "panels": {
            "drift": {"judges": judges(*JUDGES.values())},
            "mixed": {"judges": judges(JUDGES["judge-a"], JUDGES["judge-c"], FAILING)},
        },
        "prices": dict.fromkeys((*JUDGES.values(), FAILING), price),
    }
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")  # JSON is YAML
    return path


@pytest.fixture(scope="module")
def drift_simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatorProcess]:
    labels = write_reference_labels(tmp_path_factory.mktemp("canary-labels") / "labels.csv")
    options = SimulatorOptions(
        latency_ms=5,
        jitter_ms=2,
        retry_after_ms=20,
        aliases=dict.fromkeys(JUDGES, "accurate"),
        labels=(labels,),
    )
    with SimulatorProcess(options, env=child_env()) as simulator:
        yield simulator


def start_services(stack: ServiceStack, workdir: Path, worker_metrics_port: int) -> None:
    """Worker and API side by side (both import LiteLLM), each with its own multiprocess
    directory (one per container in compose); the worker serves /metrics on a free port."""
    stack.env = stack.env | {
        "JUDGE_METRICS_DIR": str(workdir / "metrics-worker"),
        "JUDGE_WORKER__METRICS_PORT": str(worker_metrics_port),
        "JUDGE_RUN_GAUGES_TTL_S": "1",
    }
    with ThreadPoolExecutor(1) as pool:
        worker = pool.submit(stack.start_worker)
        while not stack.processes and not worker.done():
            time.sleep(0.01)  # spawned: the next spawn may use another environment
        stack.env = stack.env | {
            "JUDGE_METRICS_DIR": str(workdir / "metrics-api"),
            # the canary here re-runs every second (production's floor is 300 s)
            "JUDGE_API__MIN_CANARY_INTERVAL_S": "0",
        }
        stack.start_api()
        worker.result()


def wait_worker_metrics(worker_metrics_port: int, timeout: float = 30) -> None:
    """The worker's /metrics answers (its runtime is built on ``worker_ready``)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if loopback.get(f"http://127.0.0.1:{worker_metrics_port}/metrics").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the worker's /metrics does not answer"
        time.sleep(0.2)


def redis_outage(stack: ServiceStack, redis_server: RedisServer) -> None:
    """Redis killed for a moment: /ready answers 503 (a 5xx the service gives by design), so
    the 5xx series exist; then Redis is back and every process reconnects."""
    redis_server.kill()
    try:
        response = stack.client.get("/ready")
        assert response.status_code == 503, response.text
        assert response.json()["checks"]["redis"] == "unavailable"
    finally:
        redis_server.start()
    deadline = time.monotonic() + 30
    while stack.client.get("/ready").status_code != 200:
        assert time.monotonic() < deadline, "the API is not ready again after Redis came back"
        time.sleep(0.1)


def submit_batch(stack: ServiceStack) -> None:
    lines = [traffic_item(1000 + n) for n in range(4)] + [{"response": ""}]  # one rejected
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    response = stack.client.post(
        "/v1/batches",
        params={"rubric": RUBRIC, "panel": "mixed"},
        content=body,
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert response.status_code == 202, response.text
    assert response.json()["rejected"] == 1, response.json()


def calibrate(stack: ServiceStack) -> dict[str, Any]:
    body = {"rubric": RUBRIC, "panel": "drift", "label": "canary baseline", "items": CANARY_ITEMS}
    response = stack.client.post("/v1/calibrations", json=body)
    assert response.status_code in (200, 202), response.text
    run_id = response.json()["id"]
    deadline = time.monotonic() + 60
    while True:
        view: dict[str, Any] = stack.client.get(f"/v1/calibrations/{run_id}").json()
        if view["status"] == "completed":
            return view
        assert time.monotonic() < deadline, f"calibration not done: {view}"
        time.sleep(0.2)


def beat_once(stack: ServiceStack, workdir: Path) -> str:
    """``judge beat --once`` (its own metrics directory, as its own container would have)."""
    env = stack.env | {"JUDGE_METRICS_DIR": str(workdir / "metrics-beat")}
    done = subprocess.run(
        [sys.executable, "-m", "judge", "beat", "--once"],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("started 1 canary run(s): "), done.stdout + done.stderr
    return done.stdout.splitlines()[0].rsplit(" ", 1)[1]  # then the drift table


def wait_canary_run(observed: Observed, run_id: str, timeout: float = 60) -> dict[str, Any]:
    """Polls the history (no read finalizes a run: the worker that finishes its last item
    does, and exports the drift)."""
    deadline = time.monotonic() + timeout
    while True:
        runs = {r["id"]: r for r in observed.canary_runs()}
        run = runs.get(run_id)
        if run is not None and run["status"] == "completed":
            assert "drift" in run, run
            return run
        assert time.monotonic() < deadline, f"canary run {run_id} not done: {run}"
        time.sleep(0.2)


def wait_for_gauge(live: Live, expr: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not live.query(expr):
        assert time.monotonic() < deadline, f"Prometheus never returned {expr}"
        time.sleep(0.25)


@pytest.fixture(scope="module")
def observed(
    tmp_path_factory: pytest.TempPathFactory,
    drift_simulator: SimulatorProcess,
    private_redis: RedisServer,
) -> Iterator[Observed]:
    binary("prometheus")
    started = time.monotonic()
    seconds: dict[str, float] = {}
    workdir = tmp_path_factory.mktemp("observability")
    stack = make_stack(
        workdir,
        database_url=sqlite_url(workdir),
        simulator=drift_simulator,
        config=write_config(workdir / "judge.yaml"),
        redis_url=private_redis.url(0),
    )
    traffic: Traffic | None = None
    try:
        worker_port = free_port()
        start_services(stack, workdir, worker_port)
        wait_worker_metrics(worker_port)
        seconds["services up"] = time.monotonic() - started
        redis_outage(stack, private_redis)
        targets = {
            "judge-api": f"127.0.0.1:{stack.port}",
            "judge-worker": f"127.0.0.1:{worker_port}",
        }
        with start_prometheus(workdir / "prometheus", targets, samples=2) as live:
            seconds["prometheus up"] = time.monotonic() - started
            traffic = Traffic(stack.base_url)
            traffic.start()
            submit_batch(stack)
            baseline = calibrate(stack)
            seconds["baseline calibrated"] = time.monotonic() - started
            response = stack.client.post(
                "/v1/canaries",
                json={"calibration_id": baseline["id"], "interval_s": 1, "name": "drift-canary"},
            )
            assert response.status_code == 201, response.text
            observed = Observed(stack, live, traffic, baseline, response.json())
            observed.runs.append(beat_once(stack, workdir))
            first_done = time.monotonic()
            wait_canary_run(observed, observed.runs[0])
            seconds["canary run 1"] = time.monotonic() - started

            drift_simulator.set_alias("judge-b", "lenient")
            time.sleep(max(0.0, 1.1 - (time.monotonic() - first_done)))  # the 1 s interval
            observed.runs.append(beat_once(stack, workdir))
            wait_canary_run(observed, observed.runs[1])
            seconds["canary run 2"] = time.monotonic() - started

            # Prometheus has scraped the new gauges and evaluated the rules on them
            # ... from both processes (each reads the database when its cache expires)
            wait_for_gauge(
                live,
                f'count(abs(judge_drift_mean_score_shift{{model="{DRIFTED}"}}) '
                f"> {threshold('JudgeMeanScoreShift')}) == {2 * len(DIMENSIONS)}",
            )
            for alert in ("JudgeKappaDrift", "JudgeMeanScoreShift"):
                wait_for_gauge(live, f'ALERTS{{alertname="{alert}"}}')
            seconds["drift alert pending"] = time.monotonic() - started
            observed.seconds = seconds
            yield observed
    finally:
        if traffic is not None:
            traffic.stop()
        stack.stop()
        print(f"\nobservability scenario timings (s since start): {json.dumps(seconds)}")


# -- checks ----------------------------------------------------------------------------------
def threshold(alert: str) -> float:
    """The constant an alert rule compares with (``... > 0.1``)."""
    expr = alert_rules()[alert]
    (side,) = alert_left_hand_sides(expr)
    return float(" ".join(expr.split())[len(side) :].strip().lstrip("><=").strip())


def test_lenient_judge_drifts_past_the_thresholds_and_the_others_stay_flat(
    observed: Observed,
) -> None:
    gauges = {key: observed.gauge(name) for key, name in DRIFT_GAUGES.items()}
    report = {k: {f"{d} {m}": v for (d, m), v in g.items()} for k, g in gauges.items()}
    print("\ndrift gauges after the second canary run:\n" + json.dumps(report, indent=1))
    for name, values in gauges.items():
        assert set(values) == {(d, m) for d in DIMENSIONS for m in (*JUDGES.values(), "panel")}, (
            name,
            sorted(values),
        )
        for (dim, model), value in values.items():
            if model in STEADY:
                assert abs(value) <= EPS, (name, dim, model, value)
    shift = threshold("JudgeMeanScoreShift")
    kappa = threshold("JudgeKappaDrift")
    for dim in DIMENSIONS:
        assert gauges["mean_shift"][(dim, DRIFTED)] > shift, dim
        assert gauges["kappa_delta"][(dim, DRIFTED)] < -kappa, dim
        assert gauges["abstention_delta"][(dim, DRIFTED)] == 0, dim


def test_run_gauges_come_from_every_process_serving_metrics(observed: Observed) -> None:
    """Read from the database at scrape time: the API exports the drift the worker stored."""
    for name in DRIFT_GAUGES.values():
        jobs = {s["metric"]["job"] for s in observed.live.query(name)}
        assert jobs == {"judge-api", "judge-worker"}, (name, jobs)
    stamp = observed.live.query(f'judge_canary_last_run_timestamp_seconds{{rubric="{RUBRIC}"}}')
    assert sorted(s["metric"]["job"] for s in stamp) == ["judge-api", "judge-worker"]
    assert len({s["value"][1] for s in stamp}) == 1
    assert abs(float(stamp[0]["value"][1]) - time.time()) < 120


def test_drift_alerts_select_the_drifted_judge_only(observed: Observed) -> None:
    rules = alert_rules()
    live = observed.live
    alerts = live.alerts()
    for alert, gauge in DRIFT_ALERTS.items():
        selected = {s["metric"]["model"] for s in live.query(rules[alert])}
        active = {
            a["labels"]["model"]: a["state"]
            for a in alerts
            if a["labels"]["alertname"] == alert and a["labels"]["rubric"] == RUBRIC
        }
        if alert == "JudgeAbstentionRateDrift":
            assert selected == set(), (alert, selected)
            assert active == {}, (alert, active)
            continue
        assert selected == {DRIFTED}, (alert, gauge, selected)
        # ``for: 5m``: pending for the whole test (firing after five minutes)
        assert active == {DRIFTED: "pending"}, (alert, active)
    dims = {
        a["labels"]["dimension"]
        for a in alerts
        if a["labels"]["alertname"] == "JudgeMeanScoreShift"
    }
    assert dims == set(DIMENSIONS)


def test_reliability_history_shows_both_canary_runs_with_drift(observed: Observed) -> None:
    history = observed.history()
    assert [c["id"] for c in history["calibrations"]] == [observed.baseline["id"]]
    (canary,) = history["canaries"]
    assert canary["baseline_run_id"] == observed.baseline["id"]
    assert canary["last_run_at"] is not None
    runs = canary["runs"]
    assert [r["id"] for r in runs] == observed.runs
    assert all(r["status"] == "completed" for r in runs)
    first, second = (r["drift"] for r in runs)
    # Run 1: every judge as in the baseline (the accurate persona is deterministic)
    for dim in DIMENSIONS:
        assert set(first[dim]) == {*JUDGES.values(), "panel"}
        for model, values in first[dim].items():
            assert values["kappa_delta"] == 0, (dim, model, values)
            assert values["mean_shift"] == 0, (dim, model, values)
            assert values["abstention_delta"] == 0, (dim, model, values)
    # Run 2: the gauges Prometheus holds are this run's drift
    gauges = {key: observed.gauge(name) for key, name in DRIFT_GAUGES.items()}
    for dim in DIMENSIONS:
        for model, values in second[dim].items():
            for key in DRIFT_GAUGES:
                assert values[key] == pytest.approx(gauges[key][(dim, model)], abs=1e-9)
        assert second[dim][DRIFTED]["baseline_kappa"] == 1.0
        assert second[dim][DRIFTED]["kappa"] < 1.0
        assert runs[1]["dimensions"][dim]["kappa"][DRIFTED] == second[dim][DRIFTED]["kappa"]
    # The calibration kappa gauges follow the latest run (here the second canary run)
    kappas = {
        (s["metric"]["dimension"], s["metric"]["model"]): float(s["value"][1])
        for s in observed.live.query(
            f'judge_calibration_kappa{{rubric="{RUBRIC}", job="judge-worker"}}'
        )
    }
    for dim in DIMENSIONS:
        assert kappas[(dim, DRIFTED)] == pytest.approx(second[dim][DRIFTED]["kappa"], abs=1e-9)
        assert kappas[(dim, JUDGES["judge-a"])] == 1.0
        expert = observed.baseline["report"]["dimensions"][dim]["expert_expert"]["median"]
        assert kappas[(dim, "experts")] == pytest.approx(expert, abs=1e-9)
        assert expert < 1.0


def test_every_dashboard_expression_returns_data(observed: Observed) -> None:
    exprs = dashboard_exprs()
    assert set(NO_DATA_EXPECTED) <= set(exprs)
    empty = {
        where: expr
        for where, expr in exprs.items()
        if where not in NO_DATA_EXPECTED and not has_data(observed.live.query(substitute(expr)))
    }
    assert not empty, json.dumps(empty, indent=2)


def test_every_alert_expression_evaluates_and_its_left_hand_sides_return_data(
    observed: Observed,
) -> None:
    rules = alert_rules()
    groups = observed.live.get("/api/v1/rules")["groups"]
    health = {r["name"]: (r["health"], r.get("lastError", "")) for g in groups for r in g["rules"]}
    assert set(health) == set(rules)
    assert all(h == "ok" for h, _ in health.values()), health
    empty = {
        f"{name}: {side}": expr
        for name, expr in rules.items()
        for side in alert_left_hand_sides(expr)
        if f"{name}: {side}" not in NO_DATA_EXPECTED and not has_data(observed.live.query(side))
    }
    assert not empty, json.dumps(empty, indent=2)


def test_both_processes_are_scraped_and_the_traffic_went_through(observed: Observed) -> None:
    live = observed.live
    up = {s["metric"]["job"]: s["value"][1] for s in live.query('up{job=~"judge-.*"}')}
    assert up == {"judge-api": "1", "judge-worker": "1"}
    by_job = {
        "judge_http_requests_total": {"judge-api"},
        "judge_jobs_submitted_total": {"judge-api"},
        "judge_llm_calls_total": {"judge-worker"},
        "judge_jobs_finished_total": {"judge-worker"},
        "judge_queue_depth": {"judge-worker"},
    }
    for name, jobs in by_job.items():
        assert {s["metric"]["job"] for s in live.query(name)} == jobs, name
    five_xx = live.query('judge_http_requests_total{route="/ready", status="503"}')
    assert five_xx
    assert float(five_xx[0]["value"][1]) >= 1
    failed = live.query(f'judge_llm_calls_total{{model="{FAILING}", outcome="provider_error"}}')
    assert failed
    assert float(failed[0]["value"][1]) > 0
    assert observed.traffic.sent >= 10
    assert not observed.traffic.errors, observed.traffic.errors[:5]
