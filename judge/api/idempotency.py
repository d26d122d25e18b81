"""``Idempotency-Key`` on POST /v1/scores and POST /v1/batches: a retry with the same key (by
the same API key, with the same request) returns the first submission instead of creating
another; the same key with a different request is a 422 (see
:func:`judge.services.submission.submit_and_wait`). Here: reading the header, and the digest
that tells requests apart."""

from __future__ import annotations

import hashlib
from typing import Any

from litestar import Request

from judge.services.idempotency import IdempotencyKey

HEADER = "Idempotency-Key"


def digest(*parts: bytes | str | None) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else (part or b"")
        hasher.update(len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


def idempotency_key(request: Request[Any, Any, Any], request_digest: str) -> IdempotencyKey | None:
    """The request's ``Idempotency-Key`` (None without one), with the request's digest."""
    key = request.headers.get(HEADER)
    return None if key is None else IdempotencyKey(key, request_digest)
