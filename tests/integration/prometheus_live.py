"""A real Prometheus for the tests, and the PromQL of the deploy files.

Shared by ``test_prometheus_config.py`` (synthetic exporters) and
``test_observability_e2e.py`` (the real API and worker):

- :func:`dashboard_exprs` and :func:`alert_rules` read every expression of the Grafana
  dashboards and the alert rules; :func:`substitute` replaces Grafana's variables
  (``$__rate_interval`` becomes ``30s``, ``$__range`` ``1h``, template variables match
  everything); :func:`alert_left_hand_sides` strips an alert's threshold comparisons (split on
  top-level ``and``/``or``/``unless``, then the left-hand side of a top-level comparison with
  a constant), leaving the parts that must have data whatever the thresholds.
- :func:`start_prometheus` runs Debian's ``prometheus`` on a free loopback port with the
  deploy config's jobs (``judge-api``, ``judge-worker``) pointed at given targets, a 1 s
  scrape and evaluation interval, and the real ``alerts.yml``.

Without the binaries the live tests are skipped on a workstation, but fail in CI (``CI=true``).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from judge.bench.procs import free_port
from tests.conftest import REPO

DEPLOY = REPO / "deploy"
PROMETHEUS_YML = DEPLOY / "prometheus" / "prometheus.yml"
ALERTS_YML = DEPLOY / "prometheus" / "alerts.yml"
DASHBOARDS = DEPLOY / "grafana" / "dashboards"
GRAFANA_VARS = {"__rate_interval": "30s", "__range": "1h", "__interval": "15s"}
#: The scrape jobs of ``prometheus.yml`` that the dashboards and alert rules read.
JUDGE_JOBS = ("judge-api", "judge-worker")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def binary(name: str) -> str:
    """The path of a Prometheus binary; skips the test (fails it in CI) when it is missing."""
    path = shutil.which(name)
    if path is None:
        message = f"`{name}` not found (Debian package `prometheus`)"
        if in_ci():
            pytest.fail(message + "; CI must install it")
        pytest.skip(message)
    return path


# --- expressions -------------------------------------------------------------------------


def panels(items: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every panel of a dashboard, rows' nested panels included."""
    for panel in items:
        yield panel
        yield from panels(panel.get("panels", []))


def dashboard_exprs() -> dict[str, str]:
    """``"file: panel [refId]"`` -> PromQL, for every target of every dashboard."""
    out: dict[str, str] = {}
    for path in sorted(DASHBOARDS.glob("*.json")):
        board = json.loads(path.read_text(encoding="utf-8"))
        for panel in panels(board["panels"]):
            for target in panel.get("targets", []):
                out[f"{path.name}: {panel['title']} [{target['refId']}]"] = target["expr"]
        for variable in board.get("templating", {}).get("list", []):
            query = variable["query"]["query"] if isinstance(variable["query"], dict) else ""
            match = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", query)
            assert match, f"{path.name}: unexpected variable query {query!r}"
            out[f"{path.name}: variable {variable['name']}"] = match.group(1)
    return out


def alert_rules() -> dict[str, str]:
    """Alert name -> expression, from ``alerts.yml``."""
    doc = yaml.safe_load(ALERTS_YML.read_text(encoding="utf-8"))
    return {r["alert"]: r["expr"] for g in doc["groups"] for r in g["rules"]}


def substitute(expr: str) -> str:
    return re.sub(r"\$\{?(\w+)\}?", lambda m: GRAFANA_VARS.get(m.group(1), ".*"), expr)


def _depths(expr: str) -> list[int]:
    depth, quote, out = 0, "", []
    for ch in expr:
        if quote:
            out.append(depth + 1)
            if ch == quote:
                quote = ""
            continue
        if ch in "\"'`":
            quote = ch
            out.append(depth + 1)
            continue
        if ch in "([{":
            depth += 1
        out.append(depth)
        if ch in ")]}":
            depth -= 1
    return out


def _top_level(pattern: str, expr: str) -> list[re.Match[str]]:
    depths = _depths(expr)
    return [m for m in re.finditer(pattern, expr) if depths[m.start()] == 0]


