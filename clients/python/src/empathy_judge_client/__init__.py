"""A Python client for a running empathy-judge server (``judge serve``).

>>> from empathy_judge_client import JudgeClient
>>> with JudgeClient("http://127.0.0.1:8000") as judge:  # doctest: +SKIP
...     result = judge.score("epitome", {"seeker": "...", "response": "..."}, wait=30)

:class:`JudgeClient` blocks, :class:`AsyncJudgeClient` awaits; both retry 429 and 503 answers
as ``Retry-After`` says and raise problem details as :mod:`empathy_judge_client.errors` exceptions.
Results are the wire models of :mod:`empathy_judge_client.wire` (the API's OpenAPI schemas).
"""

from empathy_judge_client.aio import AsyncBatchHandle, AsyncJudgeClient
from empathy_judge_client.errors import (
    InvalidInput,
    JudgeClientError,
    NotFound,
    ProblemError,
    ServerUnreachable,
    WaitTimeout,
)
from empathy_judge_client.sync import BatchHandle, JudgeClient

__all__ = [
    "AsyncBatchHandle",
    "AsyncJudgeClient",
    "BatchHandle",
    "InvalidInput",
    "JudgeClient",
    "JudgeClientError",
    "NotFound",
    "ProblemError",
    "ServerUnreachable",
    "WaitTimeout",
]
