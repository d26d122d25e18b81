"""Calibration, reliability and drift gauges read from the database when Prometheus scrapes.

The latest completed calibration and canary runs are in the database, so any process that
serves ``/metrics`` (API, worker, ``judge beat``) exports the same values, from its first
scrape on, and a restart loses nothing. Values are cached for a few seconds
(``JUDGE_RUN_GAUGES_TTL_S``) so frequent scrapes do not each read the reports.

Several processes export the same series (under their own ``job``/``instance``): dashboards
and alerts take ``max by (rubric, dimension, model)``.

Per rubric:

- ``judge_calibration_kappa``: each rater's (judge, ``panel``, ``experts``) kappa in the
  latest completed run, canary runs included (as the drift of a judge shows in its kappa);
- ``judge_reliability_level``: 1 for the flag level of each dimension in the latest
  completed calibration that is not a canary run, 0 for the other levels;
- ``judge_drift_*``: the latest canary run's drift against its baseline;
- ``judge_reliability_floor_kappa``: the kappa floor of each dimension's flag in that
  calibration (the rubric's reliability policy), which the ``JudgeBelowFloor`` alert compares
  the judges' kappas with;
- ``judge_canary_last_run_timestamp_seconds``: when the latest canary run finished;
- ``judge_canary_interval_seconds``: each enabled canary's ``interval_s``, from which the
  ``JudgeCanaryStale`` alert derives staleness.

Like :mod:`judge.metrics`, this module imports ``prometheus_client`` only when called.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judge.domain.calibration_report import RaterDrift
from judge.persistence.latest_runs import StoredCanary, StoredRun, read_latest_runs

if TYPE_CHECKING:
    from prometheus_client.core import GaugeMetricFamily

log = logging.getLogger(__name__)

DIM_LABELS = ("rubric", "dimension", "model")
LEVELS = ("trusted", "caution", "untrusted")
DEFAULT_TTL_S = 15.0
#: a scrape waits at most this long for the database; then it serves the last values
READ_TIMEOUT_S = 10.0

#: each drift gauge: its name, help text and the value of a rater's drift it exports
_DRIFT: dict[str, tuple[str, str, Callable[[RaterDrift], float | None]]] = {
    "kappa_delta": (
        "judge_drift_kappa_delta",
        "Canary run kappa minus the canary baseline's kappa",
        lambda drift: drift.kappa_delta,
    ),
    "mean_shift": (
        "judge_drift_mean_score_shift",
        "Canary run mean normalised score minus the baseline's",
        lambda drift: drift.mean_shift,
    ),
    "abstention_delta": (
        "judge_drift_abstention_rate_delta",
        "Canary run abstention rate minus the baseline's",
        lambda drift: drift.abstention_delta,
    ),
}
KAPPA = "judge_calibration_kappa"
RELIABILITY = "judge_reliability_level"
FLOOR = "judge_reliability_floor_kappa"
CANARY_LAST_RUN = "judge_canary_last_run_timestamp_seconds"
CANARY_INTERVAL = "judge_canary_interval_seconds"
NAMES = (
    KAPPA,
    RELIABILITY,
    FLOOR,
    *(name for name, _, _ in _DRIFT.values()),
    CANARY_LAST_RUN,
    CANARY_INTERVAL,
)


@dataclass
class RunGauges:
    """The gauges' values: ``(rubric, dimension, model) -> value`` per gauge."""

    kappa: dict[tuple[str, str, str], float] = field(default_factory=dict)
    reliability: dict[tuple[str, str], str] = field(default_factory=dict)
    floor: dict[tuple[str, str], float] = field(default_factory=dict)
    drift: dict[str, dict[tuple[str, str, str], float]] = field(
        default_factory=lambda: {key: {} for key in _DRIFT}
    )
    canary_last_run: dict[str, float] = field(default_factory=dict)
    canary_interval: dict[tuple[str, str], float] = field(default_factory=dict)


def _latest(runs: Iterable[StoredRun]) -> dict[str, StoredRun]:
    out: dict[str, StoredRun] = {}
    for run in runs:
        if run.rubric not in out or run.finished_at > out[run.rubric].finished_at:
            out[run.rubric] = run
    return out


