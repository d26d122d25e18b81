"""A run's report is computed once per process however many callers ask for it together."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from judge.services.runs import BatchRuns


class SlowReports(BatchRuns[Any]):
    """``finalize`` takes until ``release`` is set and counts how often it began."""

    def __init__(self) -> None:
        self.began: list[str] = []
        self.release = asyncio.Event()
        self.fail = False

    async def finalize(self, run_id: str) -> bool:
        self.began.append(run_id)
        await self.release.wait()
        if self.fail:
            raise RuntimeError("report failed")
        return True


def test_callers_arriving_while_a_report_is_computed_do_not_compute_it_again() -> None:
    async def scenario() -> list[str]:
        service = SlowReports()
        first = asyncio.create_task(service.finalize_once("run-a"))
        await asyncio.sleep(0)  # the first caller is computing
        others = [asyncio.create_task(service.finalize_once("run-a")) for _ in range(4)]
        other_run = asyncio.create_task(service.finalize_once("run-b"))
        await asyncio.gather(*others)  # they return at once, without computing
        service.release.set()
        await asyncio.gather(first, other_run)
        await service.finalize_once("run-a")  # a later caller computes again (none stored)
        return service.began

    assert asyncio.run(scenario()) == ["run-a", "run-b", "run-a"]


def test_a_failed_computation_lets_the_next_caller_try() -> None:
    async def scenario() -> list[str]:
        service = SlowReports()
        service.fail = True
        service.release.set()
        with pytest.raises(RuntimeError):
            await service.finalize_once("run-a")
        service.fail = False
        await service.finalize_once("run-a")
        return service.began

    assert asyncio.run(scenario()) == ["run-a", "run-a"]
