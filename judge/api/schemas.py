"""OpenAPI responses of the routes; the response models live in :mod:`judge.domain.wire`
(shared with :mod:`judge.client`, which must not import the API layer)."""

from __future__ import annotations

from typing import Any

from litestar.openapi.datastructures import ResponseSpec

from judge.domain.wire import PROBLEM_JSON, Problem

#: What any route can answer besides its own statuses (429: a key's request rate, counted
#: when the key is checked).
COMMON_ERRORS = (400, 401, 403, 422, 429, 503)
#: the statuses only a caller with an API key can get
_KEYED = (401, 403, 429)
_DESCRIPTIONS = {
    400: "The request could not be read",
    401: "No valid API key",
    403: "The API key lacks the route's scope",
    404: "No such resource",
    409: "The resource is not ready for this",
    413: "The body (or the batch) is too large",
    422: "Invalid input; `field` names it",
    429: "Over a quota or rate limit; retry after `Retry-After` seconds",
    503: "A dependency (database, Redis) or the configuration is not usable",
}


def responses(
    success: dict[int, Any],
    *errors: int,
    media_type: str = "application/json",
    public: bool = False,
) -> dict[int, ResponseSpec]:
    """OpenAPI responses of a route: ``success`` maps status codes to the model of the body;
    every other status (``errors`` plus :data:`COMMON_ERRORS`, without 401 and 403 on a
    ``public`` route) has a :class:`Problem` body."""
    specs = {
        status: ResponseSpec(
            data_container=model,
            media_type=media_type,
            description="Success" if status < 300 else _DESCRIPTIONS.get(status, "Error"),
            generate_examples=False,
        )
        for status, model in success.items()
    }
    common = [s for s in COMMON_ERRORS if not (public and s in _KEYED)]
    for status in sorted({*errors, *common} - set(specs)):
        specs[status] = ResponseSpec(
            data_container=Problem,
            media_type=PROBLEM_JSON,
            description=_DESCRIPTIONS.get(status, "Error"),
            generate_examples=False,
        )
    return specs
