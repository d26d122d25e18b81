"""Rounds: requests made together are answered by one handler call; requests made while a
round runs form the next one; each caller gets its own answer or its own error."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from judge.persistence.rounds import Rounds


class Recorder:
    """A handler that doubles numbers, refuses negative ones and records its rounds; it
    holds each round until ``release`` is set."""

    def __init__(self) -> None:
        self.rounds: list[list[int]] = []
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self, requests: Sequence[int]) -> list[int | BaseException]:
        self.rounds.append(list(requests))
        await self.release.wait()
        return [ValueError(f"negative: {n}") if n < 0 else n * 2 for n in requests]


def test_requests_of_one_loop_turn_share_a_round() -> None:
    async def run() -> tuple[list[int], list[list[int]]]:
        handler = Recorder()
        rounds: Rounds[int, int] = Rounds(handler)
        answers = await asyncio.gather(*(rounds.submit(n) for n in range(5)))
        return answers, handler.rounds

    answers, seen = asyncio.run(run())
    assert answers == [0, 2, 4, 6, 8]
    assert seen == [[0, 1, 2, 3, 4]]


def test_requests_made_during_a_round_form_the_next_one() -> None:
    async def run() -> tuple[list[int], list[list[int]]]:
        handler = Recorder()
        handler.release.clear()
        rounds: Rounds[int, int] = Rounds(handler)
        first = asyncio.ensure_future(rounds.submit(1))
        while not handler.rounds:  # the first round is being written
            await asyncio.sleep(0)
        later = [asyncio.ensure_future(rounds.submit(n)) for n in (2, 3, 4)]
        await asyncio.sleep(0)
        handler.release.set()
        return [await first, *[await f for f in later]], handler.rounds

    answers, seen = asyncio.run(run())
    assert answers == [2, 4, 6, 8]
    assert seen == [[1], [2, 3, 4]]


def test_an_error_for_one_request_reaches_its_caller_alone() -> None:
    async def run() -> list[int | BaseException]:
        rounds: Rounds[int, int] = Rounds(Recorder())
        return await asyncio.gather(*(rounds.submit(n) for n in (1, -1, 2)), return_exceptions=True)

    good, bad, other = asyncio.run(run())
    assert (good, other) == (2, 4)
    assert isinstance(bad, ValueError)


def test_a_failed_round_fails_its_callers_and_the_next_round_runs() -> None:
    calls: list[list[int]] = []

    async def flaky(requests: Sequence[int]) -> list[int | BaseException]:
        calls.append(list(requests))
        if len(calls) == 1:
            raise ConnectionError("the database went away")
        return list(requests)

    async def run() -> tuple[list[int | BaseException], int]:
        rounds: Rounds[int, int] = Rounds(flaky)
        failed = list(
            await asyncio.gather(rounds.submit(1), rounds.submit(2), return_exceptions=True)
        )
        return failed, await rounds.submit(3)

    failed, after = asyncio.run(run())
    assert all(isinstance(e, ConnectionError) for e in failed)
    assert after == 3


def test_a_round_holds_at_most_its_limit() -> None:
    async def run() -> list[list[int]]:
        handler = Recorder()
        rounds: Rounds[int, int] = Rounds(handler, limit=2)
        await asyncio.gather(*(rounds.submit(n) for n in range(5)))
        return handler.rounds

    assert asyncio.run(run()) == [[0, 1], [2, 3], [4]]


def test_rounds_survive_a_new_event_loop() -> None:
    rounds: Rounds[int, int] = Rounds(Recorder())
    assert [asyncio.run(rounds.submit(n)) for n in (1, 2)] == [2, 4]
