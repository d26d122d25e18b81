"""The latest completed calibration runs per rubric and the enabled canaries, read for the
run gauges (:mod:`judge.runtime.run_gauges`) from a short-lived engine of their own: the gauges
are read at scrape time, in a thread with its own event loop, outside any service runtime."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool
from sqlmodel import col

from judge.domain.calibration_report import CalibrationReport
from judge.persistence.database import missing_sqlite_file, normalise_url
from judge.persistence.tables import CalibrationRun, Canary

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredRun:
    """What the gauges need of one completed calibration run."""

    rubric: str
    finished_at: datetime
    canary: bool
    report: CalibrationReport


@dataclass(frozen=True)
class StoredCanary:
    """What the gauges need of one enabled canary: its schedule."""

    rubric: str
    id: str
    interval_s: float


@dataclass(frozen=True)
class LatestRuns:
    runs: list[StoredRun]
    canaries: list[StoredCanary]


def _require_sqlite_file(url: str) -> None:
    """A gauge read never creates a database: a SQLite file that is not there is an error
    (raised before aiosqlite starts a thread, which would outlive a failed connect)."""
    missing = missing_sqlite_file(url)
    if missing is not None:
        raise FileNotFoundError(f"no SQLite database at {missing}")


async def read_latest_runs(database_url: str) -> LatestRuns:
    """The latest completed run per rubric, overall, non-canary and canary (at most three
    reports per rubric are read), and the enabled canaries, from a short-lived engine of its
    own."""
    url = normalise_url(database_url)
    _require_sqlite_file(url)
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                select(
                    col(CalibrationRun.id),
                    col(CalibrationRun.rubric_id),
                    col(CalibrationRun.canary_id),
                    col(CalibrationRun.finished_at),
                ).where(
                    col(CalibrationRun.status) == "completed",
                    col(CalibrationRun.finished_at).is_not(None),
                )
            )
            index = [(r.id, r.rubric_id, r.canary_id is not None, r.finished_at) for r in rows]
            wanted = _wanted(index)
            reports = await connection.execute(
                select(col(CalibrationRun.id), col(CalibrationRun.report_json)).where(
                    col(CalibrationRun.id).in_(wanted)
                )
            )
            texts = {r.id: r.report_json for r in reports}
            schedules = await connection.execute(
                select(col(Canary.rubric_id), col(Canary.id), col(Canary.interval_s)).where(
                    col(Canary.enabled)
                )
            )
            canaries = [StoredCanary(*row) for row in schedules]
    finally:
        await engine.dispose()
    runs = []
    for run_id, rubric, canary, finished in index:
        text = texts.get(run_id)
        report = _parsed(run_id, text) if text else None
        if report is not None:
            runs.append(StoredRun(rubric, finished, canary, report))
    return LatestRuns(runs, canaries)


def _parsed(run_id: str, text: str) -> CalibrationReport | None:
    """A stored report; None (logged as an error) when it is not one, so that one bad run does
    not stop the gauges of every other."""
    try:
        return CalibrationReport.model_validate_json(text)
    except ValidationError as exc:
        log.error("calibration run %s: its stored report does not validate: %s", run_id, exc)
        return None


def _wanted(index: list[tuple[str, str, bool, datetime]]) -> set[str]:
    best: dict[tuple[str, str], tuple[datetime, str]] = {}
    for run_id, rubric, canary, finished in index:
        for kind in ("any", "canary" if canary else "calibration"):
            key = (rubric, kind)
            if key not in best or finished > best[key][0]:
                best[key] = (finished, run_id)
    return {run_id for _, run_id in best.values()}
