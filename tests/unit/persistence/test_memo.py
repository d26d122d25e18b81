"""TtlMemo: callers asking together share one load; an answer is kept for its time; after
``forget`` nothing older is served, not even a load that was under way."""

from __future__ import annotations

import asyncio

from judge.persistence.memo import TtlMemo


class Loader:
    def __init__(self) -> None:
        self.calls = 0
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> int:
        self.calls += 1
        await self.release.wait()
        return self.calls


def test_callers_asking_together_share_one_load() -> None:
    async def run() -> tuple[list[int], int]:
        memo: TtlMemo[str, int] = TtlMemo(60)
        load = Loader()
        answers = await asyncio.gather(*(memo.get("k", load) for _ in range(10)))
        again = await memo.get("k", load)  # remembered
        return [*answers, again], load.calls

    answers, calls = asyncio.run(run())
    assert answers == [1] * 11
    assert calls == 1


def test_an_expired_answer_is_loaded_again() -> None:
    async def run() -> list[int]:
        memo: TtlMemo[str, int] = TtlMemo(0)
        load = Loader()
        return [await memo.get("k", load), await memo.get("k", load)]

    assert asyncio.run(run()) == [1, 2]


def test_a_load_under_way_when_forgotten_is_not_remembered() -> None:
    async def run() -> list[int]:
        memo: TtlMemo[str, int] = TtlMemo(60)
        load = Loader()
        load.release.clear()
        first = asyncio.ensure_future(memo.get("k", load))
        while not load.calls:
            await asyncio.sleep(0)
        memo.forget()  # e.g. a calibration just completed
        load.release.set()
        return [await first, await memo.get("k", load)]

    assert asyncio.run(run()) == [1, 2]


def test_a_failed_load_is_not_remembered() -> None:
    calls = 0

    async def flaky() -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("database away")
        return calls

    async def run() -> list[int | str]:
        memo: TtlMemo[str, int] = TtlMemo(60)
        outcomes: list[int | str] = []
        try:
            outcomes.append(await memo.get("k", flaky))
        except ConnectionError as exc:
            outcomes.append(str(exc))
        outcomes.append(await memo.get("k", flaky))
        return outcomes

    assert asyncio.run(run()) == ["database away", 2]


def test_past_its_limit_the_memory_starts_again() -> None:
    async def run() -> list[int]:
        memo: TtlMemo[str, int] = TtlMemo(float("inf"), limit=2)
        load = Loader()
        answers = [await memo.get(key, load) for key in ("a", "b", "a", "c", "a")]
        return [*answers, load.calls]

    # "c" finds two answers remembered: they are cleared, so "a" is loaded again
    assert asyncio.run(run()) == [1, 2, 1, 3, 4, 4]
