"""Group many callers' small writes into rounds: one statement, one transaction, for all.

A caller :meth:`Rounds.submit`\\ s one request and awaits its own answer. Requests made while
no round runs wait for the end of the current event-loop turn (the judges and items that
finished together join); requests made while a round runs form the next round. So the window
is the previous round's own duration: nothing waits on an idle service (a single item pays no
timer), and rounds grow with the load (a group commit, as databases do for their log).

Hand-written, not ``aiodataloader``: a data loader batches one loop turn's loads only, with
no "the next round gathers while this one writes", which is what grows the rounds under load;
and it is not in the lock. About forty lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Request = TypeVar("Request")
Answer = TypeVar("Answer")

#: a round: its requests in, one answer (or the exception for that request) per request out
Handler = Callable[[Sequence[Request]], Awaitable[Sequence[Answer | BaseException]]]


class Rounds(Generic[Request, Answer]):
    """Requests answered round by round by ``handler``, at most ``limit`` per round.

    The handler answers every request of its round (an exception is an answer: it is raised
    to that request's caller alone); if the handler itself raises, every caller of the round
    gets the error. A caller that stops waiting (cancelled) does not stop its round."""

    def __init__(self, handler: Handler[Request, Answer], *, limit: int = 500) -> None:
        self._handler = handler
        self._limit = limit
        self._pending: list[tuple[Request, asyncio.Future[Answer]]] = []
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def submit(self, request: Request) -> Answer:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # used from a new loop (a new asyncio.run): start afresh
            self._loop, self._pending, self._task = loop, [], None
        future: asyncio.Future[Answer] = loop.create_future()
        self._pending.append((request, future))
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # the rest of this loop turn joins the first round
        while self._pending:
            batch, self._pending = self._pending[: self._limit], self._pending[self._limit :]
            try:
                answers: Sequence[Answer | BaseException] = await self._handler(
                    [request for request, _ in batch]
                )
            except asyncio.CancelledError:  # the loop is closing: no caller waits forever
                for _, future in batch + self._pending:
                    future.cancel()
                raise
            except Exception as exc:  # the round failed as a whole: each caller sees why
                answers = [exc] * len(batch)
            for (_, future), answer in zip(batch, answers, strict=True):
                if future.done():
                    continue
                if isinstance(answer, BaseException):
                    future.set_exception(answer)
                else:
                    future.set_result(answer)
