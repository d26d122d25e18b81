"""The fields of the batch progress bar (judge/cli/batch.py): rate since the first state
seen, time left at that rate, and the cost so far, on a controlled clock."""

from __future__ import annotations

from typing import Any

import pytest

from judge.cli import batch
from judge.domain.wire import BatchView


def view(done: int, total: int = 80, cost: float = 0.0) -> BatchView:
    return BatchView.model_validate(
        {
            "id": "b" * 32, "status": "running" if done < total else "completed",
            "rubric": {"id": "epitome", "version": "1", "hash": "h"}, "panel_name": "p",
            "total": total, "queued": total - done, "running": 0, "completed": done,
            "failed": 0, "rejected": 0, "rejections": [], "created_at": "now",
            "results": "/r", "cost_usd": cost,
        }
    )  # fmt: skip


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(batch.time, "monotonic", lambda: now[0])
    return now


def test_rate_eta_and_cost(clock: list[float]) -> None:
    pace = batch._Pace(view(10))
    assert pace.fields(view(10)) == {"rate": "-/s", "eta": "eta -:--:--", "cost": "$0.0000"}
    clock[0] = 110.0
    fields: dict[str, Any] = pace.fields(view(30, cost=0.01234))
    # 20 items in 10 s: 2 per second; 50 left -> 25 s
    assert fields == {"rate": "2.0/s", "eta": "eta 0:00:25", "cost": "$0.0123"}
    clock[0] = 135.0
    assert pace.fields(view(80))["eta"] == "eta 0:00:00"


def test_a_batch_done_before_watching_has_no_rate(clock: list[float]) -> None:
    pace = batch._Pace(view(80))
    clock[0] = 101.0
    assert pace.fields(view(80)) == {"rate": "-/s", "eta": "eta 0:00:00", "cost": "$0.0000"}