def alert_left_hand_sides(expr: str) -> list[str]:
    """The parts of an alert expression that must have data whatever the thresholds."""
    expr = " ".join(expr.split())
    cuts = [0]
    for m in _top_level(r"\b(?:and|or|unless)\b", expr):
        cuts += [m.start(), m.end()]
    cuts.append(len(expr))
    operands = [expr[cuts[i] : cuts[i + 1]].strip() for i in range(0, len(cuts), 2)]
    sides = []
    for operand in operands:
        comparisons = _top_level(r"==|!=|>=|<=|>|<", operand)
        if comparisons:
            last = comparisons[-1]
            rhs = operand[last.end() :].strip()
            assert re.fullmatch(r"(bool\s+)?[0-9.eE+\-*/ ()]+", rhs), (expr, rhs)
            operand = operand[: last.start()].strip()
        sides.append(operand)
    return sides


# --- live Prometheus ----------------------------------------------------------------------


@dataclass
class Live:
    """A running Prometheus: its HTTP API and its log."""

    url: str
    log: Path

    def get(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}{path}{query}", timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[Any]:
        """An instant query: the vector's samples (a scalar or string as a one-item list)."""
        data = self.get("/api/v1/query", query=expr)
        if data["resultType"] in ("scalar", "string"):
            return [data["result"]]
        return list(data["result"])

    def alerts(self) -> list[dict[str, Any]]:
        """Active (pending or firing) alerts."""
        alerts: list[dict[str, Any]] = self.get("/api/v1/alerts")["alerts"]
        return alerts


def has_data(result: list[Any]) -> bool:
    """A query result with at least one sample that is a number (not NaN)."""
    values = [float(r["value"][1]) if isinstance(r, dict) else float(r[1]) for r in result]
    return bool(values) and not all(math.isnan(v) for v in values)


def stop(proc: subprocess.Popen[Any]) -> None:
    proc.terminate()
    try:
        proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=10)


def write_config(directory: Path, targets: dict[str, str]) -> Path:
    """``prometheus.yml`` from the deploy file: its ``judge-*`` jobs scrape ``targets``
    (job name -> ``host:port``) every second, rules are evaluated every second, and the rule
    file is the real ``alerts.yml``."""
    config = yaml.safe_load(PROMETHEUS_YML.read_text(encoding="utf-8"))
    config["global"] |= {
        "scrape_interval": "1s",
        "evaluation_interval": "1s",
        "scrape_timeout": "1s",
    }
    config["rule_files"] = [str(ALERTS_YML)]
    jobs = [job for job in config["scrape_configs"] if job["job_name"] in targets]
    assert {job["job_name"] for job in jobs} == set(targets), "unknown job names"
    config["scrape_configs"] = [
        {**job, "static_configs": [{"targets": [targets[job["job_name"]]]}]} for job in jobs
    ]
    path = directory / "prometheus.yml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@contextmanager
def start_prometheus(
    directory: Path, targets: dict[str, str], *, samples: int = 6, timeout: float = 40
) -> Iterator[Live]:
    """Prometheus on a free loopback port, scraping ``targets`` (job name -> ``host:port``);
    yields once every target has ``samples`` successful scrapes and every rule group has
    been evaluated. Stopped on exit."""
    prometheus = binary("prometheus")
    directory.mkdir(parents=True, exist_ok=True)
    config = write_config(directory, targets)
    port = free_port()
    log = directory / "prometheus.log"
    with log.open("w") as log_file:
        server = subprocess.Popen(
            [
                prometheus,
                f"--config.file={config}",
                f"--storage.tsdb.path={directory / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            text=True,
        )
    try:
        live = Live(f"http://127.0.0.1:{port}", log)
        wait_for_data(live, server, n_targets=len(targets), samples=samples, timeout=timeout)
        yield live
    finally:
        stop(server)


def wait_for_data(
    live: Live,
    server: subprocess.Popen[Any],
    *,
    n_targets: int,
    samples: int = 6,
    timeout: float = 40,
) -> None:
    """Until every ``judge-*`` target has ``samples`` samples, is up, and every rule group
    has been evaluated."""
    deadline = time.monotonic() + timeout
    ready = (
        f'min(count_over_time(up{{job=~"judge-.*"}}[1m])) >= {samples} '
        'and min(up{job=~"judge-.*"}) == 1'
    )
    while time.monotonic() < deadline:
        assert server.poll() is None, live.log.read_text()
        try:
            enough = live.query(ready) and len(live.query('up{job=~"judge-.*"}')) == n_targets
            groups = live.get("/api/v1/rules")["groups"]
            evaluated = groups and all(
                not r["lastEvaluation"].startswith("0001") for g in groups for r in g["rules"]
            )
            if enough and evaluated:
                return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail("Prometheus did not collect data in time:\n" + live.log.read_text()[-3000:])
