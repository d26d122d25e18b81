"""``Idempotency-Key`` on POST /v1/scores and POST /v1/batches: a retry with the same key (by
the same API key, with the same request) returns the first submission instead of creating
another; the same key with a different request is a 422."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from litestar import Request

from judge.api.auth import principal
from judge.api.problems import ProblemError
from judge.api.state import ApiState
from judge.services.idempotency import Submission, find_submission

HEADER = "Idempotency-Key"
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def digest(*parts: bytes | str | None) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else (part or b"")
        hasher.update(len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


async def submit_once(
    state: ApiState,
    request: Request[Any, Any, Any],
    route: str,
    request_digest: str,
    submit: Callable[[Submission | None], Awaitable[str]],
) -> tuple[str, bool]:
    """(resource id, replayed): ``submit`` is called with the submission to record along
    with what it creates, unless a live record of this key exists already."""
    key = request.headers.get(HEADER)
    if key is None:
        return await submit(None), False
    if not _KEY.match(key):
        raise ProblemError(
            422, "must be 1 to 255 visible ASCII characters", field=f"header.{HEADER}"
        )
    submission = Submission(principal(request).owner, route, key, request_digest)
    database, ttl = state.runtime.database, state.runtime.settings.api.idempotency_ttl_s
    found = await find_submission(database, submission, ttl_s=ttl)
    if found is None:
        try:
            return await submit(submission), False
        except Exception:
            found = await find_submission(database, submission, ttl_s=ttl)
            if found is None:
                raise
            # a concurrent request with this key committed first: answer with its resource
    resource_id, first_digest = found
    if first_digest != request_digest:
        raise ProblemError(
            422,
            f"this {HEADER} was used for a different request; use a new key",
            field=f"header.{HEADER}",
        )
    return resource_id, True
