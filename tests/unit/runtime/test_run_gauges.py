"""Calibration, reliability and drift gauges from the stored runs (judge/runtime/run_gauges.py):
which run each gauge follows, the exposition, and the collector's cache on a migrated SQLite
file."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from judge.domain.calibration_report import CalibrationReport
from judge.persistence.database import Database
from judge.persistence.latest_runs import StoredRun
from judge.persistence.tables import CalibrationRun, Canary
from judge.runtime.run_gauges import NAMES, RunGaugeCollector, families, gauges_from_runs
from tests.fixtures.stored_reports import Level, stored_report

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def report(
    kappa: float, level: Level, drift: float | None = None, floor: float = 0.40
) -> CalibrationReport:
    return stored_report(
        {"warmth": {"m/a": kappa, "panel": kappa - 0.1, "m/b": None}},
        level,
        uncalibrated=["not_calibrated"],
        drift=(
            {"warmth": {"m/a": {"kappa_delta": drift, "mean_shift": 0.2, "abstention_delta": None}}}
            if drift is not None
            else None
        ),
        floor=floor,
    )


def scrape(gauges_collector: Any) -> dict[str, float]:
    registry = CollectorRegistry()
    registry.register(gauges_collector)
    text = generate_latest(registry).decode()
    return {
        s.name + json.dumps(s.labels, sort_keys=True): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


class Fixed:
    def __init__(self, runs: list[StoredRun]) -> None:
        self.runs = runs

    def collect(self) -> Any:
        return families(gauges_from_runs(self.runs))


KAPPA_A = 'judge_calibration_kappa{"dimension": "warmth", "model": "m/a", "rubric": "r"}'


def test_each_gauge_follows_its_latest_run() -> None:
    runs = [
        StoredRun("r", T0, False, report(0.50, "untrusted")),
        StoredRun("r", T0 + timedelta(hours=1), False, report(0.70, "trusted", floor=0.5)),
        StoredRun("r", T0 + timedelta(hours=2), True, report(0.40, "caution", drift=-0.3)),
        StoredRun("r", T0 + timedelta(minutes=30), True, report(0.9, "trusted", drift=0.5)),
        StoredRun("other", T0, False, report(0.33, "caution")),
    ]
    values = scrape(Fixed(runs))
    # kappa: the latest run of any kind (a canary run shows a drifting judge's kappa)
    assert values[KAPPA_A] == pytest.approx(0.40)
    panel = KAPPA_A.replace('"m/a"', '"panel"')
    assert values[panel] == pytest.approx(0.30)
    assert values[KAPPA_A.replace('"m/a"', '"experts"')] == pytest.approx(0.62)
    assert KAPPA_A.replace('"m/a"', '"m/b"') not in values  # no agreement: no sample
    assert values[KAPPA_A.replace('"r"', '"other"')] == pytest.approx(0.33)
    # reliability: the latest calibration that is not a canary run, one-hot over the levels
    level = 'judge_reliability_level{"dimension": "warmth", "level": "%s", "rubric": "r"}'
    assert [values[level % name] for name in ("trusted", "caution", "untrusted")] == [1, 0, 0]
    assert not [k for k in values if "not_calibrated" in k]
    # the floor: that of the same calibration's flags (the rubric's configured policy)
    floor = 'judge_reliability_floor_kappa{"dimension": "warmth", "rubric": "%s"}'
    assert values[floor % "r"] == pytest.approx(0.5)
    assert values[floor % "other"] == pytest.approx(0.40)
    # drift and the canary's time: the latest canary run
    drift = KAPPA_A.replace("judge_calibration_kappa", "judge_drift_kappa_delta")
    assert values[drift] == pytest.approx(-0.3)
    shift = KAPPA_A.replace("judge_calibration_kappa", "judge_drift_mean_score_shift")
    assert values[shift] == pytest.approx(0.2)
    assert not [k for k in values if k.startswith("judge_drift_abstention_rate_delta")]
    stamp = values['judge_canary_last_run_timestamp_seconds{"rubric": "r"}']
    assert stamp == (T0 + timedelta(hours=2)).timestamp()
    assert 'judge_canary_last_run_timestamp_seconds{"rubric": "other"}' not in values
    assert not [k for k in values if k.startswith("judge_canary_interval_seconds")]


def test_every_name_is_described_even_without_runs() -> None:
    described = {f.name for f in families(gauges_from_runs([]))}
    assert described == set(NAMES)


# -- the collector on a database ---------------------------------------------------------------
def _store(
    url: str, run_id: str, finished: datetime, body: CalibrationReport, canary: bool
) -> None:
    async def run() -> None:
        database = Database(url)
        try:
            async with database.session() as session:
                canary_id = None
                if canary:
                    canary_id = "c" * 32
                    if await session.get(Canary, canary_id) is None:
                        session.add(
                            Canary(
                                id=canary_id,
                                name="c",
                                rubric_id="r",
                                panel_name="p",
                                baseline_run_id="a" * 32,
                                interval_s=60,
                            )
                        )
                        await session.flush()
                session.add(
                    CalibrationRun(
                        id=run_id,
                        rubric_id="r",
                        rubric_version="1",
                        rubric_hash="h",
                        panel_name="p",
                        panel_signature="s",
                        status="completed",
                        canary_id=canary_id,
                        report_json=body.model_dump_json(),
                        finished_at=finished,
                    )
                )
                await session.commit()
        finally:
            await database.dispose()

    asyncio.run(run())


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}"

    async def migrate() -> None:
        database = Database(url)
        try:
            await database.upgrade()
        finally:
            await database.dispose()

    asyncio.run(migrate())
    return url


def test_collector_reads_the_database_and_caches_it(database_url: str) -> None:
    _store(database_url, "a" * 32, T0, report(0.5, "caution"), canary=False)
    collector = RunGaugeCollector(database_url, ttl_s=3600)
    assert scrape(collector)[KAPPA_A] == pytest.approx(0.5)
    _store(database_url, "b" * 32, T0 + timedelta(hours=1), report(0.8, "trusted", -0.1), True)
    assert scrape(collector)[KAPPA_A] == pytest.approx(0.5)  # cached
    fresh = scrape(RunGaugeCollector(database_url, ttl_s=0))
    assert fresh[KAPPA_A] == pytest.approx(0.8)
    assert fresh[KAPPA_A.replace("calibration_kappa", "drift_kappa_delta")] == pytest.approx(-0.1)
    interval = 'judge_canary_interval_seconds{"canary": "%s", "rubric": "r"}' % ("c" * 32)
    assert fresh[interval] == 60
    _disable_canaries(database_url)
    assert not [k for k in scrape(RunGaugeCollector(database_url, ttl_s=0)) if "interval" in k]


def _disable_canaries(url: str) -> None:
    async def run() -> None:
        database = Database(url)
        try:
            async with database.session() as session:
                for canary in (await session.execute(select(Canary))).scalars():
                    canary.enabled = False
                await session.commit()
        finally:
            await database.dispose()

    asyncio.run(run())


def test_a_failed_read_serves_the_last_values(
    database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _store(database_url, "a" * 32, T0, report(0.5, "caution"), canary=False)
    collector = RunGaugeCollector(database_url, ttl_s=0)
    assert scrape(collector)[KAPPA_A] == pytest.approx(0.5)
    collector.database_url = f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'no.db'}"
    assert scrape(collector)[KAPPA_A] == pytest.approx(0.5)
    assert "cannot read the latest runs" in caplog.text