def gauges_from_runs(runs: list[StoredRun], canaries: Iterable[StoredCanary] = ()) -> RunGauges:
    """The gauges of the latest runs per rubric and of the enabled ``canaries`` (see the
    module docstring)."""
    gauges = RunGauges()
    for canary in canaries:
        gauges.canary_interval[(canary.rubric, canary.id)] = canary.interval_s
    for rubric, run in _latest(runs).items():
        for dim_id, dim in run.report.dimensions.items():
            for rater in dim.raters:
                if rater.agreement is not None:
                    gauges.kappa[(rubric, dim_id, rater.rater)] = float(rater.agreement)
            experts = dim.expert_expert.median if dim.expert_expert else None
            if experts is not None:
                gauges.kappa[(rubric, dim_id, "experts")] = float(experts)
    for rubric, run in _latest(r for r in runs if not r.canary).items():
        for dim_id, dim in run.report.calibrated().items():
            if dim.flag is not None:
                gauges.reliability[(rubric, dim_id)] = dim.flag.level
                gauges.floor[(rubric, dim_id)] = dim.flag.floor
    for rubric, run in _latest(r for r in runs if r.canary).items():
        gauges.canary_last_run[rubric] = run.finished_at.timestamp()
        for dim_id, raters in (run.report.drift or {}).items():
            for name, drift in raters.items():
                for key, series in gauges.drift.items():
                    value = _DRIFT[key][2](drift)
                    if value is not None:
                        series[(rubric, dim_id, name)] = float(value)
    return gauges


def families(gauges: RunGauges) -> list[GaugeMetricFamily]:
    """The Prometheus metric families of ``gauges`` (every name, even when empty)."""
    from prometheus_client.core import GaugeMetricFamily

    kappa = GaugeMetricFamily(
        KAPPA, "Latest calibration agreement with experts (weighted kappa)", labels=DIM_LABELS
    )
    for labels, value in sorted(gauges.kappa.items()):
        kappa.add_metric(labels, value)
    level = GaugeMetricFamily(
        RELIABILITY,
        "1 for the reliability flag level of the latest calibration, 0 for the other levels",
        labels=("rubric", "dimension", "level"),
    )
    for (rubric, dim_id), current in sorted(gauges.reliability.items()):
        for name in LEVELS:
            level.add_metric((rubric, dim_id, name), 1.0 if name == current else 0.0)
    floor = GaugeMetricFamily(
        FLOOR,
        "Kappa floor of the reliability flag in the latest calibration (the rubric's policy)",
        labels=("rubric", "dimension"),
    )
    for dim_labels, value in sorted(gauges.floor.items()):
        floor.add_metric(dim_labels, value)
    out = [kappa, level, floor]
    for key, (name, doc, _) in _DRIFT.items():
        drift = GaugeMetricFamily(name, doc, labels=DIM_LABELS)
        for labels, value in sorted(gauges.drift[key].items()):
            drift.add_metric(labels, value)
        out.append(drift)
    last = GaugeMetricFamily(
        CANARY_LAST_RUN, "Unix time of the last finished canary run", labels=("rubric",)
    )
    for rubric, stamp in sorted(gauges.canary_last_run.items()):
        last.add_metric((rubric,), stamp)
    interval = GaugeMetricFamily(
        CANARY_INTERVAL, "Interval between an enabled canary's runs", labels=("rubric", "canary")
    )
    for canary_labels, seconds in sorted(gauges.canary_interval.items()):
        interval.add_metric(canary_labels, seconds)
    out += [last, interval]
    return out


class RunGaugeCollector:
    """A ``prometheus_client`` collector of :func:`families`, read from ``database_url``.

    The read runs in a thread of its own (a scrape may come from inside an event loop) with
    its own event loop and engine; a failed read is logged and the last values are served.
    """

    def __init__(self, database_url: str, ttl_s: float = DEFAULT_TTL_S) -> None:
        self.database_url = database_url
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._gauges = RunGauges()
        self._read_at: float | None = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="run-gauges")

    def describe(self) -> list[GaugeMetricFamily]:
        return families(RunGauges())

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            now = time.monotonic()
            if self._read_at is None or now - self._read_at >= self.ttl_s:
                self._refresh()
                self._read_at = now
            gauges = self._gauges
        yield from families(gauges)

    def _refresh(self) -> None:
        future = self._pool.submit(asyncio.run, read_latest_runs(self.database_url))
        try:
            latest = future.result(timeout=READ_TIMEOUT_S)
            self._gauges = gauges_from_runs(latest.runs, latest.canaries)
        except Exception as exc:  # a scrape must answer: keep the last values
            log.warning("run gauges: cannot read the latest runs: %r", exc)
