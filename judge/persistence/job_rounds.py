"""The job path's writes in rounds (:mod:`judge.persistence.rounds`): the jobs that runners
claim together are claimed by one statement, and the results that finish together are stored
in one transaction (a group commit).

A result is acknowledged (its run returns, the job's message is acked, waiters are woken)
only once its round has committed, so a round lost to a crash loses nothing that was
reported: those jobs are still running under a lease and are claimed again when it lapses.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TypeVar

from judge.persistence.database import Database, is_unavailable
from judge.persistence.jobs import BUSY, Claim, Finished, claim_jobs, finish_jobs
from judge.persistence.rounds import Rounds

__all__ = ["JobRounds"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class JobRounds:
    """Claims and finishes of one process's jobs, each kind gathered into rounds."""

    def __init__(self, database: Database, *, lease_s: float, max_attempts: int) -> None:
        self._db = database
        self._lease_s = lease_s
        self._max_attempts = max_attempts
        self._claims: Rounds[str, Claim] = Rounds(self._claim_round)
        self._finishes: Rounds[Finished, bool] = Rounds(self._finish_round)

    async def claim(self, job_id: str) -> Claim:
        """Claim one job (see :func:`~judge.persistence.jobs.claim_jobs`), with the others
        claimed meanwhile."""
        return await self._claims.submit(job_id)

    async def finish(self, finished: Finished) -> bool:
        """Store one job's result, once committed; False if the job was already finished."""
        return await self._finishes.submit(finished)

    async def _claim_round(self, job_ids: Sequence[str]) -> list[Claim]:
        async with self._db.session() as session:
            claims = await claim_jobs(
                session,
                list(dict.fromkeys(job_ids)),
                lease_s=self._lease_s,
                max_attempts=self._max_attempts,
            )
        return _first_takes_it(job_ids, claims, Claim(BUSY, None))

    async def _finish_round(self, finished: Sequence[Finished]) -> list[bool | BaseException]:
        try:
            async with self._db.session() as session:
                done = await finish_jobs(session, _unique(finished))
        except Exception as exc:
            if is_unavailable(exc) or len(finished) == 1:
                raise
            # a value the database refuses fails its own job only: each alone, then
            log.warning("a round of %d results failed (%r); storing each alone", len(finished), exc)
            return [await self._finish_alone(f) for f in finished]
        return _first_takes_it([f.job_id for f in finished], dict.fromkeys(done, True), False)

    async def _finish_alone(self, finished: Finished) -> bool | BaseException:
        try:
            async with self._db.session() as session:
                return finished.job_id in await finish_jobs(session, [finished])
        except Exception as exc:
            return exc


def _unique(finished: Sequence[Finished]) -> list[Finished]:
    """One result per job (the first): a job reported twice in a round is stored once."""
    first: dict[str, Finished] = {}
    for f in finished:
        first.setdefault(f.job_id, f)
    return list(first.values())


def _first_takes_it(job_ids: Sequence[str], found: dict[str, T], otherwise: T) -> list[T]:
    """Per request, in order: what ``found`` says for its job, to the first request of each
    job; a later request of the same job in the round gets ``otherwise`` (it lost the race)."""
    seen: set[str] = set()
    answers = []
    for job_id in job_ids:
        answers.append(found.get(job_id, otherwise) if job_id not in seen else otherwise)
        seen.add(job_id)
    return answers
